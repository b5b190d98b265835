/**
 * The embedded default: one SQLite file through better-sqlite3. WAL with
 * synchronous=FULL, so an acknowledged write survives power loss; every write in
 * BEGIN IMMEDIATE, waiting on a timer while another process holds the lock, so several
 * processes (stdio servers, the CLI, `engram serve`) can share one file, no update is
 * lost and the event loop never stalls (guard.ts); concurrent writes of one process
 * share a commit (group-commit.ts). secure_delete is on, so purged and trimmed text is
 * overwritten, not merely unlinked. Every failure of the file is a store error in words.
 */

import type Database from 'better-sqlite3';
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
import { DEFAULT_BUSY_DEADLINE_MS, retryUntil } from './busy.js';
import { openDatabase } from './connection.js';
import { dumpDatabase, isEmpty, loadDatabase } from './dump.js';
import { GroupCommit } from './group-commit.js';
import { Guard } from './guard.js';
import { IndexCache } from './index-cache.js';
import { prepareStatements, type Statements } from './statements.js';
import { SqliteTokenStore } from './tokens.js';

export interface SqliteStoreOptions {
  /** Database file; `:memory:` for a private in-memory database. */
  readonly path: string;
  /**
   * How long a write waits for another process's transaction before it is refused with
   * STORE_BUSY, in ms (default 10,000). It waits on a timer: the process keeps serving.
   */
  readonly busyTimeoutMs?: number;
  /** Told once, in words for a log, when the database file was removed or replaced while open. */
  readonly onWarning?: (message: string) => void;
  /** Revisions kept per entry; older ones are deleted as new ones arrive. */
  readonly historyLimit?: number;
  /** Most bytes of history one user keeps (see history-cap.ts); default Policy.historyCap. */
  readonly historyCap?: number;
  /**
   * Let concurrent writes share one commit (default true). Off, every write is its own
   * transaction and fsync: for measuring what group commit brings.
   */
  readonly groupCommit?: boolean;
  /** Clock in milliseconds; tests inject one. */
  readonly now?: () => number;
}

/** The columns purging needs. */
interface CopyRow {
  id: number;
  user_id: string;
  name: string;
  description: string;
  size: number;
  dropped_at: number | null;
}

