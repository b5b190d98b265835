/**
 * The whole PostgreSQL database as one StoreDump and back, for `engram migrate`: a dump
 * is read in one repeatable-read transaction (one consistent snapshot, while servers keep
 * writing); a load holds every table locked, writes in batches of rows (one statement per
 * batch, the columns passed as arrays) with every id, time and total kept as given, and
 * commits once — the whole dump, or nothing.
 */

import { EngramError } from '../../memory/model/errors.js';
import { searchText } from '../../memory/model/search-words.js';
import type { DumpedEntry, LoadOptions, StoreDump, UserUsage } from '../../memory/port.js';
import { notEmptyError } from '../../memory/port.js';
import { duplicateTokenOf, tokenValues } from '../sql/tokens.js';
import {
  ACCOUNT_COLUMNS,
  type AccountRow,
  accountValues,
  CLIENT_COLUMNS,
  type ClientRow,
  clientValues,
  GRANT_COLUMNS,
  type GrantRow,
  grantValues,
  SECRET_COLUMNS,
  type SecretRow,
  secretValues,
  toAccountRecord,
  toClientRecord,
  toGrantRecord,
  toSecretRecord,
} from '../sql-account-rows.js';
import {
  bodyOf,
  type DumpedEntryRow,
  type RevisionRow,
  TOKEN_COLUMNS,
  type TokenRow,
  toDumpedEntries,
  toTokenRecord,
} from '../sql-rows.js';
import type { Queryable } from './driver.js';
import { postgresDialect } from './sql-database.js';
import { searchVector } from './statements.js';
import type { Runner } from './transaction.js';

/** Rows per INSERT. */
const BATCH = 500;

