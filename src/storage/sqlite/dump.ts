/**
 * The SQLite side of the whole-database dump and load (storage/sql/dump.ts, written once
 * for both SQL backends): a dump read in one read transaction (one consistent snapshot);
 * a load written in one immediate transaction, so it lands whole or not at all, its rows
 * inserted one statement each (better-sqlite3 runs a prepared statement in microseconds,
 * so batching gains nothing here). What only this schema keeps: the floor of every
 * change counter in the file's user_version, the search index's backlog, and revisions'
 * in_trash column, no longer read (schema 10) and written 0 as every write does.
 */

import type { BatchedDump, DumpTables, LoadOptions, StoreDump } from '../../memory/port.js';
import { runInTurns, runSync } from '../engine/drive.js';
import {
  type DumpDatabase,
  type DumpTable,
  dump,
  finishLoad,
  isEmpty,
  LOADED_TABLES,
  load,
  loadEntries,
  startLoad,
} from '../sql/dump.js';
import type { Database } from './driver.js';
import { sqliteDialect } from './sql-database.js';

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
  // floor the load leaves in the file's user_version (statements.ts, addUsage), where a
  // restart at 1 met a number kept from before the load.
  lastChange: 'SELECT max(coalesce(max(changes), 0), (SELECT user_version FROM pragma_user_version)) FROM users',
} as const;

/** The primitives of sql/dump.ts on one connection, inside the transaction its caller holds. */
function dumpDatabaseOn(db: Database): DumpDatabase {
  return {
    dialect: sqliteDialect,
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

/** How a load in batches reports: entries written so far, of how many the dump holds. */
export interface BatchedLoadOptions {
  readonly replace: boolean;
  readonly onProgress?: ((entriesWritten: number, entriesTotal: number) => void) | undefined;
}

/**
 * loadDatabase of a dump read as it is loaded (`dumped`, a PostgreSQL memory's dump in
 * batches: never held whole): the same one immediate transaction, each batch written as it
 * comes, with the event loop free while the next is read and between two batches of rows
 * (engine/drive.ts, runInTurns). Only for a file no request uses (a backup being written by
 * a server, which goes on answering meanwhile): a request's statement there would land
 * inside the open transaction.
 */
export async function loadDatabaseInBatches(
  db: Database,
  dumped: BatchedDump,
  options: BatchedLoadOptions,
): Promise<void> {
  const target = dumpDatabaseOn(db);
  db.exec('BEGIN IMMEDIATE');
  try {
    const changes = await runInTurns(startLoad(target, options));
    let total = 0;
    let written = 0;
    const tables: DumpTables = await dumped({
      total: (entries) => {
        total = entries;
      },
      batch: async (entries) => {
        const onProgress = (count: number) => options.onProgress?.(count, total);
        await runInTurns(loadEntries(target, entries, written, { onProgress }));
        written += entries.length;
      },
    });
    await runInTurns(finishLoad(target, tables, changes));
    db.exec('COMMIT');
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
