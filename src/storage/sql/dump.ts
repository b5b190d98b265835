/**
 * The whole SQL database as one StoreDump and back (DumpStore: isEmpty, dump, load, for
 * `engram migrate`), written once for both SQL backends as the storage engine's algorithms
 * are (engine/drive.ts): a generator over a few primitives that each dialect gives
 * (`DumpDatabase`), driven by runSync inside SQLite's transaction and by runAsync on the
 * connection holding PostgreSQL's. What is read, in which order, how rows become records
 * and back, when a load is refused, and that every id, time and total is kept as given are
 * here; the transaction (one read snapshot; a load whole or not at all), how rows are
 * inserted (one by one, or in batches of arrays) and what each schema keeps beside the
 * rows are the dialect's (sqlite/dump.ts, postgres/dump.ts).
 *
 * A dump may also hand its entries over in batches as it reads them (dumpInBatches), and a
 * load take them so (loadInBatches, from startLoad, loadEntries, finishLoad: what `load` is
 * made of): a backup, a restore or a migration of a memory larger than the heap is copied
 * without being held whole.
 */

import type {
  BatchedDump,
  BatchedLoadOptions,
  DumpTables,
  EntryBatches,
  LoadOptions,
  StoreDump,
  UserUsage,
} from '../../memory/port.js';
import { type DumpedEntry, notEmptyError } from '../../memory/port.js';
import { get, type Maybe, type Work } from '../engine/drive.js';
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
import type { SqlDialect } from './database.js';
import { PROPOSAL_COLUMNS, type ProposalRow, proposalValues, toProposalRecord } from './proposals.js';
import { duplicateTokenOf, tokenValues } from './tokens.js';

/** A column's type, as both schemas declare it (PostgreSQL's names; a batch of rows passes each column as an array of it). */
export type ColumnType = 'text' | 'bigint' | 'integer' | 'boolean';

/** A table a load fills from plain values, one per column in the order of `columns`. */
export interface DumpTable {
  readonly name: string;
  readonly columns: string;
  readonly types: readonly ColumnType[];
}

const USERS: DumpTable = {
  name: 'users',
  columns: 'user_id, total_bytes, entries, history_bytes, changes',
  types: ['text', 'bigint', 'integer', 'bigint', 'bigint'],
};
const TOKENS: DumpTable = {
  name: 'tokens',
  columns: TOKEN_COLUMNS,
  types: ['text', 'text', 'text', 'boolean', 'text', 'bigint', 'bigint', 'boolean'],
};
const ACCOUNTS: DumpTable = { name: 'accounts', columns: ACCOUNT_COLUMNS, types: ['text', 'text', 'bigint', 'bigint'] };
const CLIENTS: DumpTable = {
  name: 'oauth_clients',
  columns: CLIENT_COLUMNS,
  types: ['text', 'text', 'text', 'bigint', 'text'],
};
const GRANTS: DumpTable = {
  name: 'grants',
  columns: GRANT_COLUMNS,
  types: ['text', 'text', 'text', 'text', 'boolean', 'text', 'bigint', 'bigint', 'boolean'],
};
const SECRETS: DumpTable = {
  name: 'grant_secrets',
  columns: SECRET_COLUMNS,
  types: ['text', 'text', 'text', 'bigint', 'bigint', 'bigint', 'text'],
};
const PROPOSALS: DumpTable = {
  name: 'proposals',
  columns: PROPOSAL_COLUMNS,
  types: ['text', 'text', 'text', 'text', 'text', 'text', 'text', 'integer', 'text', 'text', 'text', 'bigint'],
};

/**
 * Every table a load empties, children before their parents. Sessions are not dumped: a
 * load ends every one (an empty store may still hold some), and browsers sign in again.
 */
export const LOADED_TABLES = [
  'revisions',
  'entries',
  'users',
  'tokens',
  'sessions',
  'accounts',
  'grant_secrets',
  'grants',
  'oauth_clients',
  'proposals',
] as const;

const IS_EMPTY = `SELECT NOT EXISTS (SELECT 1 FROM entries) AND NOT EXISTS (SELECT 1 FROM users)
     AND NOT EXISTS (SELECT 1 FROM tokens) AND NOT EXISTS (SELECT 1 FROM accounts)
     AND NOT EXISTS (SELECT 1 FROM oauth_clients) AND NOT EXISTS (SELECT 1 FROM grants)
     AND NOT EXISTS (SELECT 1 FROM proposals) AS empty`;

