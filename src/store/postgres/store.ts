/**
 * The store for teams: one PostgreSQL database behind any number of stateless Engram
 * servers. Every write is one transaction that first locks the user's `users` row
 * (SELECT … FOR UPDATE), so writers of one user queue up across servers and no update
 * is lost; other users' writes run in parallel. Same data model as SQLite: live and
 * dropped entries in one `entries` table, usage in `users`, revisions per entry.
 */

import { EngramError } from '../../core/errors.js';
import type { IndexRow } from '../../core/format.js';
import { DEFAULT_POLICY } from '../../core/policy.js';
import type {
  Actor,
  Change,
  Decide,
  DecideAll,
  LoadOptions,
  MutationResult,
  RevisionRecord,
  Store,
  StoreDump,
  StoredEntry,
  TrashedEntry,
  UndropCheck,
  UndropResult,
  Usage,
} from '../../core/store.js';
import { utf8Bytes } from '../../core/text.js';
import { entryBytes, revisionBytes } from '../../core/usage.js';
import { TRIM_BATCH, Trim } from '../history-cap.js';
import { type EntryRow, type TrashRow, toEntry, toTrashedEntry } from '../sql-rows.js';
import { dumpDatabase, isEmpty, loadDatabase } from './dump.js';
import { migrate } from './migrations.js';
import { createPool, type Pool, type PoolOptions, type Queryable, type Statement, serverAddress } from './pool.js';
import { statement } from './statements.js';
import { PostgresTokenStore } from './tokens.js';
import { callDecide, Runner } from './transaction.js';

export interface PostgresStoreOptions extends PoolOptions {
  /** Revisions kept per entry; older ones are deleted as new ones arrive. */
  readonly historyLimit?: number;
  /** Most bytes of history one user keeps (see history-cap.ts); default Policy.historyCap. */
  readonly historyCap?: number;
  /** Clock in milliseconds; tests inject one. */
  readonly now?: () => number;
}

export class PostgresStore implements Store {
  private readonly now: () => number;
  private readonly historyLimit: number;
  private readonly historyCap: number;
  private closed = false;
  readonly tokens: PostgresTokenStore;

