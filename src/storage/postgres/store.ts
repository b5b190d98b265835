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
 * (UserQueue), so they never race each other for the counter, and those that wait
 * behind another share one transaction and its commit (shared-commit.ts). Same data model as SQLite:
 * live and dropped entries in one `entries` table, usage in `users`, revisions per entry.
 */

import type { ActivityQuery, ActivityRecord, ActorCount, ChangeListener } from '../../memory/activity.js';
import { type AppliedChange, applyChange } from '../../memory/model/apply.js';
import type { IndexRow } from '../../memory/model/format.js';
import type {
  BatchedDump,
  BatchedLoadOptions,
  Caller,
  Change,
  CopyRevision,
  Decide,
  DecideAll,
  DumpTables,
  EntryBatches,
  LoadOptions,
  MutationResult,
  OpenedEntry,
  Overview,
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
import { type Accelerators, POSTGRES_ACCELERATORS, switchesOf } from '../accelerators.js';
import type { StorageBackend } from '../backend.js';
import { ChangeFeed, mutationDetails, recordingDecide } from '../change-feed.js';
import { runAsync } from '../engine/drive.js';
import { purge, purgeTrash } from '../engine/purge.js';
import { apply, mutate, mutateAll, undrop } from '../engine/writes.js';
import { Trim } from '../history-cap.js';
import { assertSchemaCurrent } from '../schema-version.js';
import { SqlAccountStore } from '../sql/accounts.js';
import { SqlOAuthStore } from '../sql/oauth.js';
import { SqlProposalStore } from '../sql/proposals.js';
import {
  type EntryRow,
  type OverviewColumns,
  type RevisionColumns,
  type TrashRow,
  toEntry,
  toEntryFromColumns,
  toOverviewRow,
  toRevision,
  toTrashedEntry,
} from '../sql-rows.js';
import { Batcher, pairKey, pairs } from './batch.js';
import type { Pool, Queryable, Statement } from './driver.js';
import {
  databaseIdentity,
  dumpDatabase,
  dumpDatabaseInBatches,
  isDatabaseEmpty,
  loadDatabase,
  loadDatabaseInBatches,
} from './dump.js';
import { MIGRATIONS, migrate } from './migrations.js';
import { createPool, type PoolOptions, poolSize, serverAddress } from './pool.js';
import { PostgresPrimitives, refuseNul, type SavedRow, save } from './primitives.js';
import { PostgresRateCounters } from './rate-counters.js';
import { MOST_SHARED, mostSharing, SharedCommit } from './shared-commit.js';
import { PostgresSqlDatabase } from './sql-database.js';
import { columnsStatement, LIVE_OF_USER, searchQuery, statement } from './statements.js';
import { PostgresTokenStore } from './tokens.js';
import { callDecide, Runner, type SharedTransaction } from './transaction.js';
import { UserQueue } from './user-queue.js';
import { type Known, WriteCache } from './write-cache.js';

/** The connection and its pool; the clock and the history limits come with each write (WriteRules). */
export interface PostgresStoreOptions extends PoolOptions {
  /**
   * The accelerators to switch on or off (accelerators.ts: POSTGRES_ACCELERATORS, their
   * defaults; docs/accelerators.md). SQLite's are ignored, so one record may serve both.
   */
  readonly accelerators?: Accelerators | undefined;
}

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
  /** The userQueue accelerator; undefined: off, a user's writes race and the database settles it. */
  private readonly writers: UserQueue | undefined;
  /** The transaction each user's waiting writes share (shared-commit.ts), while they share one. */
  private readonly shared = new Map<string, SharedCommit>();
  /** How many shared transactions are open, until their connection is given back; at most mostSharing of the pool. */
  private sharing = 0;
  private readonly mostSharing: number;
  /** The writeCache accelerator; undefined: off, every write reads what it is decided on. */
  private readonly known: WriteCache | undefined;
  /** Live entries by (user, name), read in batches. */
  private readonly reads: Batcher<string, StoredEntry | undefined>;
  /** What writes are decided on (readForWrite), read in batches. */
  private readonly seen: Batcher<string, SeenRow | undefined>;
  readonly tokens: PostgresTokenStore;
  readonly accounts: SqlAccountStore;
  readonly oauth: SqlOAuthStore;
  readonly proposals: SqlProposalStore;
  readonly rateCounters: PostgresRateCounters;

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
    return new PostgresStore(pool, db, poolSize(options), switchesOf(POSTGRES_ACCELERATORS, options.accelerators));
  }

  private constructor(
    private readonly pool: Pool,
    private readonly db: Runner,
    connections: number,
    private readonly accelerators: { readonly [K in keyof typeof POSTGRES_ACCELERATORS]: boolean },
  ) {
    this.writers = accelerators.userQueue ? new UserQueue() : undefined;
    this.mostSharing = mostSharing(connections);
    this.known = accelerators.writeCache ? new WriteCache(KNOWN_BYTES) : undefined;
    // Each kind of read alone on at most half the pool's connections; the rest wait and go together.
    // The readBatcher accelerator off: every read alone, as soon as it is asked.
    const alone = accelerators.readBatcher ? Math.max(1, Math.floor(connections / 2)) : Number.POSITIVE_INFINITY;
    // A batch of one by a statement whose plan PostgreSQL keeps (statements.ts, liveOf).
    // Rows read as arrays of their columns (columnsStatement): no object per row to build and take apart.
    this.reads = new Batcher(async (keys) => {
      const [users, names] = pairs(keys);
      if (keys.length === 1) {
        const [columns] = await db.query<unknown[]>(columnsStatement('live', users[0], names[0]));
        const entry = columns && toEntryFromColumns(columns);
        return () => entry;
      }
      const rows = await db.query<unknown[]>(columnsStatement('liveOf', users, names));
      const found = new Map(
        rows.map((columns) => {
          const entry = toEntryFromColumns(columns);
          return [pairKey(columns[LIVE_OF_USER] as string, entry.name), entry];
        }),
      );
      return (key) => found.get(key);
    }, alone);
    this.seen = new Batcher(async (keys) => {
      const [users, names] = pairs(keys);
      const rows = await db.query<SeenRow & { user: string; wanted: string }>(
        keys.length === 1 ? statement('readOneForWrite', users[0], names[0]) : statement('readForWrite', users, names),
      );
      const found = new Map(rows.map((row) => [pairKey(row.user, row.wanted), row]));
      return (key): SeenRow | undefined => found.get(key);
    }, alone);
    const access = new PostgresSqlDatabase(db);
    this.tokens = new PostgresTokenStore(access, alone);
    this.accounts = new SqlAccountStore(access);
    this.oauth = new SqlOAuthStore(access);
    // A proposal moves its user's change counter: what this process remembers of them is stale.
    this.proposals = new SqlProposalStore(access, (user) => {
      this.known?.forget(user);
      this.feed.committed(user);
    });
    this.rateCounters = new PostgresRateCounters(pool);
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

  async overview(user: string): Promise<Overview> {
    const [rows, [since]] = await Promise.all([
      this.db.query<OverviewColumns>(statement('overview', user)),
      this.db.query<{ at: number }>(statement('openedSince')),
    ]);
    return { entries: rows.map(toOverviewRow), openedSince: since?.at ?? 0 };
  }

  async recordOpened(opens: readonly OpenedEntry[], minimumGap: number): Promise<void> {
    if (opens.length === 0) return;
    await this.db.query(
      statement(
        'recordOpened',
        opens.map((open) => open.user),
        opens.map((open) => open.name),
        opens.map((open) => open.at),
        minimumGap,
      ),
    );
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
    const result = this.writers
      ? await (await this.writers.run(caller.user, () => this.inTurn(caller, name, recording.decide, rules))).answer
      : await this.writeAlone(caller, name, recording.decide, rules);
    const details = mutationDetails(name, recording.decided(), result);
    if (details) this.feed.committed(caller.user, details);
    return result;
  }

  /** A write decided without the lock and saved by one statement if it can be, else in a transaction under the lock. */
  private async writeAlone(caller: Caller, name: string, decide: Decide, rules: WriteRules): Promise<MutationResult> {
    const attempt = this.accelerators.optimisticSave ? await this.mutateAtOnce(caller, name, decide, rules) : undefined;
    if (attempt && 'after' in attempt) return attempt;
    return this.db.transaction(async (db) => {
      const { usage, changes } = await lockUser(db, caller.user);
      const rows = new PostgresPrimitives(db, { user: caller.user, usage });
      // Nothing committed since the decision was made: it stands, on the rows it was made on.
      if (attempt && changes === attempt.changes) {
        const { row, before, change } = attempt;
        return { before, after: await runAsync(apply(rows, caller, name, row?.id, before, change, rules)) };
      }
      if (attempt?.lost) throw this.db.mayHaveCommitted();
      return runAsync(mutate(rows, caller, name, refusing(decide), rules));
    });
  }

  /**
   * A write in its user's turn (UserQueue): alone when none of the user's writes waits
   * behind it (or as many shared transactions are open as may be), else in the transaction
   * the user's waiting writes share (shared-commit.ts). Settles when the next write may
   * take its turn; `answer` settles once the write is committed (or known not to be).
   */
  private async inTurn(
    caller: Caller,
    name: string,
    decide: Decide,
    rules: WriteRules,
  ): Promise<{ answer: Promise<MutationResult> }> {
    const { user } = caller;
    const again = () => this.writeAlone(caller, name, decide, rules);
    let shared = this.shared.get(user);
    if (!shared) {
      if (!this.accelerators.optimisticSave || this.writers!.waiting(user) === 0 || this.sharing >= this.mostSharing) {
        return settled(again());
      }
      shared = new SharedCommit();
      this.shared.set(user, shared);
      this.sharing++;
    }
    let step: Awaited<ReturnType<PostgresStore['mutateShared']>>;
    try {
      step = await this.mutateShared(shared, caller, name, decide, rules);
    } catch (error) {
      await this.endShared(user, shared, error);
      return settled(again());
    }
    if (step === 'alone') {
      await this.endShared(user, shared);
      return settled(again());
    }
    const answer = handled(shared.add(step, again));
    if (shared.size >= MOST_SHARED || this.writers!.waiting(user) === 0) await this.endShared(user, shared);
    return { answer };
  }

  /**
   * Ends the user's shared transaction: commits it, or after `failed` (a statement that
   * failed) rolls it back. What was not written is made again, write by write.
   */
  private async endShared(user: string, shared: SharedCommit, failed?: unknown): Promise<void> {
    this.shared.delete(user);
    const ended = await this.endTransaction(shared.transaction, failed);
    this.sharing--;
    if (ended === 'committed') {
      shared.committed();
      return;
    }
    this.known?.forget(user);
    if (ended === 'lost') shared.uncertain(this.db.mayHaveCommitted());
    else await shared.again();
  }

  /** Commits `transaction`, or rolls it back after `failed`; none begun (nothing saved): nothing to commit. */
  private async endTransaction(
    transaction: SharedTransaction | undefined,
    failed: unknown,
  ): Promise<'committed' | 'lost' | 'rolled back'> {
    if (!transaction) return 'committed';
    if (failed === undefined) return this.db.finish(transaction).catch(() => 'rolled back' as const);
    await this.db.abandon(transaction, failed);
    return 'rolled back';
  }

  /**
   * A write in its user's shared transaction, decided on what the writes before it saved
   * there (before the first save, on what is committed): what it answers once the
   * transaction commits, or `alone` for a write that is not saved by one statement (it
   * goes under the lock, alone).
   */
  private async mutateShared(
    shared: SharedCommit,
    caller: Caller,
    name: string,
    decide: Decide,
    rules: WriteRules,
  ): Promise<{ readonly result: MutationResult } | { readonly error: unknown } | 'alone'> {
    const { user } = caller;
    const known =
      this.known?.get(user, name) ??
      (shared.transaction
        ? await this.readKnownOn(shared.transaction.connection, user, name)
        : await this.readKnown(user, name));
    if (!known) return 'alone';
    let decided: ReturnType<PostgresStore['decideAtOnce']>;
    try {
      decided = this.decideAtOnce(caller, name, decide, rules, known);
    } catch (error) {
      return { error };
    }
    if ('after' in decided) return { result: decided };
    if (!('statement' in decided)) return 'alone';
    const { decision, applied, statement: saving } = decided;
    const transaction = await shared.begun(() => this.db.begin());
    const [after] = (await transaction.connection.query<SavedRow>(saving)).rows;
    if (!after) {
      this.underLock(user, decision);
      return 'alone';
    }
    transaction.xid = after.xid;
    this.rememberSaved(user, name, known, after, applied);
    return { result: { before: decision.before, after: applied.entry } };
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
    const known = this.known?.get(user, name) ?? (await this.readKnown(user, name));
    if (!known) return undefined;
    const decided = this.decideAtOnce(caller, name, decide, rules, known);
    if (!('statement' in decided)) return decided;
    const { decision, applied, statement: saving } = decided;
    const saved = await this.db.commit<SavedRow>(saving);
    if (saved === 'lost') return this.underLock(user, { ...decision, lost: true });
    const [after] = saved;
    if (!after) return this.underLock(user, decision);
    this.rememberSaved(user, name, known, after, applied);
    return { before: decision.before, after: applied.entry };
  }

  /**
   * A write decided on `known`, without the lock: its result when it changes nothing, the
   * decision left to the lock, or the statement that saves it while the user's change
   * counter is still `known.changes`. What decide throws, it throws.
   */
  private decideAtOnce(
    caller: Caller,
    name: string,
    decide: Decide,
    rules: WriteRules,
    known: Known,
  ): MutationResult | Decision | { decision: Decision; applied: AppliedChange; statement: Statement } {
    const { user } = caller;
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
      note: rules.note,
      // The save adds what an append added to the entry's search vector (statements.ts, saveOver).
      withAppended: true,
    });
    if (!applied || Trim.of(known.historyBytes + applied.usage.historyBytes, rules.historyCap)) {
      return this.underLock(user, decision);
    }
    return { decision, applied, statement: save(user, known.changes, row?.id, applied) };
  }

  /** What this process's own save made: the user's counters after it, and the entry as written. */
  private rememberSaved(user: string, name: string, known: Known, after: SavedRow, applied: AppliedChange): void {
    this.known?.saved(user, name, {
      changes: known.changes + 1,
      usage: { totalBytes: after.total_bytes, entries: after.entries },
      historyBytes: after.history_bytes,
      row: { id: after.id, ...applied.entry },
    });
  }

  /** A decision left to the lock: the user's counter moves, or may have moved, in ways this process does not follow. */
  private underLock(user: string, decision: Decision): Decision {
    this.known?.forget(user);
    return decision;
  }

  /** The user's state and `name`'s live entry, read (in a batch) and remembered; undefined for a user not yet known. */
  private async readKnown(user: string, name: string): Promise<Known | undefined> {
    return this.remembered(user, name, await this.seen.load(pairKey(user, name)));
  }

  /** readKnown on `connection`, in the transaction it holds: what the writes before this one saved there included. */
  private async readKnownOn(connection: Queryable, user: string, name: string): Promise<Known | undefined> {
    const { rows } = await connection.query<SeenRow>(statement('readOneForWrite', user, name));
    return this.remembered(user, name, rows[0]);
  }

  private remembered(user: string, name: string, seen: SeenRow | undefined): Known | undefined {
    if (!seen) return undefined;
    const known = {
      changes: seen.changes,
      usage: { totalBytes: seen.totalBytes, entries: seen.entries },
      historyBytes: seen.history_bytes,
      row: seen.id === null ? undefined : (seen as EntryRow),
    };
    this.known?.remember(user, name, known);
    return known;
  }

  async mutateAll(caller: Caller, decide: DecideAll, rules: WriteRules): Promise<void> {
    await this.db.transaction(async (db) => {
      const { usage } = await lockUser(db, caller.user);
      const rows = new PostgresPrimitives(db, { user: caller.user, usage });
      await runAsync(mutateAll(rows, caller, refusing(decide), rules));
    });
    this.known?.forget(caller.user);
    this.feed.committed(caller.user);
  }

  async history(user: string, name: string): Promise<RevisionRecord[]> {
    return (await this.db.query<RevisionColumns>(statement('history', user, name))).map(toRevision);
  }

  async timeline(user: string, name: string): Promise<CopyRevision[]> {
    return (await this.db.query<RevisionColumns<CopyRevision>>(statement('timeline', user, name))).map(toRevision);
  }

  async trash(user: string): Promise<TrashedEntry[]> {
    return (await this.db.query<TrashRow>(statement('trash', user))).map(toTrashedEntry);
  }

  async undrop(caller: Caller, name: string, rules: WriteRules, check?: UndropCheck): Promise<UndropResult> {
    const result = await this.undropCopy(caller, name, rules, check);
    this.known?.forget(caller.user);
    if (result.status === 'restored') {
      this.feed.committed(caller.user, { name, revision: result.entry.revision, operation: 'undrop' });
    }
    return result;
  }

  private undropCopy(caller: Caller, name: string, rules: WriteRules, check?: UndropCheck): Promise<UndropResult> {
    return this.db.transaction(async (db): Promise<UndropResult> => {
      const { usage } = await lockUser(db, caller.user);
      const rows = new PostgresPrimitives(db, { user: caller.user, usage });
      return runAsync(undrop(rows, caller, name, rules, check && refusing(check)));
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
      return (await runAsync(purge(new PostgresPrimitives(db), user, name, options.includeLive))).length;
    });
    this.known?.forget(user);
    if (purged > 0) this.feed.committed(user, { name });
    return purged;
  }

  /** Dropped entries count towards their users' history, so their users are locked first; see purge for what VACUUM keeps. */
  async purgeTrash(cutoff: number): Promise<number> {
    const purged = await this.db.transaction(
      async (db) => (await runAsync(purgeTrash(new PostgresPrimitives(db), cutoff))).length,
    );
    this.known?.clear();
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
    return isDatabaseEmpty(this.db);
  }

  async dump(): Promise<StoreDump> {
    return dumpDatabase(this.db);
  }

  identity(): Promise<string> {
    return databaseIdentity(this.db);
  }

  async dumpInBatches(batches: EntryBatches): Promise<DumpTables> {
    return dumpDatabaseInBatches(this.db, batches);
  }

  async load(dump: StoreDump, options: LoadOptions): Promise<void> {
    await loadDatabase(this.db, dump, options);
    this.known?.clear();
    this.feed.committedSome();
  }

  async loadInBatches(dumped: BatchedDump, options: BatchedLoadOptions): Promise<void> {
    await loadDatabaseInBatches(this.db, dumped, options);
    this.known?.clear();
    this.feed.committedSome();
  }

  /** A query of the recorded schema version on a connection of the pool. */
  async ready(): Promise<void> {
    const [row] = await this.db.query<{ version: number }>({ text: 'SELECT version FROM schema_version' });
    assertSchemaCurrent(row?.version, MIGRATIONS.length);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.feed.close();
    await this.pool.end();
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

/** `answer`, once settled; what it rejects with stays for its awaiter. */
async function settled<T>(answer: Promise<T>): Promise<{ answer: Promise<T> }> {
  await answer.catch(() => {});
  return { answer };
}

/** `promise`, marked as handled: its awaiter takes it up a turn later, once its user's queue moves on. */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

/** The caller's `f` (a decide, a check), run inside a transaction: what it throws rolls back and reaches the caller unchanged. */
function refusing<Args extends unknown[], T>(f: (...args: Args) => T): (...args: Args) => T {
  return (...args) => callDecide(() => f(...args));
}