/** Since when the loaded store's openings are recorded: a whole number of ms, written as a literal. */
const SET_OPENED_SINCE = (at: number) => `UPDATE opened_since SET at = ${Math.trunc(at)} RETURNING at`;

/** The reads of a dump, each in an order of its own so that two dumps of one database are equal. */
function dumpReads({ byCodePoint: c }: SqlDialect) {
  return {
    entries: `SELECT id, user_id, name, description, ${bodyOf('entries')} AS body, size, created, updated, revision,
       dropped_at, dropped_by, opened
     FROM entries ORDER BY id`,
    revisions:
      'SELECT entry_id, revision, operation, actor, at, description, body, note FROM revisions ORDER BY entry_id, revision',
    users: `SELECT user_id AS "user", total_bytes AS "totalBytes", entries, history_bytes AS "historyBytes"
     FROM users ORDER BY user_id${c}`,
    tokens: `SELECT ${TOKEN_COLUMNS} FROM tokens ORDER BY created, id${c}`,
    accounts: `SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY user_id${c}`,
    clients: `SELECT ${CLIENT_COLUMNS} FROM oauth_clients ORDER BY created, id${c}`,
    grants: `SELECT ${GRANT_COLUMNS} FROM grants ORDER BY created, id${c}`,
    grantSecrets: `SELECT ${SECRET_COLUMNS} FROM grant_secrets ORDER BY grant_id${c}, hash${c}`,
    proposals: `SELECT ${PROPOSAL_COLUMNS} FROM proposals ORDER BY at, id${c}`,
    openedSince: 'SELECT at FROM opened_since',
  };
}

/**
 * The order a dump in batches pages through the entries in: their primary key, whose index
 * serves each page (PostgreSQL's is the user, then the id; SQLite's the id, the rowid: an
 * order by user there would scan and sort every entry for each page).
 */
export type EntryOrder = 'user-then-id' | 'id';

/**
 * The reads of a dump in batches, in the order of the entries' primary key (EntryOrder),
 * each page's revisions by the same key. By user, then id (PostgreSQL), a page is read as
 * its first user's entries (ids between the page's first and that user's last), every
 * entry of the users between, and its last user's (ids up to the page's last): each read
 * bounded on both sides in the index, in the column's own collation for both the order and
 * the comparison. A range of whole keys was bounded only by the user (PostgreSQL 15), so
 * each page read the rest of its user's index: a user's dump took time quadratic in their
 * entries. One read per user instead took a round trip for each of a page's users: 12
 * times longer for a memory of many small users. By id (SQLite), a page is one range of ids.
 */
const BATCH_READS = {
  entryCount: 'SELECT count(*) AS entries FROM entries',
  /** The keys of the next entries after `(?, ?)` (or `?`, by id; or from the first), with how many revisions each keeps. */
  nextKeys: (order: EntryOrder, from: 'first' | 'after', limit: number) =>
    order === 'id'
      ? `SELECT e.user_id, e.id, (SELECT count(*) FROM revisions r WHERE r.entry_id = e.id) AS revisions
     FROM entries e${from === 'after' ? ' WHERE e.id > ?' : ''}
     ORDER BY e.id LIMIT ${Math.trunc(limit)}`
      : `SELECT e.user_id, e.id,
       (SELECT count(*) FROM revisions r WHERE r.user_id = e.user_id AND r.entry_id = e.id) AS revisions
     FROM entries e${from === 'after' ? ' WHERE (e.user_id, e.id) > (?, ?)' : ''}
     ORDER BY e.user_id, e.id LIMIT ${Math.trunc(limit)}`,
  /** Entries with ids from `?` through `?`; user `?`'s with ids from `?` through `?`; or every entry of the users after `?` and before `?`. */
  entries: (range: PageRange) => `SELECT id, user_id, name, description, ${bodyOf('entries')} AS body, size,
       created, updated, revision, dropped_at, dropped_by, opened
     FROM entries WHERE ${
       range === 'ids'
         ? 'id BETWEEN ? AND ? ORDER BY id'
         : `${range === 'one' ? 'user_id = ? AND id BETWEEN ? AND ?' : 'user_id > ? AND user_id < ?'} ORDER BY user_id, id`
     }`,
  /** Their revisions. */
  revisions: (range: PageRange) => `SELECT entry_id, revision, operation, actor, at, description, body, note
     FROM revisions WHERE ${
       range === 'ids'
         ? 'entry_id BETWEEN ? AND ? ORDER BY entry_id, revision'
         : `${range === 'one' ? 'user_id = ? AND entry_id BETWEEN ? AND ?' : 'user_id > ? AND user_id < ?'} ORDER BY user_id, entry_id, revision`
     }`,
} as const;

