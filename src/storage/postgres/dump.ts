/**
 * The PostgreSQL side of the whole-database dump and load (storage/sql/dump.ts, written
 * once for both SQL backends): a dump is read in one repeatable-read transaction (one
 * consistent snapshot, while servers keep writing), whole or its entries in batches (a
 * backup of a memory larger than the server's heap: dumpInBatches); a load, of a dump
 * whole or taken in batches as another store reads it (loadInBatches: a restore or a
 * migration that never holds the memory whole), holds every table locked, writes in
 * batches of rows (one statement per batch, the columns passed as arrays) and commits once
 * — the whole dump, or nothing. What only this schema keeps: each entry's
 * search vector, revisions' in_trash (which the history cap's index reads), and the
 * entries' id sequence; and its text cannot hold U+0000, which a load refuses up front.
 */

import { EngramError } from '../../memory/model/errors.js';
import { distinctSearchText } from '../../memory/model/search-words.js';
import type {
  BatchedDump,
  BatchedLoadOptions,
  DumpedEntry,
  DumpTables,
  EntryBatches,
  LoadOptions,
  StoreDump,
} from '../../memory/port.js';
import { runAsync } from '../engine/drive.js';
import {
  type DumpDatabase,
  type DumpTable,
  dump,
  dumpInBatches,
  isEmpty,
  LOADED_TABLES,
  load,
  loadInBatches,
  watchBatches,
} from '../sql/dump.js';
import type { Queryable } from './driver.js';
import { postgresDialect } from './sql-database.js';
import { CHANGE_FLOOR, searchVector } from './statements.js';
import type { Runner } from './transaction.js';

/** Rows per INSERT. */
const BATCH = 500;

/**
 * Rows (entries and revisions) a dump in batches holds at once: a few megabytes of text
 * for usual entries (some tens of MB at most, every body at entryCap's default 16 KB),
 * a few hundred entries with their histories.
 */
const READ_BATCH = 2_000;

const SQL = {
  snapshot: 'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY',
  // A whole database is read, or loaded, in one transaction: no statement or idle timeout of
  // the server's pool (pool.ts, 30 s), a role or the database may cut a scheduled backup, a
  // restore or a migration short, idle as it is while the other side takes or reads a batch.
  untimed: `SELECT set_config('statement_timeout', '0', true), set_config('idle_in_transaction_session_timeout', '0', true)`,
  // Which tables these are, however the URL spells them (127.0.0.1 or localhost, a socket,
  // another user): the server (its start, to the microsecond, as every user may read it;
  // pg_control_system's identifier may be withheld), the database, and the entries table of
  // the schema on the search path.
  identity: `SELECT pg_postmaster_start_time()::text || ' ' || current_database() || ' ' || 'entries'::regclass::oid::text
     AS identity`,
  // Servers on the database wait (or time out) until the load commits: none sees half of it.
  // Users first, as a write takes its user's row first (statements.ts, lockUser): a write
  // under way then finishes while the load waits for it. The change floor too: a user's first
  // row made as the load commits reads the floor it leaves, not the one before.
  lock: `LOCK TABLE users, entries, revisions, tokens, accounts, sessions, oauth_clients, grants, grant_secrets,
     change_floor IN ACCESS EXCLUSIVE MODE`,
  clear: `TRUNCATE ${LOADED_TABLES.join(', ')}`,
  // $12, $13, $14: the words of each name, description and body (search-words.ts distinctSearchText).
  addEntries: `INSERT INTO entries (id, user_id, name, description, size, body, created, updated, revision, dropped_at,
       dropped_by, search, opened)
     OVERRIDING SYSTEM VALUE SELECT e.id, e.user_id, e.name, e.description, e.size, e.body, e.created, e.updated,
       e.revision, e.dropped_at, e.dropped_by, ${searchVector('e.name_words', 'e.description_words', 'e.body_words')},
       e.opened
     FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::integer[], $6::text[], $7::bigint[],
       $8::bigint[], $9::integer[], $10::bigint[], $11::text[], $12::text[], $13::text[], $14::text[], $15::bigint[])
       AS e (id, user_id, name, description, size, body, created, updated, revision, dropped_at, dropped_by,
         name_words, description_words, body_words, opened)`,
  addRevisions: `INSERT INTO revisions (user_id, entry_id, revision, operation, actor, at, description, body, in_trash,
       note)
     SELECT * FROM unnest($1::text[], $2::bigint[], $3::integer[], $4::text[], $5::text[], $6::bigint[], $7::text[],
       $8::text[], $9::boolean[], $10::text[])`,
  // Each user's change counter goes on past every one it replaces (storage/change-feed.ts): a
  // watcher, or another server's write cache (write-cache.ts), that knew a counter before the
  // load must not meet the same number again after it. That includes a user the dump leaves
  // out, whose row goes: their next row starts at the floor the load leaves in change_floor
  // (migrations.ts, step 12), where a restart at 1 let a server's stale view of them write
  // over another entry.
  lastChange: `SELECT greatest(coalesce(max(changes), 0), ${CHANGE_FLOOR})::bigint AS changes FROM users`,
  setFloor: 'INSERT INTO change_floor (changes) VALUES ($1) ON CONFLICT (one) DO UPDATE SET changes = excluded.changes',
  // Each body stored once (migrations.ts, step 8): an entry keeps its own only where its latest revision does not hold it.
  bodiesOnce: `UPDATE entries e SET body = NULL FROM revisions r
     WHERE r.user_id = e.user_id AND r.entry_id = e.id AND r.revision = e.revision AND r.body = e.body`,
  // The next entry created is numbered after the highest id loaded.
  renumber: `SELECT setval(pg_get_serial_sequence('entries', 'id'), coalesce(max(id), 0) + 1, false) FROM entries`,
} as const;

