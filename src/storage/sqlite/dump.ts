/**
 * The SQLite side of the whole-database dump and load (storage/sql/dump.ts, written once
 * for both SQL backends): a dump read in one read transaction (one consistent snapshot),
 * whole or its entries in batches; a load, of a dump whole or taken in batches as another
 * store reads it, written in one immediate transaction, so it lands whole or not at all, its rows
 * inserted one statement each (better-sqlite3 runs a prepared statement in microseconds,
 * so batching gains nothing here). What only this schema keeps: the floor of every
 * change counter in the file's user_version, the search index's backlog, and revisions'
 * in_trash column, no longer read (schema 10) and written 0 as every write does.
 */

import type {
  BatchedDump,
  BatchedLoadOptions,
  DumpTables,
  EntryBatches,
  LoadOptions,
  StoreDump,
} from '../../memory/port.js';
import { runAsync, runInTurns, runSync } from '../engine/drive.js';
import {
  type DumpDatabase,
  type DumpTable,
  dump,
  dumpInBatches,
  isEmpty,
  LOADED_TABLES,
  load,
  loadInBatches,
} from '../sql/dump.js';
import type { Database } from './driver.js';
import { sqliteDialect } from './sql-database.js';
import { CHANGE_FLOOR } from './statements.js';

const SQL = {
  clear: LOADED_TABLES.map((table) => `DELETE FROM ${table};`).join('\n'),
  addEntry: `INSERT INTO entries (id, user_id, name, description, size, body, created, updated, revision, dropped_at, dropped_by,
       opened)
     VALUES (@id, @user, @name, @description, @size, @body, @created, @updated, @revision, @droppedAt, @droppedBy,
       @opened)`,
  addRevision: `INSERT INTO revisions (user_id, entry_id, revision, operation, actor, at, description, body, in_trash, note)
     VALUES (@user, @entryId, @revision, @operation, @actor, @at, @description, @body, 0, @note)`,
  // Every loaded entry waits for the search index (search-backlog.ts): some have no revision to show it.
  // Marked as it is added, where one INSERT of every entry at the end held the event loop of a server writing a backup.
  markLoaded: 'INSERT OR IGNORE INTO search_pending (entry_id) VALUES (?)',
  // Each user's change counter goes on past every one it replaces (storage/change-feed.ts): a
  // watcher, or an index kept by another connection (index-cache.ts), that knew a counter
  // before the load must not meet the same number again after it. That includes a user the
  // dump leaves out, whose row goes: their next write starts their counter again past the
  // floor the load leaves in the file's user_version (statements.ts, firstUsage), where a
  // restart at 1 met a number kept from before the load.
  lastChange: `SELECT max(coalesce(max(changes), 0), ${CHANGE_FLOOR}) FROM users`,
} as const;

/** The primitives of sql/dump.ts on one connection, inside the transaction its caller holds. */
function dumpDatabaseOn(db: Database): DumpDatabase {
  return {
    dialect: sqliteDialect,
    entryOrder: 'id',
    batch: 1_000,
    rows: <Row>(text: string, values: readonly unknown[] = []) => db.prepare(text).all(...values) as Row[],
    changesPastAll() {
      const changes = (db.prepare(SQL.lastChange).pluck().get() as number) + 1;
      db.pragma(`user_version = ${changes}`);
      return changes;
    },
    clear: () => void db.exec(SQL.clear),
    addEntries(entries) {
      const addEntry = db.prepare(SQL.addEntry);
      const addRevision = db.prepare(SQL.addRevision);
      const markLoaded = db.prepare(SQL.markLoaded);
      for (const { revisions, ...entry } of entries) {
        // Each body stored once (migrations.ts, step 11): an entry keeps its own only where its latest revision does not hold it.
        // Decided as each entry is added: one UPDATE of every entry at the end held the event loop (0.4-0.55 s at 24,000 entries, with markLoaded).
        const latest = revisions.find((record) => record.revision === entry.revision);
        addEntry.run({ ...entry, body: latest?.body === entry.body ? null : entry.body, opened: entry.opened ?? null });
        for (const record of revisions)
          addRevision.run({ user: entry.user, entryId: entry.id, ...record, note: record.note ?? null });
        markLoaded.run(entry.id);
      }
    },
    insert(table: DumpTable, rows) {
      const insert = db.prepare(
        `INSERT INTO ${table.name} (${table.columns}) VALUES (${table.types.map(() => '?').join(', ')})`,
      );
      for (const values of rows) insert.run(...values);
    },
    // Nothing is left to make once every row is in: each body and each search mark is decided as its entry is added.
    finish() {},
  };
}

export function isDatabaseEmpty(db: Database): boolean {
  return runSync(isEmpty(dumpDatabaseOn(db)));
}

export function dumpDatabase(db: Database): StoreDump {
  return db.transaction(() => runSync(dump(dumpDatabaseOn(db))))();
}

export function loadDatabase(db: Database, dumped: StoreDump, options: LoadOptions): void {
  db.transaction(() => runSync(load(dumpDatabaseOn(db), dumped, options))).immediate();
}

/**
 * Rows (entries and revisions) a dump in batches holds at once: a few megabytes of text for
 * usual entries, as PostgreSQL's (postgres/dump.ts, READ_BATCH).
 */
const READ_BATCH = 2_000;

/**
 * Begins the read transaction of a dump in batches and takes its snapshot (the first read
 * of the file does), rolled back when the file is busy (another process's lock), so that
 * it may be tried again.
 */
export function startSnapshot(db: Database): void {
  db.exec('BEGIN');
  try {
    db.prepare('SELECT count(*) FROM sqlite_schema').get();
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}

/**
 * The dump in batches of sql/dump.ts (`readBatch` rows at most at once: tests choose
 * fewer), read in one read transaction (one snapshot, whatever other connections commit
 * meanwhile), begun by `begin` (startSnapshot, tried again while the file is busy by the
 * store) and held open while each batch is taken. Only on a connection nothing else uses
 * meanwhile (a copy's source): a statement of another caller would run inside it.
 */
export async function dumpDatabaseInBatches(
  db: Database,
  batches: EntryBatches,
  begin: () => Promise<void> | void = () => startSnapshot(db),
  readBatch = READ_BATCH,
): Promise<DumpTables> {
  await begin();
  try {
    const tables = await runAsync(dumpInBatches(dumpDatabaseOn(db), batches, readBatch));
    db.exec('COMMIT');
    return tables;
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

/**
 * loadDatabase of a dump read as it is loaded (sql/dump.ts, loadInBatches: another store's
 * dump in batches, never held whole): the same one immediate transaction, begun by `begin`
 * (which waits out another process's lock), each batch written as it comes, with the event
 * loop free while the next is read and between two batches of rows (engine/drive.ts,
 * runInTurns). Only on a connection nothing else uses meanwhile (a backup being written by
 * a server, which goes on answering; a restore's or a migration's target): a request's
 * statement there would land inside the open transaction.
 */
export async function loadDatabaseInBatches(
  db: Database,
  dumped: BatchedDump,
  options: BatchedLoadOptions,
  begin: () => Promise<void> | void = () => void db.exec('BEGIN IMMEDIATE'),
): Promise<void> {
  await begin();
  try {
    await loadInBatches(dumpDatabaseOn(db), runInTurns, dumped, options);
    db.exec('COMMIT');
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