/** A range of a page's read: of ids (by id), or of one user's ids or of the users between two (by user, then id). */
type PageRange = 'ids' | 'one' | 'between';

/** What a dialect gives the dump and the load, inside the one transaction it holds while they run. */
export interface DumpDatabase {
  readonly dialect: SqlDialect;
  /** The order of a dump in batches: the entries' primary key. */
  readonly entryOrder: EntryOrder;
  /** Entries written between two progress reports; rows per insert, where the dialect batches them. */
  readonly batch: number;
  /** The rows of one read, its `?` bound to `values` in order. */
  rows<Row>(text: string, values?: readonly unknown[]): Maybe<Row[]>;
  /**
   * The change counter every loaded user starts at: past every counter the load replaces
   * and the floor before it. It becomes the floor where a user's first row starts
   * (SqlDialect.changeFloor), for the users the dump leaves out.
   */
  changesPastAll(): Maybe<number>;
  /** Deletes every row of LOADED_TABLES. */
  clear(): Maybe<void>;
  /** Inserts `entries` (at most `batch`) with their revisions, ids and times as given. */
  addEntries(entries: readonly DumpedEntry[]): Maybe<void>;
  /** Inserts `rows` (at most `batch`) into `table`. */
  insert(table: DumpTable, rows: readonly (readonly unknown[])[]): Maybe<void>;
  /** What the schema keeps beside the rows, made once every row is in (PostgreSQL's bodies stored once, its id sequence). */
  finish(): Maybe<void>;
}

/** True when the database holds no entry, user, token, account, app, grant or proposal. */
export function* isEmpty(db: DumpDatabase): Work<boolean> {
  const [row] = yield* get(db.rows<{ empty: boolean | number }>(IS_EMPTY));
  // SQLite answers 1 or 0, PostgreSQL a boolean.
  return row?.empty === true || row?.empty === 1;
}

/** The whole database, read in the dialect's one snapshot. */
export function* dump(db: DumpDatabase): Work<StoreDump> {
  const read = dumpReads(db.dialect);
  const revisions = yield* get(db.rows<RevisionRow>(read.revisions));
  const entries = toDumpedEntries(yield* get(db.rows<DumpedEntryRow>(read.entries)), revisions);
  return { entries, ...(yield* dumpTables(db)) };
}

/** `batches` as a dump in batches hands them over, watched (watchBatches). */
export interface WatchedBatches {
  readonly batches: EntryBatches;
  /** Whether a batch was handed over: a dump read again from the start would hand it twice. */
  handedOver(): boolean;
  /** What to throw for `error`: the receiver's own failure as it came, else `error`. */
  failure(error: unknown): unknown;
}

/**
 * `batches` watched for a dump in batches, on either backend: what its receiver throws is
 * the receiver's own, to be passed on as it came, since the dumping store's words would
 * misname the failure of the store taking the batches (its full disk, its lost connection).
 */
export function watchBatches(batches: EntryBatches): WatchedBatches {
  let handedOver = false;
  let taking: { readonly error: unknown } | undefined;
  return {
    batches: {
      total: (entries) => batches.total(entries),
      batch: async (entries) => {
        handedOver = true;
        try {
          await batches.batch(entries);
        } catch (error) {
          taking = { error };
          throw error;
        }
      },
    },
    handedOver: () => handedOver,
    failure: (error) => (taking === undefined ? error : taking.error),
  };
}

/**
 * The whole database, read in the dialect's one snapshot, its entries handed to `batches`
 * as they are read, the next read once the last is taken (EntryBatches); the rest returned
 * at the end. A batch holds at most `readBatch` rows, its entries and their revisions
 * counted, but for a lone entry whose history alone has more (historyLimit caps it).
 */