/** The primitives of sql/dump.ts on `query`: one connection holding the transaction, or the pool (isEmpty alone). */
function dumpDatabaseOn(query: <Row>(text: string, values?: readonly unknown[]) => Promise<Row[]>): DumpDatabase {
  return {
    dialect: postgresDialect,
    entryOrder: 'user-then-id',
    batch: BATCH,
    rows: (text, values) => {
      if (values === undefined) return query(text);
      let number = 0;
      return query(
        text.replace(/\?/g, () => `$${++number}`),
        values,
      );
    },
    async changesPastAll() {
      const [row] = await query<{ changes: number | string }>(SQL.lastChange);
      const changes = Number(row?.changes ?? 0) + 1;
      await query(SQL.setFloor, [changes]);
      return changes;
    },
    clear: async () => void (await query(SQL.clear)),
    async addEntries(entries) {
      await insert(query, SQL.addEntries, entries, (e) => [
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
        distinctSearchText(e.name),
        distinctSearchText(e.description),
        distinctSearchText(e.body),
        e.opened ?? null,
      ]);
      const revisions = entries.flatMap((entry) => entry.revisions.map((record) => ({ entry, record })));
      for (let first = 0; first < revisions.length; first += BATCH) {
        await insert(query, SQL.addRevisions, revisions.slice(first, first + BATCH), ({ entry, record: r }) => [
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
          r.note ?? null,
        ]);
      }
    },
    insert: (table, rows) => insert(query, insertText(table), rows, (values) => values),
    async finish() {
      await query(SQL.bodiesOnce);
      await query(SQL.renumber);
    },
  };
}

export function isDatabaseEmpty(runner: Runner): Promise<boolean> {
  return runAsync(isEmpty(dumpDatabaseOn((text, values) => runner.query({ text, values }))));
}

/** Which database and schema the store's tables are (SQL.identity): equal for two URLs of one. */
export async function databaseIdentity(runner: Runner): Promise<string> {
  const [row] = await runner.query<{ identity: string }>({ text: SQL.identity });
  return row!.identity;
}

export function dumpDatabase(runner: Runner): Promise<StoreDump> {
  return inSnapshot(runner, (connection) => runAsync(dump(dumpDatabaseOn(on(connection)))));
}

