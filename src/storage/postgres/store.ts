/**
 * The store for teams: one PostgreSQL database behind any number of stateless Engram
 * servers. A write is decided on one read of the user's counters and entry (or on what
 * this process knows of them already, write-cache.ts), then saved by one statement that
 * commits on its own, only if the user's change counter has not moved since
 * (statements.ts, saveParts): two round trips at most, no lock held between them. When it
 * has moved (another writer came first), or the write is not a plain write of an entry,
 * it runs as one transaction that first locks the user's `users` row (SELECT … FOR
 * UPDATE), so writers of one user queue up across servers and no update is lost; other
 * users' writes run in parallel. Within one process a user's writes go one at a time
 * (UserQueue), so they never race each other for the counter. Same data model as SQLite:
 * live and dropped entries in one `entries` table, usage in `users`, revisions per entry.
 */

import type { ActivityQuery, ActivityRecord, ActorCount, ChangeListener } from '../../memory/activity.js';
import { type AppliedChange, applyChange, applyUndrop, entryAfter } from '../../memory/model/apply.js';
import { EngramError } from '../../memory/model/errors.js';
import type { IndexRow } from '../../memory/model/format.js';
import { searchText } from '../../memory/model/search-words.js';
import { entryBytes } from '../../memory/model/usage.js';
import type {
  Caller,
  Change,
  Decide,
  DecideAll,
  LoadOptions,
  MutationResult,
  OverviewRow,
  RevisionRecord,
  StoreDump,
  StoredEntry,
  TrashedEntry,
  UndropCheck,
  UndropResult,
  Usage,
  UserUsage,
  WriteRules,
} from '../../memory/port.js';
import { type SearchedEntry, type SearchHit, type SearchTerms, searchHit } from '../../memory/search.js';
import type { StorageBackend } from '../backend.js';
import { ChangeFeed, mutationDetails, recordingDecide } from '../change-feed.js';
import { TRIM_BATCH, Trim } from '../history-cap.js';
import { SqlAccountStore } from '../sql/accounts.js';
import { SqlOAuthStore } from '../sql/oauth.js';
import { type EntryRow, type TrashRow, toEntry, toTrashedEntry } from '../sql-rows.js';
import { Batcher, pairKey, pairs } from './batch.js';
import type { Pool, Queryable, Statement } from './driver.js';
import { dumpDatabase, isEmpty, loadDatabase } from './dump.js';
import { migrate } from './migrations.js';
import { createPool, type PoolOptions, poolSize, serverAddress } from './pool.js';
import { PostgresSqlDatabase } from './sql-database.js';
import { searchQuery, statement } from './statements.js';
import { PostgresTokenStore } from './tokens.js';
import { callDecide, Runner } from './transaction.js';
import { UserQueue } from './user-queue.js';
import { type Known, WriteCache } from './write-cache.js';

/** The connection and its pool; the clock and the history limits come with each write (WriteRules). */
export type PostgresStoreOptions = PoolOptions;

/**
 * How often a watched store reads the watched users' change counters, for changes other
 * servers commit: one indexed query of those users only, and only while someone watches.
 * (LISTEN/NOTIFY would tell sooner, but a NOTIFY in every write transaction takes a lock
 * held through each commit, serialising the commits of every writer of every database.)
 */
const WATCH_POLL_MS = 500;

/** Most bytes of bodies the write cache (write-cache.ts) holds. */
const KNOWN_BYTES = 16 * 1024 * 1024;

/** A position after every one of activity's (newest-first) order; a revision is an integer column. */
const NEWEST = { at: Number.MAX_SAFE_INTEGER, entry: Number.MAX_SAFE_INTEGER, revision: 2 ** 31 - 1 };

