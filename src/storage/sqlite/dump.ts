/**
 * The whole SQLite database as one StoreDump and back, for `engram migrate`: a dump is
 * read in one read transaction (one consistent snapshot); a load is written in one
 * immediate transaction with every id, time and total kept as given, so it lands whole
 * or not at all.
 */

import type { LoadOptions, StoreDump, UserUsage } from '../../memory/port.js';
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
import type { Database } from './driver.js';
import { sqliteDialect } from './sql-database.js';

/** Entries between two progress reports. */
const PROGRESS_EVERY = 1_000;

const SQL = {
  isEmpty: `SELECT NOT EXISTS (SELECT 1 FROM entries) AND NOT EXISTS (SELECT 1 FROM users)
     AND NOT EXISTS (SELECT 1 FROM tokens) AND NOT EXISTS (SELECT 1 FROM accounts)
     AND NOT EXISTS (SELECT 1 FROM oauth_clients) AND NOT EXISTS (SELECT 1 FROM grants) AS empty`,
  entries: `SELECT id, user_id, name, description, ${bodyOf('entries')} AS body, size, created, updated, revision,
       dropped_at, dropped_by
     FROM entries ORDER BY id`,
  revisions:
    'SELECT entry_id, revision, operation, actor, at, description, body FROM revisions ORDER BY entry_id, revision',
  users: `SELECT user_id AS user, total_bytes AS totalBytes, entries, history_bytes AS historyBytes
     FROM users ORDER BY user_id`,
  tokens: `SELECT ${TOKEN_COLUMNS} FROM tokens ORDER BY created, id`,
  accounts: `SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY user_id`,
  clients: `SELECT ${CLIENT_COLUMNS} FROM oauth_clients ORDER BY created, id`,
  grants: `SELECT ${GRANT_COLUMNS} FROM grants ORDER BY created, id`,
  grantSecrets: `SELECT ${SECRET_COLUMNS} FROM grant_secrets ORDER BY grant_id, hash`,
  // Sessions are not dumped: a load ends every one, and browsers sign in again.
  clear: `DELETE FROM revisions; DELETE FROM entries; DELETE FROM users; DELETE FROM tokens;
     DELETE FROM sessions; DELETE FROM accounts; DELETE FROM grant_secrets; DELETE FROM grants;
     DELETE FROM oauth_clients;`,
  addEntry: `INSERT INTO entries (id, user_id, name, description, size, body, created, updated, revision, dropped_at, dropped_by)
     VALUES (@id, @user, @name, @description, @size, @body, @created, @updated, @revision, @droppedAt, @droppedBy)`,
  // in_trash is no longer read (schema 10).
  addRevision: `INSERT INTO revisions (user_id, entry_id, revision, operation, actor, at, description, body, in_trash)
     VALUES (@user, @entryId, @revision, @operation, @actor, @at, @description, @body, 0)`,
  // Each body stored once (migrations.ts, step 11): an entry keeps its own only where its latest revision does not hold it.
  bodiesOnce: `UPDATE entries SET body = NULL
     WHERE body = (SELECT r.body FROM revisions r WHERE r.entry_id = entries.id AND r.revision = entries.revision)`,
  // Every loaded entry waits for the search index (search-backlog.ts): some have no revision to show it.
  markLoaded: 'INSERT OR IGNORE INTO search_pending (entry_id) SELECT id FROM entries',
  // Each user's change counter goes on past every one it replaces (storage/change-feed.ts): a
  // watcher, or an index kept by another connection (index-cache.ts), that knew a counter
  // before the load must not meet the same number again after it. That includes a user the
  // dump leaves out, whose row goes: their next write starts their counter again past the
  // floor the load leaves in the file's user_version (statements.ts, addUsage), where a
  // restart at 1 met a number kept from before the load.
  lastChange: 'SELECT max(coalesce(max(changes), 0), (SELECT user_version FROM pragma_user_version)) FROM users',
  addUser: `INSERT INTO users (user_id, total_bytes, entries, history_bytes, changes)
     VALUES (@user, @totalBytes, @entries, @historyBytes, @changes)`,
  addToken: `INSERT INTO tokens (${TOKEN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  addAccount: `INSERT INTO accounts (${ACCOUNT_COLUMNS}) VALUES (?, ?, ?, ?)`,
  addClient: `INSERT INTO oauth_clients (${CLIENT_COLUMNS}) VALUES (?, ?, ?, ?, ?)`,
  addGrant: `INSERT INTO grants (${GRANT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  addGrantSecret: `INSERT INTO grant_secrets (${SECRET_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
} as const;

export function isEmpty(db: Database): boolean {
  return (db.prepare(SQL.isEmpty).get() as { empty: number }).empty === 1;
}

export function dumpDatabase(db: Database): StoreDump {
  return db.transaction((): StoreDump => {
    const revisions = db.prepare(SQL.revisions).all() as RevisionRow[];
    const entries = toDumpedEntries(db.prepare(SQL.entries).all() as DumpedEntryRow[], revisions);
    const tokens = (db.prepare(SQL.tokens).all() as TokenRow<number>[]).map(toTokenRecord);
    return {
      entries,
      users: db.prepare(SQL.users).all() as UserUsage[],
      tokens,
      accounts: (db.prepare(SQL.accounts).all() as AccountRow[]).map(toAccountRecord),
      clients: (db.prepare(SQL.clients).all() as ClientRow[]).map(toClientRecord),
      grants: (db.prepare(SQL.grants).all() as GrantRow<number>[]).map(toGrantRecord),
      grantSecrets: (db.prepare(SQL.grantSecrets).all() as SecretRow[]).map(toSecretRecord),
    };
  })();
}

export function loadDatabase(db: Database, dump: StoreDump, options: LoadOptions): void {
  const add = {
    entry: db.prepare(SQL.addEntry),
    revision: db.prepare(SQL.addRevision),
    user: db.prepare(SQL.addUser),
    token: db.prepare(SQL.addToken),
    account: db.prepare(SQL.addAccount),
    client: db.prepare(SQL.addClient),
    grant: db.prepare(SQL.addGrant),
    grantSecret: db.prepare(SQL.addGrantSecret),
  };
  db.transaction(() => {
    if (!options.replace && !isEmpty(db)) throw notEmptyError();
    const changes = (db.prepare(SQL.lastChange).pluck().get() as number) + 1;
    db.pragma(`user_version = ${changes}`);
    // An empty store may still hold sessions: a load ends them too.
    db.exec(SQL.clear);
    for (const [index, { revisions, ...entry }] of dump.entries.entries()) {
      add.entry.run(entry);
      for (const record of revisions) add.revision.run({ user: entry.user, entryId: entry.id, ...record });
      if ((index + 1) % PROGRESS_EVERY === 0) options.onProgress?.(index + 1);
    }
    db.exec(SQL.bodiesOnce);
    db.exec(SQL.markLoaded);
    for (const usage of dump.users) add.user.run({ ...usage, changes });
    try {
      for (const token of dump.tokens) add.token.run(...tokenValues(token, sqliteDialect));
    } catch (error) {
      throw duplicateTokenOf(error, sqliteDialect) ?? error;
    }
    for (const account of dump.accounts) add.account.run(...accountValues(account));
    for (const client of dump.clients) add.client.run(...clientValues(client));
    for (const grant of dump.grants) add.grant.run(...grantValues(grant, sqliteDialect.boolean(grant.readOnly)));
    for (const secret of dump.grantSecrets) add.grantSecret.run(...secretValues(secret));
  }).immediate();
  options.onProgress?.(dump.entries.length);
}
