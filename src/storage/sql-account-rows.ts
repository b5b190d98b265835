/**
 * The rows of the sign-in tables both SQL backends share (accounts, sessions,
 * oauth_clients, grants, grant_secrets; see access/accounts/port.ts and access/oauth/port.ts), the columns they are read
 * and written by, and how a record becomes a row's values and back. As with tokens, the
 * one difference between the backends is grants.read_only and grants.review: booleans in PostgreSQL, 0 or
 * 1 in SQLite. A client's redirect URIs are kept as a JSON array in a text column.
 */

import type { AccountRecord, SessionRecord } from '../access/accounts/port.js';
import type { ClientRecord, GrantRecord, GrantSecretKind, GrantSecretRecord } from '../access/oauth/port.js';

/** The columns of each table, in the order of its row and of its values. */
export const ACCOUNT_COLUMNS = 'user_id, password_hash, created, updated';
export const SESSION_COLUMNS = 'id, hash, user_id, agent, created, expires, last_used';
export const CLIENT_COLUMNS = 'id, name, redirect_uris, created, metadata';
export const GRANT_COLUMNS = 'id, user_id, client_id, client_name, read_only, resource, created, last_used, review';
export const SECRET_COLUMNS = 'hash, grant_id, kind, created, expires, used, data';

export interface AccountRow {
  user_id: string;
  password_hash: string | null;
  created: number;
  updated: number;
}

export interface SessionRow {
  id: string;
  hash: string;
  user_id: string;
  agent: string;
  created: number;
  expires: number;
  last_used: number | null;
}

export interface ClientRow {
  id: string;
  name: string;
  /** A JSON array of strings. */
  redirect_uris: string;
  created: number;
  metadata: string;
}

/** read_only is a boolean here, 0 or 1 (`GrantRow<number>`) in SQLite. */
export interface GrantRow<ReadOnly = boolean> {
  id: string;
  user_id: string;
  client_id: string;
  client_name: string;
  read_only: ReadOnly;
  resource: string;
  created: number;
  last_used: number | null;
  review: ReadOnly;
}

export interface SecretRow {
  hash: string;
  grant_id: string;
  kind: string;
  created: number;
  expires: number;
  used: number | null;
  data: string;
}

export function toAccountRecord(row: AccountRow): AccountRecord {
  return {
    user: row.user_id,
    passwordHash: row.password_hash ?? undefined,
    created: row.created,
    updated: row.updated,
  };
}

export function accountValues(account: AccountRecord): unknown[] {
  return [account.user, account.passwordHash ?? null, account.created, account.updated];
}

export function toSessionRecord(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    hash: row.hash,
    user: row.user_id,
    agent: row.agent,
    created: row.created,
    expires: row.expires,
    lastUsed: row.last_used ?? undefined,
  };
}

export function sessionValues(session: SessionRecord): unknown[] {
  const { id, hash, user, agent, created, expires, lastUsed } = session;
  return [id, hash, user, agent, created, expires, lastUsed ?? null];
}

export function toClientRecord(row: ClientRow): ClientRecord {
  return {
    id: row.id,
    name: row.name,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    created: row.created,
    metadata: row.metadata,
  };
}

export function clientValues(client: ClientRecord): unknown[] {
  return [client.id, client.name, JSON.stringify(client.redirectUris), client.created, client.metadata];
}

/** The grant a row holds, read_only a boolean (PostgreSQL) or 0 or 1 (SQLite). */
export function toGrantRecord(row: GrantRow<boolean | number>): GrantRecord {
  return {
    id: row.id,
    user: row.user_id,
    clientId: row.client_id,
    clientName: row.client_name,
    readOnly: row.read_only === true || row.read_only === 1,
    resource: row.resource,
    created: row.created,
    lastUsed: row.last_used ?? undefined,
    review: row.review === true || row.review === 1,
  };
}

/** The grant's values; its booleans as the backend stores them (SQLite: 0 or 1). */
export function grantValues(
  grant: GrantRecord,
  boolean: (value: boolean) => boolean | number = (value) => value,
): unknown[] {
  const { id, user, clientId, clientName, resource, created, lastUsed } = grant;
  return [
    id,
    user,
    clientId,
    clientName,
    boolean(grant.readOnly),
    resource,
    created,
    lastUsed ?? null,
    boolean(grant.review),
  ];
}

export function toSecretRecord(row: SecretRow): GrantSecretRecord {
  return {
    hash: row.hash,
    grantId: row.grant_id,
    kind: row.kind as GrantSecretKind,
    created: row.created,
    expires: row.expires,
    used: row.used ?? undefined,
    data: row.data,
  };
}

export function secretValues(secret: GrantSecretRecord): unknown[] {
  const { hash, grantId, kind, created, expires, used, data } = secret;
  return [hash, grantId, kind, created, expires, used ?? null, data];
}