export class PostgresStore implements StorageBackend {
  private closed = false;
  private readonly feed: ChangeFeed;
  private readonly writers = new UserQueue();
  private readonly known = new WriteCache(KNOWN_BYTES);
  /** Live entries by (user, name), read in batches. */
  private readonly reads: Batcher<string, StoredEntry | undefined>;
  /** What writes are decided on (readForWrite), read in batches. */
  private readonly seen: Batcher<string, SeenRow | undefined>;
  readonly tokens: PostgresTokenStore;
  readonly accounts: SqlAccountStore;
  readonly oauth: SqlOAuthStore;

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
    return new PostgresStore(pool, db, poolSize(options));
  }

  private constructor(
    private readonly pool: Pool,
    private readonly db: Runner,
    connections: number,
  ) {
    // Each kind of read alone on at most half the pool's connections; the rest wait and go together.
    const alone = Math.max(1, Math.floor(connections / 2));
    this.reads = new Batcher(async (keys) => {
      const rows = await db.query<EntryRow & { user: string }>(statement('liveOf', ...pairs(keys)));
      const found = new Map(rows.map((row) => [pairKey(row.user, row.name), toEntry(row)]));
      return (key) => found.get(key);
    }, alone);
    this.seen = new Batcher(async (keys) => {
      const rows = await db.query<SeenRow & { user: string; wanted: string }>(
        statement('readForWrite', ...pairs(keys)),
      );
      const found = new Map(rows.map((row) => [pairKey(row.user, row.wanted), row]));
      return (key): SeenRow | undefined => found.get(key);
    }, alone);
    const access = new PostgresSqlDatabase(db);
    this.tokens = new PostgresTokenStore(access, alone);
    this.accounts = new SqlAccountStore(access);
    this.oauth = new SqlOAuthStore(access);
    this.feed = new ChangeFeed({
      readVersions: async (users) => {
        const rows = await db.query<{ user: string; changes: number }>(statement('versions', users));
        return new Map(rows.map((row) => [row.user, row.changes]));
      },
      pollMs: WATCH_POLL_MS,
    });
  }

  async index(user: string): Promise<IndexRow[]> {
    return this.db.query<IndexRow>(statement('index', user));
  }

  async overview(user: string): Promise<OverviewRow[]> {
    return this.db.query<OverviewRow>(statement('overview', user));
  }

  async usage(user: string): Promise<Usage> {
    const [row] = await this.db.query<Usage>(statement('usage', user));
    return row ?? { totalBytes: 0, entries: 0 };
  }

  async users(): Promise<UserUsage[]> {
    return this.db.query<UserUsage>(statement('users'));
  }

  async get(user: string, names: readonly string[]): Promise<StoredEntry[]> {
    const entries = await Promise.all([...new Set(names)].map((name) => this.reads.load(pairKey(user, name))));
    return entries.filter((entry) => entry !== undefined);
  }

  async mutate(caller: Caller, name: string, decide: Decide, rules: WriteRules): Promise<MutationResult> {
    const recording = recordingDecide(decide);
    const result = await this.writers.run(caller.user, async () => {
      const attempt = await this.mutateAtOnce(caller, name, recording.decide, rules);
      if (attempt && 'after' in attempt) return attempt;
      return this.db.transaction(async (db) => {
        const { usage, changes } = await lockUser(db, caller.user);
        // Nothing committed since the decision was made: it stands, on the rows it was made on.
        if (attempt && changes === attempt.changes) {
          return {
            before: attempt.before,
            after: await this.apply(db, caller, name, attempt.row, attempt.change, rules),
          };
        }
        if (attempt?.lost) throw this.db.mayHaveCommitted();
        const row = await first<EntryRow>(db, statement('live', caller.user, name));
        const before = row && toEntry(row);
        const change = callDecide(() => recording.decide(before, usage));
        return { before, after: await this.apply(db, caller, name, row, change, rules) };
      });
    });
    const details = mutationDetails(name, recording.decided(), result);
    if (details) this.feed.committed(caller.user, details);
    return result;
  }

  /**
   * A write decided on one snapshot and saved by one statement if the user's change
   * counter is still what it read. Otherwise the decision, for the lock to take over: a
   * drop, a write that takes the history over its cap (trimming reads the user's oldest
   * rows), a counter that moved in between, or a connection lost while saving (`lost`:
   * whether the save committed is known only by the counter). Undefined for a user not
   * yet known. What decide throws reaches the caller as is.
   */
  private async mutateAtOnce(
    caller: Caller,
    name: string,
    decide: Decide,
    rules: WriteRules,
  ): Promise<MutationResult | Decision | undefined> {
    const { user } = caller;
    const known = this.known.get(user, name) ?? (await this.readKnown(user, name));
    if (!known) return undefined;
    const { row } = known;
    const before = row && toEntry(row);
    const change = decide(before, known.usage);
    if (change.kind === 'none') return { before, after: before };
    const decision = { changes: known.changes, row, before, change, lost: false };
    if (change.kind !== 'put') return this.underLock(user, decision);
    refuseNul(name, change.description, change.body);
    const applied = applyChange({
      name,
      current: before,
      change,
      caller,
      at: rules.now(),
      historyLimit: rules.historyLimit,
    });
    if (!applied || Trim.of(known.historyBytes + applied.usage.historyBytes, rules.historyCap)) {
      return this.underLock(user, decision);
    }
    const saved = await this.db.commit<SavedRow>(save(user, known.changes, row?.id, applied));
    if (saved === 'lost') return this.underLock(user, { ...decision, lost: true });
    const [after] = saved;
    if (!after) return this.underLock(user, decision);
    this.known.saved(user, name, {
      changes: known.changes + 1,
      usage: { totalBytes: after.total_bytes, entries: after.entries },
      historyBytes: after.history_bytes,
      row: { id: after.id, ...applied.entry },
    });
    return { before, after: applied.entry };
  }

  /** A decision left to the lock: the user's counter moves, or may have moved, in ways this process does not follow. */
  private underLock(user: string, decision: Decision): Decision {
    this.known.forget(user);
    return decision;
  }

  /** The user's state and `name`'s live entry, read (in a batch) and remembered; undefined for a user not yet known. */
  private async readKnown(user: string, name: string): Promise<Known | undefined> {
    const seen = await this.seen.load(pairKey(user, name));
    if (!seen) return undefined;
    const known = {
      changes: seen.changes,
      usage: { totalBytes: seen.totalBytes, entries: seen.entries },
      historyBytes: seen.history_bytes,
      row: seen.id === null ? undefined : (seen as EntryRow),
    };
    this.known.remember(user, name, known);
    return known;
  }

  async mutateAll(caller: Caller, decide: DecideAll, rules: WriteRules): Promise<void> {
    await this.db.transaction(async (db) => {
      const { usage } = await lockUser(db, caller.user);
      const rows = (await db.query<EntryRow>(statement('allLive', caller.user))).rows;
      const byName = new Map(rows.map((row) => [row.name, row]));
      const changes = callDecide(() => decide(rows.map(toEntry), usage));
      for (const { name, change } of changes) await this.apply(db, caller, name, byName.get(name), change, rules);
    });
    this.known.forget(caller.user);
    this.feed.committed(caller.user);
  }

  async history(user: string, name: string): Promise<RevisionRecord[]> {
    return this.db.query<RevisionRecord>(statement('history', user, name));
  }

  async trash(user: string): Promise<TrashedEntry[]> {
    return (await this.db.query<TrashRow>(statement('trash', user))).map(toTrashedEntry);
  }

  async undrop(caller: Caller, name: string, rules: WriteRules, check?: UndropCheck): Promise<UndropResult> {
    const result = await this.undropCopy(caller, name, rules, check);
    this.known.forget(caller.user);
    if (result.status === 'restored') {
      this.feed.committed(caller.user, { name, revision: result.entry.revision, operation: 'undrop' });
    }
    return result;
  }

  private undropCopy(caller: Caller, name: string, rules: WriteRules, check?: UndropCheck): Promise<UndropResult> {
    return this.db.transaction(async (db): Promise<UndropResult> => {
      const { usage } = await lockUser(db, caller.user);
      const row = await first<EntryRow>(db, statement('latestTrashed', caller.user, name));
      if (!row) return { status: 'missing' };
      if (await first(db, statement('live', caller.user, name))) return { status: 'taken' };
      const dropped = toEntry(row);
      if (check) callDecide(() => check(dropped, usage));
      const applied = applyUndrop(dropped, caller, rules.now(), rules.historyLimit);
      await this.persist(db, caller.user, row.id, applied, rules);
      return { status: 'restored', entry: applied.entry };
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
    const purged = await this.db.transaction(async (db) => {
      await lockUser(db, user);
      const { rows } = await db.query<PurgedRow>(statement('purgeCopies', user, name, options.includeLive));
      // Their revisions leave the user's history; a purged live entry leaves their usage too.
      const live = rows.filter((row) => row.dropped_at === null);
      const bytes = live.reduce((sum, row) => sum + entryBytes(row.name, row.description, row.size), 0);
      const history = rows.reduce((sum, row) => sum + row.history, 0);
      if (rows.length > 0) await db.query(statement('addUsage', user, -bytes, -live.length, -history));
      return rows.length;
    });
    this.known.forget(user);
    if (purged > 0) this.feed.committed(user, { name });
    return purged;
  }

  /** Dropped entries count towards their users' history, so their users are locked first; see purge for what VACUUM keeps. */
  async purgeTrash(cutoff: number): Promise<number> {
    const purged = await this.db.transaction(async (db) => {
      await db.query(statement('lockExpiredUsers', cutoff));
      return (await first<{ purged: number }>(db, statement('purgeExpired', cutoff)))?.purged ?? 0;
    });
    this.known.clear();
    if (purged > 0) this.feed.committedSome();
    return purged;
  }

  async activity(user: string, query: ActivityQuery): Promise<ActivityRecord[]> {
    const { at, entry, revision } = query.before ?? NEWEST;
    const values = [user, at, entry, revision, query.limit];
    return query.actor === undefined
      ? this.db.query<ActivityRecord>(statement('activity', ...values))
      : this.db.query<ActivityRecord>(statement('activityOf', ...values, query.actor));
  }

  async actors(user: string): Promise<ActorCount[]> {
    return this.db.query<ActorCount>(statement('actors', user));
  }

  watch(user: string, listener: ChangeListener): Promise<() => void> {
    return this.feed.watch(user, listener);
  }

  /** By the GIN index of the live entries' search vectors (migrations.ts, step 4). */
  async search(user: string, terms: SearchTerms, options: { readonly limit: number }): Promise<SearchHit[]> {
    const [anywhere, inName, inDescription] = [searchQuery(terms), searchQuery(terms, 'A'), searchQuery(terms, 'B')];
    const rows = await this.db.query<SearchedEntry>(
      statement('search', user, anywhere, inName, inDescription, options.limit),
    );
    return rows.map((row) => searchHit(row, terms));
  }

  async isEmpty(): Promise<boolean> {
    return isEmpty(this.db);
  }

  async dump(): Promise<StoreDump> {
    return dumpDatabase(this.db);
  }

  async load(dump: StoreDump, options: LoadOptions): Promise<void> {
    await loadDatabase(this.db, dump, options);
    this.known.clear();
    this.feed.committedSome();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.feed.close();
    await this.pool.end();
  }

  /** Applies one decided change to the live row (if any) and returns the entry after it. */
  private async apply(
    db: Queryable,
    caller: Caller,
    name: string,
    row: EntryRow | undefined,
    change: Change,
    rules: WriteRules,
  ): Promise<StoredEntry | undefined> {
    const current = row && toEntry(row);
    if (change.kind === 'put') refuseNul(name, change.description, change.body);
    const applied = applyChange({ name, current, change, caller, at: rules.now(), historyLimit: rules.historyLimit });
    if (applied) await this.persist(db, caller.user, row?.id, applied, rules);
    return entryAfter(current, applied);
  }

  /**
   * Persists what applyChange or applyUndrop returned on the row `id` (a new row when
   * undefined): the entry, its revision, the revisions past historyLimit deleted, the
   * user's counters moved (a write: all in one statement, save), then their history kept
   * within the cap.
   */
  private async persist(
    db: Queryable,
    user: string,
    id: number | undefined,
    applied: AppliedChange,
    rules: WriteRules,
  ): Promise<void> {
    const { entry, record } = applied;
    if (applied.kind === 'write') {
      const saved = await first<SavedRow>(db, save(user, null, id, applied));
      if (!saved) throw new Error(`the save of ${entry.name} under the user's lock wrote nothing`);
      const trim = Trim.of(saved.history_bytes, rules.historyCap);
      if (trim) await this.trimHistory(db, user, trim, saved.entries);
      return;
    }
    if (id === undefined) throw new Error(`no row to ${applied.kind} for ${entry.name}`);
    if (applied.kind === 'drop') {
      await db.query(statement('drop', user, id, record.at, record.actor, entry.revision));
    } else {
      await db.query(statement('undrop', user, id, entry.revision));
      await db.query(statement('leaveTrash', user, id, entry.revision - 1));
    }
    const { revision, operation, actor, at, description, body } = record;
    await db.query(statement('addRevision', user, id, revision, operation, actor, at, description, body));
    let trimmed = 0;
    if (applied.trimThrough > 0) {
      const { rows } = await db.query<{ bytes: number }>(statement('trimRevisions', user, id, applied.trimThrough));
      trimmed = rows.reduce((sum, row) => sum + row.bytes, 0);
    }
    const { usage } = applied;
    const after = await first<{ history_bytes: number; entries: number }>(
      db,
      statement('addUsage', user, usage.totalBytes, usage.entries, usage.historyBytes - trimmed),
    );
    const trim = after && Trim.of(after.history_bytes, rules.historyCap);
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

/** A change decided without the lock, on the rows as they were when the user's change counter was `changes`. */
interface Decision {
  readonly changes: number;
  readonly row: EntryRow | undefined;
  readonly before: StoredEntry | undefined;
  readonly change: Change;
  /** The connection was lost while saving it: it may have committed. */
  readonly lost: boolean;
}

/** What readForWrite reads: the user's counters, and their live entry's columns (NULLs when there is none). */
type SeenRow = { changes: number; totalBytes: number; entries: number; history_bytes: number } & (
  | EntryRow
  | { id: null }
);

/** What a save returns when it wrote: the entry's id and the user's history and live entries after it. */
interface SavedRow {
  id: number;
  total_bytes: number;
  history_bytes: number;
  entries: number;
}

/**
 * The statement that saves a write (statements.ts, saveParts): over the live row `id`, or
 * as a new row; only while the user's change counter is `changes` (null: under the lock).
 */
function save(user: string, changes: number | null, id: number | undefined, applied: AppliedChange): Statement {
  const { entry, record, usage } = applied;
  if (
    record.revision !== entry.revision ||
    record.at !== entry.updated ||
    record.description !== entry.description ||
    record.body !== entry.body
  ) {
    throw new Error(`the revision of a write of ${entry.name} does not record the entry as written`);
  }
  const values = [
    user,
    changes,
    usage.totalBytes,
    usage.entries,
    usage.historyBytes,
    entry.description,
    entry.body,
    entry.size,
    entry.updated,
    entry.revision,
    searchText(entry.name),
    searchText(entry.description),
    searchText(entry.body),
    record.operation,
    record.actor,
  ];
  return id === undefined
    ? statement('saveNew', ...values, entry.name, applied.trimThrough)
    : statement('saveOver', ...values, id, applied.trimThrough);
}

/** A copy deleted by purge, with the bytes its revisions took. */
interface PurgedRow {
  name: string;
  description: string;
  size: number;
  dropped_at: number | null;
  history: number;
}

/**
 * Takes the lock that serialises the user's writes (creating their row on first write) and
 * reads their usage and change counter.
 */
async function lockUser(db: Queryable, user: string): Promise<{ usage: Usage; changes: number }> {
  type Locked = Usage & { changes: number };
  let locked = await first<Locked>(db, statement('lockUser', user));
  if (!locked) {
    await db.query(statement('ensureUser', user));
    locked = await first<Locked>(db, statement('lockUser', user));
  }
  const { totalBytes, entries, changes } = locked ?? { totalBytes: 0, entries: 0, changes: 0 };
  return { usage: { totalBytes, entries }, changes };
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