const SQL = {
  isEmpty: `SELECT NOT EXISTS (SELECT 1 FROM entries) AND NOT EXISTS (SELECT 1 FROM users)
     AND NOT EXISTS (SELECT 1 FROM tokens) AND NOT EXISTS (SELECT 1 FROM accounts)
     AND NOT EXISTS (SELECT 1 FROM oauth_clients) AND NOT EXISTS (SELECT 1 FROM grants) AS empty`,
  snapshot: 'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY',
  entries: `SELECT id, user_id, name, description, ${bodyOf('entries')} AS body, size, created, updated, revision,
       dropped_at, dropped_by
     FROM entries ORDER BY id`,
  revisions:
    'SELECT entry_id, revision, operation, actor, at, description, body FROM revisions ORDER BY entry_id, revision',
  users: `SELECT user_id AS "user", total_bytes AS "totalBytes", entries, history_bytes AS "historyBytes"
     FROM users ORDER BY user_id COLLATE "C"`,
  tokens: `SELECT ${TOKEN_COLUMNS} FROM tokens ORDER BY created, id COLLATE "C"`,
  accounts: `SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY user_id COLLATE "C"`,
  clients: `SELECT ${CLIENT_COLUMNS} FROM oauth_clients ORDER BY created, id COLLATE "C"`,
  grants: `SELECT ${GRANT_COLUMNS} FROM grants ORDER BY created, id COLLATE "C"`,
  grantSecrets: `SELECT ${SECRET_COLUMNS} FROM grant_secrets ORDER BY grant_id COLLATE "C", hash COLLATE "C"`,
  // Servers on the database wait (or time out) until the load commits: none sees half of it.
  lock: `LOCK TABLE users, entries, revisions, tokens, accounts, sessions, oauth_clients, grants, grant_secrets
     IN ACCESS EXCLUSIVE MODE`,
  // Sessions are not dumped: a load ends every one (an empty store may still hold some), and browsers sign in again.
  clear: 'TRUNCATE revisions, entries, users, tokens, accounts, sessions, oauth_clients, grant_secrets, grants',
  // $12, $13, $14: the words of each name, description and body (search-words.ts searchText).
  addEntries: `INSERT INTO entries (id, user_id, name, description, size, body, created, updated, revision, dropped_at,
       dropped_by, search)
     OVERRIDING SYSTEM VALUE SELECT e.id, e.user_id, e.name, e.description, e.size, e.body, e.created, e.updated,
       e.revision, e.dropped_at, e.dropped_by, ${searchVector('e.name_words', 'e.description_words', 'e.body_words')}
     FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::integer[], $6::text[], $7::bigint[],
       $8::bigint[], $9::integer[], $10::bigint[], $11::text[], $12::text[], $13::text[], $14::text[])
       AS e (id, user_id, name, description, size, body, created, updated, revision, dropped_at, dropped_by,
         name_words, description_words, body_words)`,
  addRevisions: `INSERT INTO revisions (user_id, entry_id, revision, operation, actor, at, description, body, in_trash)
     SELECT * FROM unnest($1::text[], $2::bigint[], $3::integer[], $4::text[], $5::text[], $6::bigint[], $7::text[],
       $8::text[], $9::boolean[])`,
  // Each user's change counter goes on past every one it replaces (storage/change-feed.ts): a
  // watcher that knew a counter before the load must not meet the same number again after it.
  lastChange: 'SELECT coalesce(max(changes), 0)::bigint AS changes FROM users',
  addUsers: `INSERT INTO users (user_id, total_bytes, entries, history_bytes, changes)
     SELECT * FROM unnest($1::text[], $2::bigint[], $3::integer[], $4::bigint[], $5::bigint[])`,
  addTokens: `INSERT INTO tokens (${TOKEN_COLUMNS})
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], $5::text[], $6::bigint[], $7::bigint[])`,
  addAccounts: `INSERT INTO accounts (${ACCOUNT_COLUMNS})
     SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])`,
  addClients: `INSERT INTO oauth_clients (${CLIENT_COLUMNS})
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[])`,
  addGrants: `INSERT INTO grants (${GRANT_COLUMNS})
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::text[], $7::bigint[],
       $8::bigint[])`,
  addGrantSecrets: `INSERT INTO grant_secrets (${SECRET_COLUMNS})
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::text[])`,
  // Each body stored once (migrations.ts, step 8): an entry keeps its own only where its latest revision does not hold it.
  bodiesOnce: `UPDATE entries e SET body = NULL FROM revisions r
     WHERE r.user_id = e.user_id AND r.entry_id = e.id AND r.revision = e.revision AND r.body = e.body`,
  // The next entry created is numbered after the highest id loaded.
  renumber: `SELECT setval(pg_get_serial_sequence('entries', 'id'), coalesce(max(id), 0) + 1, false) FROM entries`,
} as const;

export async function isEmpty(db: Runner): Promise<boolean> {
  const [row] = await db.query<{ empty: boolean }>({ text: SQL.isEmpty });
  return row?.empty === true;
}

export function dumpDatabase(runner: Runner): Promise<StoreDump> {
  return runner.transaction(async (db) => {
    await db.query({ text: SQL.snapshot });
    const revisions = (await db.query<RevisionRow>({ text: SQL.revisions })).rows;
    const entries = toDumpedEntries((await db.query<DumpedEntryRow>({ text: SQL.entries })).rows, revisions);
    const users = (await db.query<UserUsage>({ text: SQL.users })).rows;
    const tokens = (await db.query<TokenRow>({ text: SQL.tokens })).rows.map(toTokenRecord);
    const accounts = (await db.query<AccountRow>({ text: SQL.accounts })).rows.map(toAccountRecord);
    const clients = (await db.query<ClientRow>({ text: SQL.clients })).rows.map(toClientRecord);
    const grants = (await db.query<GrantRow>({ text: SQL.grants })).rows.map(toGrantRecord);
    const grantSecrets = (await db.query<SecretRow>({ text: SQL.grantSecrets })).rows.map(toSecretRecord);
    return { entries, users, tokens, accounts, clients, grants, grantSecrets };
  });
}