export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly guard: Guard;
  private readonly now: () => number;
  private readonly historyLimit: number;
  private readonly historyCap: number;
  private readonly statements: Statements;
  private readonly groupCommit: GroupCommit | undefined;
  private readonly mutateOne;
  private readonly mutateEvery;
  private readonly undropOne;
  private readonly purgeRows;
  private readonly indexCache: IndexCache;
  readonly tokens: SqliteTokenStore;

  constructor(options: SqliteStoreOptions) {
    const context = { path: options.path, busyDeadlineMs: options.busyTimeoutMs ?? DEFAULT_BUSY_DEADLINE_MS };
    const { db, file } = openDatabase(context, options.onWarning);
    this.db = db;
    this.guard = new Guard(file, context);
    this.now = options.now ?? Date.now;
    this.historyLimit = options.historyLimit ?? 100;
    this.historyCap = options.historyCap ?? DEFAULT_POLICY.historyCap;
    this.statements = prepareStatements(this.db);
    this.tokens = new SqliteTokenStore(this.db, this.guard);
    this.groupCommit =
      options.groupCommit === false
        ? undefined
        : new GroupCommit(this.db, {
            busyDeadlineMs: context.busyDeadlineMs,
            beforeBatch: () => this.guard.checkFile(),
          });
    this.mutateOne = this.db.transaction(this.mutateInTransaction.bind(this));
    const dataVersion = this.db.prepare('PRAGMA data_version').pluck();
    this.indexCache = new IndexCache(() => dataVersion.get() as number);
    this.mutateEvery = this.db.transaction(this.mutateAllInTransaction.bind(this));
    this.undropOne = this.db.transaction(this.undropInTransaction.bind(this));
    // The copies are selected inside the transaction, so no other process can undrop one in between.
    this.purgeRows = this.db.transaction((select: () => CopyRow[]) => {
      const rows = select();
      if (rows.length > 0) this.indexCache.invalidate();
      for (const row of rows) {
        // Its revisions leave the user's history; a purged live entry leaves their usage too.
        const live = row.dropped_at === null;
        this.statements.addUsage.run({
          user: row.user_id,
          bytes: live ? -entryBytes(row.name, row.description, row.size) : 0,
          entries: live ? -1 : 0,
          history: -this.deleteCopy(row.id),
        });
      }
      return rows.length;
    });
  }

  async index(user: string): Promise<readonly IndexRow[]> {
    return this.guard.read(() =>
      this.indexCache.get(user, () =>
        // Arrays from SQLite, objects built here: about a third cheaper than SQLite-built objects.
        (this.statements.index.raw().all(user) as [string, number, string][]).map(([name, size, description]) => ({
          name,
          size,
          description,
        })),
      ),
    );
  }

  async usage(user: string): Promise<Usage> {
    return this.guard.read(() => this.usageOf(user));
  }

  async get(user: string, names: readonly string[]): Promise<StoredEntry[]> {
    return this.guard.read(() =>
      names.flatMap((name) => {
        const row = this.statements.live.get(user, name) as EntryRow | undefined;
        return row ? [toEntry(row)] : [];
      }),
    );
  }

  async mutate(actor: Actor, name: string, decide: Decide): Promise<MutationResult> {
    if (!this.groupCommit) return this.guard.write(() => this.mutateOne.immediate(actor, name, decide));
    return this.guard.explained(this.groupCommit.run(() => this.mutateInTransaction(actor, name, decide)));
  }

  async mutateAll(actor: Actor, decide: DecideAll): Promise<void> {
    await this.guard.write(() => this.mutateEvery.immediate(actor, decide));
  }

  async history(user: string, name: string): Promise<RevisionRecord[]> {
    const s = this.statements;
    return this.guard.read(() => {
      const row = (s.live.get(user, name) ?? s.latestTrashed.get(user, name)) as EntryRow | undefined;
      return row ? (s.revisions.all(row.id) as RevisionRecord[]) : [];
    });
  }

  async trash(user: string): Promise<TrashedEntry[]> {
    return this.guard.read(() => (this.statements.trash.all(user) as TrashRow[]).map(toTrashedEntry));
  }

  async undrop(actor: Actor, name: string, check?: UndropCheck): Promise<UndropResult> {
    return this.guard.write(() => this.undropOne.immediate(actor, name, check));
  }

  async purge(user: string, name: string, options: { readonly includeLive: boolean }): Promise<number> {
    return this.purgeCopies(() =>
      (this.statements.copies.all(user, name) as CopyRow[]).filter(
        (row) => options.includeLive || row.dropped_at !== null,
      ),
    );
  }

  async purgeTrash(cutoff: number): Promise<number> {
    return this.purgeCopies(() => this.statements.expiredTrash.all(cutoff) as CopyRow[]);
  }

  async isEmpty(): Promise<boolean> {
    return this.guard.read(() => isEmpty(this.db));
  }

  async dump(): Promise<StoreDump> {
    return this.guard.read(() => dumpDatabase(this.db));
  }

  async load(dump: StoreDump, options: LoadOptions): Promise<void> {
    this.indexCache.invalidate();
    await this.guard.write(() => loadDatabase(this.db, dump, options));
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  /** A pragma's value on this connection, read-only: how diagnostics and tests see the durability settings. */
  pragma(name: 'journal_mode' | 'synchronous' | 'busy_timeout'): unknown {
    return this.db.pragma(name, { simple: true });
  }

  /**
   * Deletes entries and revisions, then checkpoints and empties the WAL so it keeps no
   * copy of their text. A reader of another connection that outlasts the busy deadline
   * keeps the WAL from being emptied: then the purge says so rather than claim success.
   */
  private async purgeCopies(select: () => CopyRow[]): Promise<number> {
    const count = await this.guard.write(() => this.purgeRows.immediate(select));
    if (count === 0) return 0;
    const emptied = await this.guard.explained(
      retryUntil(() => {
        const [checkpoint] = this.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
        return !checkpoint?.busy;
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

  private mutateInTransaction(actor: Actor, name: string, decide: Decide): MutationResult {
    const row = this.statements.live.get(actor.user, name) as EntryRow | undefined;
    const before = row ? toEntry(row) : undefined;
    const change = decide(before, this.usageOf(actor.user));
    return { before, after: this.apply(actor, name, row, change) };
  }

  private mutateAllInTransaction(actor: Actor, decide: DecideAll): void {
    const rows = this.statements.allLive.all(actor.user) as EntryRow[];
    const byName = new Map(rows.map((row) => [row.name, row]));
    const changes = decide(rows.map(toEntry), this.usageOf(actor.user));
    for (const { name, change } of changes) this.apply(actor, name, byName.get(name), change);
  }

  private undropInTransaction(actor: Actor, name: string, check: UndropCheck | undefined): UndropResult {
    const s = this.statements;
    const row = s.latestTrashed.get(actor.user, name) as EntryRow | undefined;
    if (!row) return { status: 'missing' };
    if (s.live.get(actor.user, name)) return { status: 'taken' };
    check?.(toEntry(row), this.usageOf(actor.user));
    const at = this.now();
    const revision = row.revision + 1;
    this.indexCache.invalidate();
    s.undrop.run({ id: row.id, revision });
    s.leaveTrash.run({ id: row.id, revision: row.revision });
    const history = this.record(actor, row.id, revision, 'undrop', at, row.description, row.body);
    this.account(actor.user, entryBytes(row.name, row.description, row.size), 1, history);
    return { status: 'restored', entry: { ...toEntry(row), revision } };
  }

  private usageOf(user: string): Usage {
    return (this.statements.usage.get(user) as Usage | undefined) ?? { totalBytes: 0, entries: 0 };
  }

  /** Applies one decided change to the live row (if any) and returns the entry after it. */
  private apply(actor: Actor, name: string, row: EntryRow | undefined, change: Change): StoredEntry | undefined {
    const s = this.statements;
    if (change.kind === 'none') return row ? toEntry(row) : undefined;
    this.indexCache.invalidate();
    const at = this.now();
    if (change.kind === 'drop') {
      if (!row) return undefined;
      const revision = row.revision + 1;
      s.drop.run({ id: row.id, at, actor: actor.label, revision });
      const history = this.record(actor, row.id, revision, 'drop', at, row.description, row.body);
      this.account(actor.user, -entryBytes(row.name, row.description, row.size), -1, history);
      return undefined;
    }
    const size = utf8Bytes(change.body);
    const revision = (row?.revision ?? 0) + 1;
    const values = { description: change.description, body: change.body, size, at, revision };
    let id: number;
    if (row) {
      id = row.id;
      s.update.run({ id, ...values });
    } else {
      id = Number(s.insert.run({ user: actor.user, name, ...values }).lastInsertRowid);
    }
    const history = this.record(actor, id, revision, change.operation, at, change.description, change.body);
    const bytes =
      entryBytes(name, change.description, size) - (row ? entryBytes(row.name, row.description, row.size) : 0);
    this.account(actor.user, bytes, row ? 0 : 1, history);
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
  private record(
    actor: Actor,
    id: number,
    revision: number,
    operation: RevisionRecord['operation'],
    at: number,
    description: string,
    body: string,
  ): number {
    const s = this.statements;
    s.addRevision.run({ user: actor.user, id, revision, operation, actor: actor.label, at, description, body });
    const trimmed =
      revision > this.historyLimit ? sumBytes(s.trimRevisions.all({ id, keepAfter: revision - this.historyLimit })) : 0;
    return revisionBytes(description, body) - trimmed;
  }

  /** Moves the user's counters by these deltas (one statement), then keeps their history within the cap. */
  private account(user: string, bytes: number, entries: number, history: number): void {
    const after = this.statements.addUsage.get({ user, bytes, entries, history }) as { history_bytes: number };
    this.trimHistory(user, Trim.of(after.history_bytes, this.historyCap));
  }

  /**
   * Trims the user's history (see history-cap.ts): their oldest revisions that are not the
   * latest of their entry, then their oldest dropped entries whole (the latest revision of a
   * live entry always stays). Batches of TRIM_BATCH rows, read by index.
   */
  private trimHistory(user: string, trim: Trim | undefined): void {
    if (!trim) return;
    const s = this.statements;
    for (let more = true; more && !trim.done; ) {
      const older = s.olderRevisions.all(user, TRIM_BATCH) as Array<{ id: number; bytes: number }>;
      for (const { id } of trim.take(older)) s.deleteRevision.run(id);
      more = older.length === TRIM_BATCH;
    }
    for (let more = true; more && !trim.done; ) {
      const trash = s.oldestTrash.all(user, TRIM_BATCH) as Array<{ id: number; bytes: number }>;
      for (const { id } of trim.take(trash)) this.deleteCopy(id);
      more = trash.length === TRIM_BATCH;
    }
    if (trim.freed > 0) s.addUsage.run({ user, bytes: 0, entries: 0, history: -trim.freed });
  }

  /** Deletes an entry row and its revisions (overwritten: secure_delete), returning the history bytes freed. */
  private deleteCopy(id: number): number {
    const freed = sumBytes(this.statements.deleteRevisions.all(id));
    this.statements.deleteEntry.run(id);
    return freed;
  }
}

function sumBytes(rows: readonly unknown[]): number {
  return (rows as Array<{ bytes: number }>).reduce((sum, row) => sum + row.bytes, 0);
}
