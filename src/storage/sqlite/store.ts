/**
 * The embedded default: one SQLite file through better-sqlite3 or node:sqlite (drivers.ts). WAL with
 * synchronous=FULL, so an acknowledged write survives power loss; every write in
 * BEGIN IMMEDIATE, waiting on a timer while another process holds the lock, so several
 * processes (stdio servers, the CLI, `engram serve`) can share one file, no update is
 * lost and the event loop never stalls (guard.ts); concurrent writes of one process
 * share a commit (group-commit.ts). secure_delete is on, so purged and trimmed text is
 * overwritten, not merely unlinked. Every failure of the file is a store error in words.
 * Search follows the writes in batches (search-backlog.ts), for a server in a worker
 * thread (search-worker.ts) that takes turns with this connection's writes (write-gate.ts).
 */

import type { ActivityQuery, ActivityRecord, ActorCount, ChangeListener } from '../../memory/activity.js';
import { EngramError, isEngramError } from '../../memory/model/errors.js';
import type { IndexRow } from '../../memory/model/format.js';
import type {
  BatchedDump,
  BatchedLoadOptions,
  Caller,
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
import { type Accelerators, SQLITE_ACCELERATORS, switchesOf } from '../accelerators.js';
import type { StorageBackend } from '../backend.js';
import { ChangeFeed, mutationDetails, recordingDecide } from '../change-feed.js';
import type { Copy } from '../engine/primitives.js';
import { purge, purgeTrash } from '../engine/purge.js';
import { mutate, mutateAll, undrop } from '../engine/writes.js';
import { assertSchemaCurrent } from '../schema-version.js';
import { SqlAccountStore } from '../sql/accounts.js';
import { watchBatches } from '../sql/dump.js';
import { SqlOAuthStore } from '../sql/oauth.js';
import { SqlProposalStore } from '../sql/proposals.js';
import { SqlTokenStore } from '../sql/tokens.js';
import {
  type EntryRow,
  type OverviewColumns,
  type RevisionColumns,
  type TrashRow,
  toEntryFromColumns,
  toOverviewRow,
  toRevision,
  toTrashedEntry,
} from '../sql-rows.js';
import { ActivityWalk, NEWEST } from './activity-walk.js';
import { DEFAULT_BUSY_DEADLINE_MS, isBusy, retryUntil } from './busy.js';
import { openDatabase } from './connection.js';
import type { Database } from './driver.js';
import { type SqliteDriverName, sqliteDriver } from './drivers.js';
import {
  dumpDatabase,
  dumpDatabaseInBatches,
  isDatabaseEmpty,
  loadDatabase,
  loadDatabaseInBatches,
  startSnapshot,
} from './dump.js';
import { GroupCommit } from './group-commit.js';
import { Guard } from './guard.js';
import { IndexCache } from './index-cache.js';
import { MIGRATIONS } from './migrations.js';
import { SqlitePrimitives } from './primitives.js';
import { SearchBacklog } from './search-backlog.js';
import { SearchWorker } from './search-worker.js';
import { SqliteSqlDatabase } from './sql-database.js';
import { prepareStatements, type Statements, searchMatch, searchTerms } from './statements.js';
import { WriteGate } from './write-gate.js';

export interface SqliteStoreOptions {
  /** Database file, in a folder that exists (the store creates the file, never a folder); `:memory:` for a private in-memory database. */
  readonly path: string;
  /**
   * How long a write waits for another process's transaction before it is refused with
   * STORE_BUSY, in ms (default 10,000). It waits on a timer: the process keeps serving.
   */
  readonly busyTimeoutMs?: number;
  /** Told once, in words for a log, when the database file was removed or replaced while open. */
  readonly onWarning?: (message: string) => void;
  /**
   * The accelerators to switch on or off (accelerators.ts: SQLITE_ACCELERATORS, their
   * defaults; docs/accelerators.md). PostgreSQL's are ignored, so one record may serve both.
   */
  readonly accelerators?: Accelerators | undefined;
  /**
   * The SQLite driver: `better-sqlite3` (a native addon) or `node` (Node's built-in
   * node:sqlite, Node 22.16 and newer). By default better-sqlite3 when it loads, else node.
   * Both read and write the same file.
   */
  readonly driver?: SqliteDriverName | undefined;
  /**
   * A new file written once, then closed and made durable by its writer (a backup's
   * `.partial`): no write-ahead log, no fsync of its own (connection.ts says why). Never for
   * a memory that is served: a write acknowledged there would not survive a power cut.
   */
  readonly writtenOnce?: boolean | undefined;
}

/**
 * How often a watched store looks for commits of other connections (PRAGMA data_version,
 * a read of this connection's own state): only while someone watches.
 */
const WATCH_POLL_MS = 250;

export class SqliteStore implements StorageBackend {
  private readonly db: Database;
  private readonly guard: Guard;
  private readonly statements: Statements;
  /** The storage engine's primitives on this connection (engine/), run inside its transactions. */
  private readonly rows: SqlitePrimitives;
  private readonly groupCommit: GroupCommit | undefined;
  private readonly mutateOne;
  private readonly mutateEvery;
  private readonly undropOne;
  private readonly purgeRows;
  private readonly recordOpenings;
  private readonly indexCache: IndexCache;
  /** The indexCache accelerator: off, every index is read whole (readIndex). */
  private readonly indexCached: boolean;
  private readonly searchBacklog: SearchBacklog;
  private readonly activityWalk: ActivityWalk;
  private readonly feed: ChangeFeed;
  readonly tokens: SqlTokenStore;
  readonly accounts: SqlAccountStore;
  readonly oauth: SqlOAuthStore;
  readonly proposals: SqlProposalStore;
  /** The SQLite driver this store opened its file with. */
  readonly driver: SqliteDriverName;

  constructor(options: SqliteStoreOptions) {
    const context = { path: options.path, busyDeadlineMs: options.busyTimeoutMs ?? DEFAULT_BUSY_DEADLINE_MS };
    const driver = sqliteDriver(options.driver);
    this.driver = driver.name;
    const { db, file } = openDatabase(context, options.onWarning, driver, options.writtenOnce === true);
    this.db = db;
    const gate = new WriteGate();
    this.guard = new Guard(file, context, gate);
    this.statements = prepareStatements(this.db);
    const identity = file.identity;
    const accelerators = switchesOf(SQLITE_ACCELERATORS, options.accelerators);
    this.indexCached = accelerators.indexCache;
    this.searchBacklog = new SearchBacklog(
      this.db,
      this.guard,
      accelerators.searchWorker && identity
        ? (onGone) => {
            try {
              return new SearchWorker({
                driver: driver.worker,
                path: options.path,
                identity,
                gate,
                onGone: (reason) => {
                  options.onWarning?.(
                    `search indexing moved back to the main thread${reason === undefined ? '' : `: ${reason}`}`,
                  );
                  onGone();
                },
              });
            } catch (error) {
              // No thread could be made (Node throws ERR_WORKER_INIT_FAILED at a limit of threads):
              // the loop catches up, as without a worker. Thrown on, it ended the process from a timer.
              options.onWarning?.(
                `search indexing stays on the main thread: ${error instanceof Error ? error.message : String(error)}`,
              );
              return undefined;
            }
          }
        : undefined,
    );
    this.activityWalk = new ActivityWalk(this.db, this.guard, accelerators.activityWalk);
    const access = new SqliteSqlDatabase(this.db, this.guard);
    this.tokens = new SqlTokenStore(access);
    this.accounts = new SqlAccountStore(access);
    this.oauth = new SqlOAuthStore(access);
    this.groupCommit = accelerators.groupCommit
      ? new GroupCommit(this.db, {
          busyDeadlineMs: context.busyDeadlineMs,
          beforeBatch: () => this.guard.checkFile(),
          gate,
        })
      : undefined;
    this.mutateOne = this.db.transaction(this.mutateInTransaction.bind(this));
    const dataVersion = this.db.prepare('PRAGMA data_version').pluck();
    this.indexCache = new IndexCache({
      dataVersion: () => dataVersion.get() as number,
      changesOf: (user) => (this.statements.version.pluck().get(user) as number | undefined) ?? 0,
    });
    this.rows = new SqlitePrimitives(this.statements, this.indexCache, this.searchBacklog);
    // Another connection's commit moves data_version (this connection's own do not: those
    // are told as they commit); only then are the watched users' change counters read.
    const watchedDataVersion = this.db.prepare('PRAGMA data_version').pluck();
    let seenDataVersion = -1;
    this.feed = new ChangeFeed({
      readVersions: (users) =>
        new Map(users.map((user) => [user, (this.statements.version.pluck().get(user) as number | undefined) ?? 0])),
      pollMs: WATCH_POLL_MS,
      mayHaveChanged: () => {
        const version = watchedDataVersion.get() as number;
        const changed = version !== seenDataVersion;
        seenDataVersion = version;
        return changed;
      },
    });
    this.proposals = new SqlProposalStore(access, (user) => this.feed.committed(user));
    this.mutateEvery = this.db.transaction(this.mutateAllInTransaction.bind(this));
    this.undropOne = this.db.transaction(this.undropInTransaction.bind(this));
    this.recordOpenings = this.db.transaction((opens: readonly OpenedEntry[], gap: number) => {
      for (const { user, name, at } of opens) this.statements.recordOpened.run({ user, name, at, gap });
    });
    // The copies are selected inside the transaction, so no other process can undrop one in between.
    this.purgeRows = this.db.transaction((purging: () => readonly Copy[]) => {
      const copies = purging();
      // Their words leave the search index now, not in a later catch-up; and the index keeps
      // the words of what it stopped indexing (a drop, an edit) in its structure until
      // merged: merged now, so that no word of a purged entry remains.
      if (copies.length > 0) {
        this.indexCache.invalidate();
        this.searchBacklog.catchUp(copies.map((copy) => copy.id));
        this.statements.optimizeSearch.run();
      }
      return copies.length;
    });
  }

  async index(user: string): Promise<readonly IndexRow[]> {
    if (!this.indexCached) return this.guard.read(() => this.readIndex(user));
    return this.guard.read(() =>
      this.indexCache.get(
        user,
        () => this.readIndex(user),
        (name) => {
          const row = this.statements.live.get(user, name) as EntryRow | undefined;
          return row && { name: row.name, size: row.size, description: row.description };
        },
      ),
    );
  }

  /** The user's whole index, as SQLite orders it (ORDER BY name): what the index cache must equal. */
  private readIndex(user: string): IndexRow[] {
    // Arrays from SQLite, objects built here: about a third cheaper than SQLite-built objects.
    return (this.statements.index.raw().all(user) as [string, number, string][]).map(([name, size, description]) => ({
      name,
      size,
      description,
    }));
  }

  async overview(user: string): Promise<Overview> {
    return this.guard.read(() => ({
      entries: (this.statements.overview.all(user) as OverviewColumns[]).map(toOverviewRow),
      openedSince: (this.statements.openedSince.pluck().get() as number | undefined) ?? 0,
    }));
  }

  /**
   * One immediate transaction of one indexed UPDATE per entry. It moves no change counter,
   * so the kept indexes (index-cache.ts) stay, here and in every other connection, and no
   * watcher is told; no trigger watches `opened`, so the search backlog does not grow.
   */
  async recordOpened(opens: readonly OpenedEntry[], minimumGap: number): Promise<void> {
    if (opens.length === 0) return;
    await this.guard.write(() => this.recordOpenings.immediate(opens, minimumGap));
  }

  async usage(user: string): Promise<Usage> {
    return this.guard.read(() => this.usageOf(user));
  }

  async users(): Promise<UserUsage[]> {
    return this.guard.read(() => this.statements.users.all() as UserUsage[]);
  }

  async get(user: string, names: readonly string[]): Promise<StoredEntry[]> {
    return this.guard.read(() =>
      names.flatMap((name) => {
        const columns = this.statements.liveColumns.get(user, name) as unknown[] | undefined;
        return columns ? [toEntryFromColumns(columns)] : [];
      }),
    );
  }

  async mutate(caller: Caller, name: string, decide: Decide, rules: WriteRules): Promise<MutationResult> {
    const recording = recordingDecide(decide);
    const result = await this.forgettingOnFailure(
      caller.user,
      this.groupCommit
        ? this.guard.explained(
            this.groupCommit.run(() => this.mutateInTransaction(caller, name, recording.decide, rules)),
          )
        : this.guard.write(() => this.mutateOne.immediate(caller, name, recording.decide, rules)),
    );
    const details = mutationDetails(name, recording.decided(), result);
    if (details) this.feed.committed(caller.user, details);
    this.searchBacklog.wrote();
    return result;
  }

  async mutateAll(caller: Caller, decide: DecideAll, rules: WriteRules): Promise<void> {
    await this.forgettingOnFailure(
      caller.user,
      this.guard.write(() => this.mutateEvery.immediate(caller, decide, rules)),
    );
    this.feed.committed(caller.user);
    this.searchBacklog.wrote();
  }

  async history(user: string, name: string): Promise<RevisionRecord[]> {
    const s = this.statements;
    return this.guard.read(() => {
      const row = (s.live.get(user, name) ?? s.latestTrashed.get(user, name)) as EntryRow | undefined;
      return row ? (s.revisions.all(row.id) as RevisionColumns[]).map(toRevision) : [];
    });
  }

  async timeline(user: string, name: string): Promise<CopyRevision[]> {
    return this.guard.read(() =>
      (this.statements.timeline.all({ user, name }) as RevisionColumns<CopyRevision>[]).map(toRevision),
    );
  }

  async trash(user: string): Promise<TrashedEntry[]> {
    return this.guard.read(() => (this.statements.trash.all(user) as TrashRow[]).map(toTrashedEntry));
  }

  async undrop(caller: Caller, name: string, rules: WriteRules, check?: UndropCheck): Promise<UndropResult> {
    const result = await this.forgettingOnFailure(
      caller.user,
      this.guard.write(() => this.undropOne.immediate(caller, name, rules, check)),
    );
    if (result.status === 'restored') {
      this.searchBacklog.wrote();
      this.feed.committed(caller.user, { name, revision: result.entry.revision, operation: 'undrop' });
    }
    return result;
  }

  async purge(user: string, name: string, options: { readonly includeLive: boolean }): Promise<number> {
    return this.purgeCopies(
      () => this.rows.run(purge(this.rows, user, name, options.includeLive)),
      () => this.feed.committed(user, { name }),
    );
  }

  async purgeTrash(cutoff: number): Promise<number> {
    return this.purgeCopies(
      () => this.rows.run(purgeTrash(this.rows, cutoff)),
      () => this.feed.committedSome(),
    );
  }

  /** One actor's is read a stretch of the history at a time (activity-walk.ts): it may be a rare one among millions. */
  async activity(user: string, query: ActivityQuery): Promise<ActivityRecord[]> {
    const { actor, limit } = query;
    const before = query.before ?? NEWEST;
    if (actor !== undefined) return this.activityWalk.activityOf(user, actor, before, limit);
    return this.guard.read(() => this.statements.activity.all({ user, limit, ...before }) as ActivityRecord[]);
  }

  /** Read a stretch of the history at a time (activity-walk.ts), as one actor's activity is. */
  async actors(user: string): Promise<ActorCount[]> {
    return this.activityWalk.actors(user);
  }

  watch(user: string, listener: ChangeListener): Promise<() => void> {
    return this.feed.watch(user, listener);
  }

  /** By the FTS5 index entries_search, first brought up to date with every write (search-backlog.ts). */
  async search(user: string, terms: SearchTerms, options: { readonly limit: number }): Promise<SearchHit[]> {
    await this.guard.explained(this.searchBacklog.drain());
    return this.guard.read(() => {
      const rows = this.statements.search.all({
        user,
        anywhere: searchTerms(terms),
        inName: searchMatch(terms, 'name'),
        inDescription: searchMatch(terms, 'description'),
        limit: options.limit,
      }) as SearchedEntry[];
      return rows.map((row) => searchHit(row, terms));
    });
  }

  async isEmpty(): Promise<boolean> {
    return this.guard.read(() => isDatabaseEmpty(this.db));
  }

  async dump(): Promise<StoreDump> {
    return this.guard.read(() => dumpDatabase(this.db));
  }

  async load(dump: StoreDump, options: LoadOptions): Promise<void> {
    this.indexCache.invalidate();
    await this.guard.write(() => loadDatabase(this.db, dump, options));
    this.feed.committedSome();
    this.searchBacklog.wrote();
  }

  /**
   * dump, its entries handed to `batches` as they are read (dump.ts, dumpDatabaseInBatches),
   * in one read transaction held while each batch is taken, once the search index's
   * catch-up due on this connection is done (none would then run inside it): only on a
   * store nothing else uses meanwhile (a copy's source, opened by the command line), as a
   * statement of another caller would run inside the transaction. What `batches` throws is
   * its own, passed on as it came: this file's words would misname the target's failure.
   */
  async dumpInBatches(batches: EntryBatches): Promise<DumpTables> {
    const watched = watchBatches(batches);
    try {
      await this.guard.explained(this.searchBacklog.settle());
      // Begun as a read is, tried again while another process holds the file.
      const begin = () => this.guard.read(() => startSnapshot(this.db));
      return await this.guard.explained(dumpDatabaseInBatches(this.db, watched.batches, begin));
    } catch (error) {
      throw watched.failure(error);
    }
  }

  /**
   * load of a dump read as it is loaded, a batch of entries at a time (dump.ts,
   * loadDatabaseInBatches), its transaction begun as a write's is (through the write gate,
   * once another process's lock is let go): only on a store nothing else uses meanwhile (a
   * restore's or a migration's target, opened by the command line), as a request's
   * statement would run inside the open transaction (the search index's catch-up due here
   * is done first, so none runs inside it). The index catches up after it, as after load.
   */
  async loadInBatches(dumped: BatchedDump, options: BatchedLoadOptions): Promise<void> {
    this.indexCache.invalidate();
    await this.guard.explained(this.searchBacklog.settle());
    await this.guard.explained(
      loadDatabaseInBatches(this.db, dumped, options, () => this.guard.write(() => this.db.exec('BEGIN IMMEDIATE'))),
    );
    this.feed.committedSome();
    this.searchBacklog.wrote();
  }

  /**
   * loadInBatches into a new file nothing else uses, as a backup being written
   * (storage/sqlite/backup-files.ts). The search index is not caught up: the loaded
   * entries wait in its backlog (dump.ts, markLoaded) for whoever serves the file, and a
   * restore indexes what it loads anyway, so closing does not spend seconds on it.
   */
  async writeInBatches(dumped: BatchedDump, options: BatchedLoadOptions): Promise<void> {
    this.guard.checkFile();
    await this.guard.explained(loadDatabaseInBatches(this.db, dumped, options));
  }

  /** A read of the recorded schema version, after checking the file at the path is still the one open. */
  async ready(): Promise<void> {
    const recorded = await this.guard.read(() => {
      this.guard.checkFile();
      return this.db.prepare('SELECT version FROM schema_version').pluck().get() as number | undefined;
    });
    assertSchemaCurrent(recorded, MIGRATIONS.length);
  }

  observeCommitBatches(observer: ((writes: number) => void) | undefined): void {
    this.groupCommit?.observe(observer);
  }

  async close(): Promise<void> {
    this.feed.close();
    await this.searchBacklog.close();
    if (this.db.open) this.db.close();
  }

  /** A pragma's value on this connection, read-only: how diagnostics and tests see the durability settings. */
  pragma(name: 'journal_mode' | 'synchronous' | 'busy_timeout'): unknown {
    return this.db.pragma(name, { simple: true });
  }

  /**
   * Deletes entries and revisions (then tells watchers: `committed`), checkpoints and empties
   * the WAL so it keeps no copy of their text. A reader of another connection that outlasts the busy deadline
   * keeps the WAL from being emptied: then the purge says so rather than claim success.
   */
  private async purgeCopies(purging: () => readonly Copy[], committed: () => void): Promise<number> {
    const count = await this.guard.write(() => this.purgeRows.immediate(purging));
    if (count === 0) return 0;
    committed();
    const emptied = await this.guard.explained(
      retryUntil(() => {
        try {
          const [checkpoint] = this.guard.exclusive(
            () => this.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>,
          );
          return !checkpoint?.busy;
        } catch (error) {
          if (isBusy(error)) return false;
          throw error;
        }
      }, this.guard.busyDeadlineMs),
    );
    if (!emptied) {
      throw new EngramError(
        'STORE_UNAVAILABLE',
        'The entries were deleted, but another connection kept reading the database, so copies of their text ' +
          'remain in its write-ahead log (the -wal file beside it) until every program using the database has ' +
          'closed it: end the long read in the other program, and restart any running engram serve.',
      );
    }
    return count;
  }

  private mutateInTransaction(caller: Caller, name: string, decide: Decide, rules: WriteRules): MutationResult {
    return this.rows.run(mutate(this.rows, caller, name, decide, rules));
  }

  private mutateAllInTransaction(caller: Caller, decide: DecideAll, rules: WriteRules): void {
    this.rows.run(mutateAll(this.rows, caller, decide, rules));
  }

  private undropInTransaction(
    caller: Caller,
    name: string,
    rules: WriteRules,
    check: UndropCheck | undefined,
  ): UndropResult {
    return this.rows.run(undrop(this.rows, caller, name, rules, check));
  }

  private usageOf(user: string): Usage {
    const counters = this.statements.counters.get(user) as Usage | undefined;
    return counters ? { totalBytes: counters.totalBytes, entries: counters.entries } : { totalBytes: 0, entries: 0 };
  }

  /**
   * A write of the user's. When the database failed it, its transaction (or savepoint) may
   * have been rolled back after it moved the kept index's count (IndexCache.counted), so
   * their index is read again. A refusal of the write itself (an Engram error but a store's:
   * a cap, a missing `old`) comes from deciding, before anything was persisted or counted:
   * the index stays, or every refused call would cost a whole read of it.
   */
  private async forgettingOnFailure<T>(user: string, write: Promise<T>): Promise<T> {
    try {
      return await write;
    } catch (error) {
      if (!isEngramError(error) || error.code.startsWith('STORE_')) this.indexCache.forget(user);
      throw error;
    }
  }
}
