/**
 * The storage engine's primitives (engine/primitives.ts) on a SQLite connection: each one
 * or two prepared statements, run synchronously inside the caller's transaction (the
 * engine is driven by `run`). Beside the rows they keep this connection's index cache
 * and search backlog told of what changed, in the same transaction.
 *
 * A write reads the user's counters before it decides (usage), then moves them (addUsage):
 * the counters after it are those read plus what it moved, known without reading them back.
 * What was read is kept for one run of the engine only, inside the caller's transaction,
 * which holds the write lock: nothing else can move the counters meanwhile, and nothing
 * read is kept past a run that failed (and whose savepoint may be rolled back).
 */

import type { UsageDelta } from '../../memory/model/apply.js';
import type { RevisionRecord, StoredEntry, Usage } from '../../memory/port.js';
import { runSync, type Work } from '../engine/drive.js';
import type {
  CommonPrimitives,
  Copy,
  Counters,
  EntryWrites,
  OlderRevision,
  TrashedCopy,
} from '../engine/primitives.js';
import type { EntryRow } from '../sql-rows.js';
import type { IndexCache } from './index-cache.js';
import type { SearchBacklog } from './search-backlog.js';
import type { Statements } from './statements.js';

/** A copy as the copies and expiredTrash statements read it. */
interface CopyRow {
  id: number;
  user_id: string;
  name: string;
  description: string;
  size: number;
  dropped_at: number | null;
}

/** Every counter of a user's row (the counters statement). */
interface UserCounters {
  readonly totalBytes: number;
  readonly entries: number;
  readonly historyBytes: number;
  readonly changes: number;
}

export class SqlitePrimitives implements CommonPrimitives, EntryWrites {
  /** The counters of `user` as this run read or moved them; `counters` undefined: the user has no row. */
  private known: { readonly user: string; readonly counters: UserCounters | undefined } | undefined;

  constructor(
    private readonly s: Statements,
    private readonly indexCache: IndexCache,
    private readonly searchBacklog: SearchBacklog,
  ) {}

  /** Runs `work` (an algorithm of the engine) on these primitives, inside the caller's transaction. */
  run<T>(work: Work<T>): T {
    this.known = undefined;
    try {
      return runSync(work);
    } finally {
      this.known = undefined;
    }
  }

  liveEntry(user: string, name: string): EntryRow | undefined {
    return this.s.live.get(user, name) as EntryRow | undefined;
  }

  liveEntries(user: string): EntryRow[] {
    return this.s.allLive.all(user) as EntryRow[];
  }

  latestTrashed(user: string, name: string): EntryRow | undefined {
    return this.s.latestTrashed.get(user, name) as EntryRow | undefined;
  }

  usage(user: string): Usage {
    const counters = this.countersOf(user);
    return counters ? { totalBytes: counters.totalBytes, entries: counters.entries } : { totalBytes: 0, entries: 0 };
  }

  /** The user's counters, read (and kept for this run) unless this run already knows them. */
  private countersOf(user: string): UserCounters | undefined {
    if (this.known?.user === user) return this.known.counters;
    const counters = this.s.counters.get(user) as UserCounters | undefined;
    this.known = { user, counters };
    return counters;
  }

  insertEntry(user: string, entry: StoredEntry, rowBody: string | null): number {
    this.indexCache.touched(user, entry.name);
    const { name, description, size, updated, revision } = entry;
    return Number(
      this.s.insert.run(user, name, description, rowBody, size, updated, updated, revision).lastInsertRowid,
    );
  }

  updateEntry(user: string, id: number, entry: StoredEntry, rowBody: string | null): void {
    this.indexCache.touched(user, entry.name);
    const { description, size, updated, revision } = entry;
    this.s.update.run(description, rowBody, size, updated, revision, id);
  }

  dropEntry(user: string, id: number, entry: StoredEntry, record: RevisionRecord, rowBody: string | null): void {
    this.indexCache.touched(user, entry.name);
    this.s.drop.run({ id, at: record.at, actor: record.actor, body: rowBody, revision: entry.revision });
  }

  undropEntry(user: string, id: number, entry: StoredEntry, rowBody: string | null): void {
    this.indexCache.touched(user, entry.name);
    this.s.undrop.run({ id, body: rowBody, revision: entry.revision });
  }

  addRevision(user: string, id: number, record: RevisionRecord, kept: boolean): void {
    const { revision, operation, actor, at, description, body, note } = record;
    const rowid = Number(
      this.s.addRevision.run(user, id, revision, operation, actor, at, description, body, note ?? null).lastInsertRowid,
    );
    this.searchBacklog.revised(id, rowid, kept);
  }

  trimRevisions(_user: string, id: number, through: number): number {
    const bytes = this.s.trimmedBytes.get(id, through) as number;
    this.s.trimRevisions.run(id, through);
    return bytes;
  }

  addUsage(user: string, delta: UsageDelta): Counters {
    const before = this.countersOf(user);
    let changes: number;
    if (before) {
      const { changes: moved } = this.s.moveUsage.run(delta.totalBytes, delta.entries, delta.historyBytes, user);
      if (moved !== 1) throw new Error(`the counters of ${user} are gone mid-write`);
      changes = before.changes + 1;
    } else {
      changes = this.s.firstUsage.get(user, delta.totalBytes, delta.entries, delta.historyBytes) as number;
    }
    const after = {
      totalBytes: (before?.totalBytes ?? 0) + delta.totalBytes,
      entries: (before?.entries ?? 0) + delta.entries,
      historyBytes: (before?.historyBytes ?? 0) + delta.historyBytes,
      changes,
    };
    this.known = { user, counters: after };
    this.indexCache.counted(user, changes);
    return { historyBytes: after.historyBytes, entries: after.entries };
  }

  olderRevisions(user: string, limit: number): OlderRevision[] {
    return this.s.olderRevisions.all(user, limit) as OlderRevision[];
  }

  deleteRevisions(_user: string, revisions: readonly OlderRevision[]): void {
    for (const { entry, revision } of revisions) this.s.deleteRevision.run(entry, revision);
  }

  oldestTrash(user: string, limit: number): TrashedCopy[] {
    return this.s.oldestTrash.all(user, limit) as TrashedCopy[];
  }

  /** Overwritten, not merely unlinked: secure_delete is on (connection.ts). */
  deleteCopies(_user: string, ids: readonly number[]): number {
    let freed = 0;
    for (const id of ids) {
      freed += sumBytes(this.s.deleteRevisions.all(id));
      this.s.deleteEntry.run(id);
    }
    return freed;
  }

  copies(user: string, name: string, includeLive: boolean): Copy[] {
    return (this.s.copies.all(user, name) as CopyRow[])
      .filter((row) => includeLive || row.dropped_at !== null)
      .map(toCopy);
  }

  expiredTrash(cutoff: number): Copy[] {
    return (this.s.expiredTrash.all(cutoff) as CopyRow[]).map(toCopy);
  }
}

function toCopy(row: CopyRow): Copy {
  const { id, user_id, name, description, size, dropped_at } = row;
  return { id, user: user_id, name, description, size, dropped: dropped_at !== null };
}

function sumBytes(rows: readonly unknown[]): number {
  return (rows as Array<{ bytes: number }>).reduce((sum, row) => sum + row.bytes, 0);
}