  /** Connects and brings the schema up to date; an unreachable database is a STORE_UNAVAILABLE error. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const pool = createPool(options);
    const db = new Runner(pool, serverAddress(options.connectionString));
    try {
      await migrate((work) => db.transaction(work));
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
    return new PostgresStore(pool, db, options);
  }

  private constructor(
    private readonly pool: Pool,
    private readonly db: Runner,
    options: PostgresStoreOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.historyLimit = options.historyLimit ?? 100;
    this.historyCap = options.historyCap ?? DEFAULT_POLICY.historyCap;
    this.tokens = new PostgresTokenStore(db);
  }

  async index(user: string): Promise<IndexRow[]> {
    return this.db.query<IndexRow>(statement('index', user));
  }

  async usage(user: string): Promise<Usage> {
    const [row] = await this.db.query<Usage>(statement('usage', user));
    return row ?? { totalBytes: 0, entries: 0 };
  }

  async get(user: string, names: readonly string[]): Promise<StoredEntry[]> {
    if (names.length === 0) return [];
    return (await this.db.query<EntryRow>(statement('liveAmong', user, names))).map(toEntry);
  }

  async mutate(actor: Actor, name: string, decide: Decide): Promise<MutationResult> {
    return this.db.transaction(async (db) => {
      const usage = await lockUser(db, actor.user);
      const row = await first<EntryRow>(db, statement('live', actor.user, name));
      const before = row && toEntry(row);
      const change = callDecide(() => decide(before, usage));
      return { before, after: await this.apply(db, actor, name, row, change) };
    });
  }

  async mutateAll(actor: Actor, decide: DecideAll): Promise<void> {
    await this.db.transaction(async (db) => {
      const usage = await lockUser(db, actor.user);
      const rows = (await db.query<EntryRow>(statement('allLive', actor.user))).rows;
      const byName = new Map(rows.map((row) => [row.name, row]));
      const changes = callDecide(() => decide(rows.map(toEntry), usage));
      for (const { name, change } of changes) await this.apply(db, actor, name, byName.get(name), change);
    });
  }

  async history(user: string, name: string): Promise<RevisionRecord[]> {
    return this.db.query<RevisionRecord>(statement('history', user, name));
  }

  async trash(user: string): Promise<TrashedEntry[]> {
    return (await this.db.query<TrashRow>(statement('trash', user))).map(toTrashedEntry);
  }

  async undrop(actor: Actor, name: string, check?: UndropCheck): Promise<UndropResult> {
    return this.db.transaction(async (db): Promise<UndropResult> => {
      const usage = await lockUser(db, actor.user);
      const row = await first<EntryRow>(db, statement('latestTrashed', actor.user, name));
      if (!row) return { status: 'missing' };
      if (await first(db, statement('live', actor.user, name))) return { status: 'taken' };
      if (check) callDecide(() => check(toEntry(row), usage));
      const revision = row.revision + 1;
      await db.query(statement('undrop', actor.user, row.id, revision));
      await db.query(statement('leaveTrash', actor.user, row.id, row.revision));
      const history = await this.record(db, actor, row.id, revision, 'undrop', this.now(), row.description, row.body);
      await this.account(db, actor.user, entryBytes(row.name, row.description, row.size), 1, history);
      return { status: 'restored', entry: { ...toEntry(row), revision } };
    });
  }

  /*
   * Purging deletes the rows (revisions go with them by ON DELETE CASCADE) and commits.
   * PostgreSQL's MVCC keeps the deleted row versions — bodies, descriptions, revisions —
   * as dead tuples in the table, TOAST and index pages until VACUUM (autovacuum, usually
   * within minutes) marks their space free; the bytes stay on disk until that space is
   * reused, or the table is rewritten by VACUUM FULL. The WAL, WAL archives, replicas
   * and backups keep their own copies for as long as those are retained.
   */
  async purge(user: string, name: string, options: { readonly includeLive: boolean }): Promise<number> {
    return this.db.transaction(async (db) => {
      await lockUser(db, user);
      const { rows } = await db.query<PurgedRow>(statement('purgeCopies', user, name, options.includeLive));
      // Their revisions leave the user's history; a purged live entry leaves their usage too.
      const live = rows.filter((row) => row.dropped_at === null);
      const bytes = live.reduce((sum, row) => sum + entryBytes(row.name, row.description, row.size), 0);
      const history = rows.reduce((sum, row) => sum + row.history, 0);
      if (rows.length > 0) await db.query(statement('addUsage', user, -bytes, -live.length, -history));
      return rows.length;
    });
  }

  /** Dropped entries count towards their users' history, so their users are locked first; see purge for what VACUUM keeps. */
  async purgeTrash(cutoff: number): Promise<number> {
    return this.db.transaction(async (db) => {
      await db.query(statement('lockExpiredUsers', cutoff));
      return (await first<{ purged: number }>(db, statement('purgeExpired', cutoff)))?.purged ?? 0;
    });
  }

  async isEmpty(): Promise<boolean> {
    return isEmpty(this.db);
  }

  async dump(): Promise<StoreDump> {
    return dumpDatabase(this.db);
  }