/**
 * The dump in batches of sql/dump.ts (`readBatch` rows at most at once: tests choose
 * fewer). Read again from the start after a transient failure only while no batch has
 * been handed over: `batches` would take some twice. What `batches` throws is its own,
 * passed on as it came: this database's words would misname the failure of the store
 * taking the batches (another PostgreSQL database's full disk or lost connection).
 */
export async function dumpDatabaseInBatches(
  runner: Runner,
  batches: EntryBatches,
  readBatch = READ_BATCH,
): Promise<DumpTables> {
  const watched = watchBatches(batches);
  try {
    return await inSnapshot(
      runner,
      (connection) => runAsync(dumpInBatches(dumpDatabaseOn(on(connection)), watched.batches, readBatch)),
      () => !watched.handedOver(),
    );
  } catch (error) {
    throw watched.failure(error);
  }
}

/** `read` in one repeatable-read transaction that no timeout of the server's pool cuts short. */
function inSnapshot<T>(
  runner: Runner,
  read: (connection: Queryable) => Promise<T>,
  mayRepeat?: () => boolean,
): Promise<T> {
  return runner.transaction(
    async (connection) => {
      await connection.query({ text: SQL.snapshot });
      await connection.query({ text: SQL.untimed });
      return read(connection);
    },
    { readOnly: true, ...(mayRepeat && { mayRepeat }) },
  );
}

export async function loadDatabase(runner: Runner, dumped: StoreDump, options: LoadOptions): Promise<void> {
  refuseNul(dumped.entries);
  await runner.transaction(async (connection) => {
    await connection.query({ text: SQL.untimed });
    await connection.query({ text: SQL.lock });
    await runAsync(load(dumpDatabaseOn(on(connection)), dumped, options));
  });
}

/**
 * loadDatabase of a dump read as it is loaded (sql/dump.ts, loadInBatches), in the same
 * one transaction on one connection, every table locked until it commits, idle while the
 * source reads its next batch (so no timeout of the server's, a role's or the database's
 * may end it); each batch refused up front when it holds a NUL, as a whole dump is. Tried
 * again (a lost or busy database) only until the source is read: its failure is its own,
 * already in its words (which may say it lost its connection), and what it read would be
 * read into this transaction twice.
 */
export async function loadDatabaseInBatches(
  runner: Runner,
  dumped: BatchedDump,
  options: BatchedLoadOptions,
): Promise<void> {
  let reading = false;
  await runner.transaction(
    async (connection) => {
      await connection.query({ text: SQL.untimed });
      await connection.query({ text: SQL.lock });
      const source: BatchedDump = (batches) => {
        reading = true;
        return dumped(batches);
      };
      await loadInBatches(dumpDatabaseOn(on(connection)), runAsync, source, options, refuseNul);
    },
    { mayRepeat: () => !reading },
  );
}

/** Statements on the connection holding a transaction, answering their rows. */
function on(connection: Queryable) {
  return async <Row>(text: string, values?: readonly unknown[]) => (await connection.query<Row>({ text, values })).rows;
}

/** An INSERT … SELECT FROM unnest(…) of `table`'s columns, each passed as an array of its type. */
function insertText({ name, columns, types }: DumpTable): string {
  const arrays = types.map((type, index) => `$${index + 1}::${type}[]`).join(', ');
  return `INSERT INTO ${name} (${columns}) SELECT * FROM unnest(${arrays})`;
}

/** One INSERT … SELECT FROM unnest(…) of `rows`, each column of `values` passed as one array. */
async function insert<T>(
  query: (text: string, values: readonly unknown[]) => Promise<unknown>,
  text: string,
  rows: readonly T[],
  values: (row: T) => readonly unknown[],
): Promise<void> {
  if (rows.length === 0) return;
  const columns: unknown[][] = values(rows[0]!).map(() => []);
  for (const row of rows) {
    for (const [column, value] of values(row).entries()) columns[column]!.push(value);
  }
  await query(text, columns);
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