export async function loadDatabase(runner: Runner, dump: StoreDump, options: LoadOptions): Promise<void> {
  refuseNul(dump.entries);
  await runner.transaction(async (db) => {
    await db.query({ text: SQL.lock });
    if (!options.replace && !(await db.query<{ empty: boolean }>({ text: SQL.isEmpty })).rows[0]?.empty) {
      throw notEmptyError();
    }
    const changes = Number((await db.query<{ changes: string }>({ text: SQL.lastChange })).rows[0]?.changes ?? 0) + 1;
    await db.query({ text: SQL.clear });
    for (let start = 0; start < dump.entries.length; start += BATCH) {
      const batch = dump.entries.slice(start, start + BATCH);
      await insert(db, SQL.addEntries, batch, (e) => [
        e.id,
        e.user,
        e.name,
        e.description,
        e.size,
        e.body,
        e.created,
        e.updated,
        e.revision,
        e.droppedAt,
        e.droppedBy,
        searchText(e.name),
        searchText(e.description),
        searchText(e.body),
      ]);
      const revisions = batch.flatMap((entry) => entry.revisions.map((record) => ({ entry, record })));
      for (let first = 0; first < revisions.length; first += BATCH) {
        await insert(db, SQL.addRevisions, revisions.slice(first, first + BATCH), ({ entry, record: r }) => [
          entry.user,
          entry.id,
          r.revision,
          r.operation,
          r.actor,
          r.at,
          r.description,
          r.body,
          // The latest revision of a dropped entry is the trash's, as addRevision marks it.
          entry.droppedAt !== null && r.revision === entry.revision,
        ]);
      }
      options.onProgress?.(start + batch.length);
    }
    for (let start = 0; start < dump.users.length; start += BATCH) {
      await insert(db, SQL.addUsers, dump.users.slice(start, start + BATCH), (u) => [
        u.user,
        u.totalBytes,
        u.entries,
        u.historyBytes,
        changes,
      ]);
    }
    try {
      for (let start = 0; start < dump.tokens.length; start += BATCH) {
        await insert(db, SQL.addTokens, dump.tokens.slice(start, start + BATCH), (token) =>
          tokenValues(token, postgresDialect),
        );
      }
    } catch (error) {
      throw duplicateTokenOf(error, postgresDialect) ?? error;
    }
    await insertAll(db, SQL.addAccounts, dump.accounts, accountValues);
    await insertAll(db, SQL.addClients, dump.clients, clientValues);
    await insertAll(db, SQL.addGrants, dump.grants, (grant) => grantValues(grant));
    await insertAll(db, SQL.addGrantSecrets, dump.grantSecrets, secretValues);
    await db.query({ text: SQL.bodiesOnce });
    await db.query({ text: SQL.renumber });
  });
}

/** Every one of `rows`, BATCH rows per INSERT. */
async function insertAll<T>(
  db: Queryable,
  text: string,
  rows: readonly T[],
  values: (row: T) => unknown[],
): Promise<void> {
  for (let start = 0; start < rows.length; start += BATCH)
    await insert(db, text, rows.slice(start, start + BATCH), values);
}

/** One INSERT … SELECT FROM unnest(…) of `rows`, each column of `values` passed as one array. */
async function insert<T>(
  db: Queryable,
  text: string,
  rows: readonly T[],
  values: (row: T) => unknown[],
): Promise<void> {
  if (rows.length === 0) return;
  const columns: unknown[][] = values(rows[0]!).map(() => []);
  for (const row of rows) {
    for (const [column, value] of values(row).entries()) columns[column]!.push(value);
  }
  await db.query({ text, values: columns });
}

/** PostgreSQL text cannot hold U+0000: name the entry that has one, rather than fail with a driver error. */
function refuseNul(entries: readonly DumpedEntry[]): void {
  const texts = (e: DumpedEntry) => [
    e.name,
    e.description,
    e.body,
    ...e.revisions.flatMap((r) => [r.description, r.body]),
  ];
  const found = entries.find((entry) => texts(entry).some((text) => text.includes('\0')));
  if (!found) return;
  throw new EngramError(
    'INVALID_ARGUMENT',
    `${found.user}'s ${found.name} holds the NUL character (\\u0000) in its text or its history, which PostgreSQL cannot store, so nothing was loaded. Remove it in the source first, then copy again.`,
  );
}