  async load(dump: StoreDump, options: LoadOptions): Promise<void> {
    await loadDatabase(this.db, dump, options);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  /** Applies one decided change to the live row (if any) and returns the entry after it. */
  private async apply(
    db: Queryable,
    actor: Actor,
    name: string,
    row: EntryRow | undefined,
    change: Change,
  ): Promise<StoredEntry | undefined> {
    if (change.kind === 'none') return row && toEntry(row);
    const at = this.now();
    if (change.kind === 'drop') {
      if (!row) return undefined;
      const revision = row.revision + 1;
      await db.query(statement('drop', actor.user, row.id, at, actor.label, revision));
      const history = await this.record(db, actor, row.id, revision, 'drop', at, row.description, row.body);
      await this.account(db, actor.user, -entryBytes(row.name, row.description, row.size), -1, history);
      return undefined;
    }
    refuseNul(name, change.description, change.body);
    const size = utf8Bytes(change.body);
    const revision = (row?.revision ?? 0) + 1;
    const values = [change.description, change.body, size, at, revision];
    let id: number;
    if (row) {
      id = row.id;
      await db.query(statement('update', actor.user, id, ...values));
    } else {
      const inserted = await first<{ id: number }>(db, statement('insert', actor.user, name, ...values));
      id = inserted!.id;
    }
    const history = await this.record(db, actor, id, revision, change.operation, at, change.description, change.body);
    const bytes =
      entryBytes(name, change.description, size) - (row ? entryBytes(row.name, row.description, row.size) : 0);
    await this.account(db, actor.user, bytes, row ? 0 : 1, history);
    return {
      name,
      description: change.description,
      body: change.body,
      size,
      created: row?.created ?? at,
      updated: at,
      revision,
    };
  }

  /** Records the revision, deletes the entry's ones past historyLimit, and returns how the history's bytes moved. */
  private async record(
    db: Queryable,
    actor: Actor,
    id: number,
    revision: number,
    operation: RevisionRecord['operation'],
    at: number,
    description: string,
    body: string,
  ): Promise<number> {
    await db.query(statement('addRevision', actor.user, id, revision, operation, actor.label, at, description, body));
    let trimmed = 0;
    if (revision > this.historyLimit) {
      const { rows } = await db.query<{ bytes: number }>(
        statement('trimRevisions', actor.user, id, revision - this.historyLimit),
      );
      trimmed = rows.reduce((sum, row) => sum + row.bytes, 0);
    }
    return revisionBytes(description, body) - trimmed;
  }

  /** Moves the user's counters by these deltas (one statement), then keeps their history within the cap. */
  private async account(db: Queryable, user: string, bytes: number, entries: number, history: number): Promise<void> {
    const after = await first<{ history_bytes: number; entries: number }>(
      db,
      statement('addUsage', user, bytes, entries, history),
    );
    const trim = after && Trim.of(after.history_bytes, this.historyCap);
    if (trim) await this.trimHistory(db, user, trim, after.entries);
  }

  /**
   * Trims the user's history (see history-cap.ts): their oldest revisions that are not the
   * latest of their entry, then their oldest dropped entries whole (the latest revision of a
   * live entry always stays). Batches of TRIM_BATCH rows, read by index.
   */
  private async trimHistory(db: Queryable, user: string, trim: Trim, liveEntries: number): Promise<void> {
    for (let more = true; more && !trim.done; ) {
      type Older = { entry_id: number; revision: number; bytes: number };
      const window = liveEntries + TRIM_BATCH;
      const older = (await db.query<Older>(statement('olderRevisions', user, TRIM_BATCH, window))).rows;
      const doomed = trim.take(older);
      if (doomed.length > 0) {
        const [ids, revisions] = [doomed.map((row) => row.entry_id), doomed.map((row) => row.revision)];
        await db.query(statement('deleteRevisionsAmong', user, ids, revisions));
      }
      more = older.length === TRIM_BATCH;
    }
    for (let more = true; more && !trim.done; ) {
      const trash = (await db.query<{ id: number; bytes: number }>(statement('oldestTrash', user, TRIM_BATCH))).rows;
      // Revisions go with their entry (ON DELETE CASCADE).
      const ids = trim.take(trash).map((row) => row.id);
      if (ids.length > 0) await db.query(statement('deleteEntriesAmong', user, ids));
      more = trash.length === TRIM_BATCH;
    }
    if (trim.freed > 0) await db.query(statement('addUsage', user, 0, 0, -trim.freed));
  }
}

/** A copy deleted by purge, with the bytes its revisions took. */
interface PurgedRow {
  name: string;
  description: string;
  size: number;
  dropped_at: number | null;
  history: number;
}

/** Takes the lock that serialises the user's writes (creating their row on first write) and reads their usage. */
async function lockUser(db: Queryable, user: string): Promise<Usage> {
  await db.query(statement('ensureUser', user));
  return (await first<Usage>(db, statement('lockUser', user))) ?? { totalBytes: 0, entries: 0 };
}

async function first<Row>(db: Queryable, query: Statement): Promise<Row | undefined> {
  return (await db.query<Row>(query)).rows[0];
}

/** PostgreSQL text cannot hold U+0000; refuse it with a message rather than a driver error. */
function refuseNul(name: string, description: string, body: string): void {
  if (!description.includes('\0') && !body.includes('\0')) return;
  throw new EngramError(
    'INVALID_ARGUMENT',
    `${name} cannot be saved: its text contains the NUL character (\\u0000), which this PostgreSQL store cannot hold. Remove it and call again.`,
  );
}
