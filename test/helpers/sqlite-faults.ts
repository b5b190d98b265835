/**
 * Faults of a database file that a test cannot cause from outside a running SQLite store
 * (tests run as root, so permissions do not stop writes): a full disk and a read-only
 * file, as SQLite reports them, set on the store's own connection.
 */

import type Database from 'better-sqlite3';
import type { SqliteStore } from '../../src/storage/sqlite/index.js';

function connectionOf(store: SqliteStore): Database.Database {
  return (store as unknown as { db: Database.Database }).db;
}

/** From now on, a write that needs one more page fails with SQLITE_FULL, as on a full disk. */
export function fillDisk(store: SqliteStore): void {
  const db = connectionOf(store);
  db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true })}`);
}

/** From now on, every write fails with SQLITE_READONLY, as on a read-only file. */
export function makeReadOnly(store: SqliteStore): void {
  connectionOf(store).pragma('query_only = ON');
}