export function* dumpInBatches(db: DumpDatabase, batches: EntryBatches, readBatch: number): Work<DumpTables> {
  const [count] = yield* get(db.rows<{ entries: number | string }>(BATCH_READS.entryCount));
  batches.total(Number(count?.entries ?? 0));
  // Keys read but not handed over yet, with their rows: counted once, kept for the pages they fill.
  let ahead: CountedKey[] = [];
  let after: EntryKey | undefined;
  let keysLeft = true;
  for (;;) {
    // Each entry is a row at least: readBatch more keys fill a page whatever is ahead.
    if (keysLeft && rowsOf(ahead) < readBatch) {
      const keys = yield* get(
        db.rows<EntryKey & { revisions: number | string }>(
          BATCH_READS.nextKeys(db.entryOrder, after === undefined ? 'first' : 'after', readBatch),
          after === undefined ? [] : db.entryOrder === 'id' ? [after.id] : [after.user_id, after.id],
        ),
      );
      keysLeft = keys.length === readBatch;
      after = keys.at(-1) ?? after;
      ahead = ahead.concat(keys.map((key) => ({ user_id: key.user_id, id: key.id, rows: 1 + Number(key.revisions) })));
    }
    if (ahead.length === 0) break;
    // As many entries as fit in readBatch rows with their revisions, one at least.
    let taken = 1;
    let rows = ahead[0]!.rows;
    while (taken < ahead.length && rows + ahead[taken]!.rows <= readBatch) rows += ahead[taken++]!.rows;
    const page = ahead.slice(0, taken);
    ahead = ahead.slice(taken);
    yield* get(batches.batch(yield* readPage(db, page)));
  }
  return yield* dumpTables(db);
}

/** An entry's key in the order of a dump in batches (EntryOrder): its user and id. */
interface EntryKey {
  readonly user_id: string;
  readonly id: number;
}

/** An entry's key with the rows it is dumped as: itself and each revision. */
interface CountedKey extends EntryKey {
  readonly rows: number;
}

function rowsOf(keys: readonly CountedKey[]): number {
  return keys.reduce((rows, key) => rows + key.rows, 0);
}

/** The entries of `page` (keys in key order, each of every entry between its first and last), with their revisions. */
function* readPage(db: DumpDatabase, page: readonly EntryKey[]): Work<DumpedEntry[]> {
  const first = page[0]!;
  const last = page.at(-1)!;
  const ofFirst = page.filter((key) => key.user_id === first.user_id);
  const reads: [range: PageRange, values: unknown[]][] =
    db.entryOrder === 'id' ? [['ids', [first.id, last.id]]] : [['one', [first.user_id, first.id, ofFirst.at(-1)!.id]]];
  if (db.entryOrder === 'user-then-id' && last.user_id !== first.user_id) {
    const ofLast = page.filter((key) => key.user_id === last.user_id);
    if (ofFirst.length + ofLast.length < page.length) reads.push(['between', [first.user_id, last.user_id]]);
    reads.push(['one', [last.user_id, ofLast[0]!.id, last.id]]);
  }
  const entries: DumpedEntryRow[] = [];
  const revisions: RevisionRow[] = [];
  for (const [range, values] of reads) {
    // One by one: a spread of some 100,000 rows overflows the stack.
    for (const row of yield* get(db.rows<DumpedEntryRow>(BATCH_READS.entries(range), values))) entries.push(row);
    for (const row of yield* get(db.rows<RevisionRow>(BATCH_READS.revisions(range), values))) revisions.push(row);
  }
  return toDumpedEntries(entries, revisions);
}

/** Everything but the entries, read in the dialect's one snapshot. */
function* dumpTables(db: DumpDatabase): Work<DumpTables> {
  const read = dumpReads(db.dialect);
  const users = yield* get(db.rows<UserUsage>(read.users));
  const tokens = (yield* get(db.rows<TokenRow<boolean | number>>(read.tokens))).map(toTokenRecord);
  const accounts = (yield* get(db.rows<AccountRow>(read.accounts))).map(toAccountRecord);
  const clients = (yield* get(db.rows<ClientRow>(read.clients))).map(toClientRecord);
  const grants = (yield* get(db.rows<GrantRow<boolean | number>>(read.grants))).map(toGrantRecord);
  const grantSecrets = (yield* get(db.rows<SecretRow>(read.grantSecrets))).map(toSecretRecord);
  const proposals = (yield* get(db.rows<ProposalRow>(read.proposals))).map(toProposalRecord);
  const [since] = yield* get(db.rows<{ at: number }>(read.openedSince));
  const tables = { users, tokens, accounts, clients, grants, grantSecrets, proposals };
  return since === undefined ? tables : { ...tables, openedSince: Number(since.at) };
}

/**
 * `dump` in place of everything the database holds, inside the dialect's one transaction:
 * refused (notEmptyError) unless the database is empty or `replace` says so; a token whose
 * id or hash another has is refused as when it is added (duplicateTokenError).
 */
export function* load(db: DumpDatabase, dump: StoreDump, options: LoadOptions): Work<void> {
  const changes = yield* startLoad(db, options);
  yield* loadEntries(db, dump.entries, 0, options);
  yield* finishLoad(db, dump, changes);
}

/**
 * `load` of a dump read as it is loaded (`dumped`, another store's dump in batches), inside
 * the dialect's one transaction: started, each batch written as it is handed over (once
 * `accept` lets it in, which may throw to refuse it), then finished with the tables the
 * dump answers at its end. A rejection anywhere is the caller's to roll back. `run` drives
 * each step: in turns on SQLite, awaited on PostgreSQL's connection.
 */
export async function loadInBatches(
  db: DumpDatabase,
  run: <T>(work: Work<T>) => Promise<T>,
  dumped: BatchedDump,
  options: BatchedLoadOptions,
  accept?: (entries: readonly DumpedEntry[]) => void,
): Promise<void> {
  const changes = await run(startLoad(db, options));
  let total = 0;
  let written = 0;
  const tables = await dumped({
    total: (entries) => {
      total = entries;
    },
    batch: async (entries) => {
      accept?.(entries);
      const onProgress = (count: number) => options.onProgress?.(count, total);
      await run(loadEntries(db, entries, written, { onProgress }));
      written += entries.length;
    },
  });
  await run(finishLoad(db, tables, changes));
}

/**
 * The start of a load, in its transaction: refused unless the database is empty or
 * `replace` says so, then emptied. Returns the change counter the loaded users start at.
 */
export function* startLoad(db: DumpDatabase, options: Pick<LoadOptions, 'replace'>): Work<number> {
  if (!options.replace && !(yield* isEmpty(db))) throw notEmptyError();
  const changes = yield* get(db.changesPastAll());
  yield* get(db.clear());
  return changes;
}

/** `entries` added, `db.batch` at a time, `written` before them: onProgress told the total written after each. */
export function* loadEntries(
  db: DumpDatabase,
  entries: readonly DumpedEntry[],
  written: number,
  options: Pick<LoadOptions, 'onProgress'>,
): Work<void> {
  for (let start = 0; start < entries.length; start += db.batch) {
    const batch = entries.slice(start, start + db.batch);
    yield* get(db.addEntries(batch));
    options.onProgress?.(written + start + batch.length);
  }
}

/** The end of a load, once every entry is in: the other tables, then what the schema keeps beside the rows. */
export function* finishLoad(db: DumpDatabase, tables: DumpTables, changes: number): Work<void> {
  yield* insertAll(db, USERS, tables.users, (u) => [u.user, u.totalBytes, u.entries, u.historyBytes, changes]);
  try {
    yield* insertAll(db, TOKENS, tables.tokens, (token) => tokenValues(token, db.dialect));
  } catch (error) {
    throw duplicateTokenOf(error, db.dialect) ?? error;
  }
  yield* insertAll(db, ACCOUNTS, tables.accounts, accountValues);
  yield* insertAll(db, CLIENTS, tables.clients, clientValues);
  yield* insertAll(db, GRANTS, tables.grants, (grant) => grantValues(grant, db.dialect.boolean));
  yield* insertAll(db, SECRETS, tables.grantSecrets, secretValues);
  yield* insertAll(db, PROPOSALS, tables.proposals, proposalValues);
  // The openings the dump carries were recorded since its store's start (a dump without one keeps this store's).
  if (tables.openedSince !== undefined) yield* get(db.rows(SET_OPENED_SINCE(tables.openedSince)));
  yield* get(db.finish());
}

/** Every one of `records` into `table`, `batch` rows per insert. */
function* insertAll<T>(
  db: DumpDatabase,
  table: DumpTable,
  records: readonly T[],
  values: (record: T) => unknown[],
): Work<void> {
  for (let start = 0; start < records.length; start += db.batch) {
    yield* get(db.insert(table, records.slice(start, start + db.batch).map(values)));
  }
}
