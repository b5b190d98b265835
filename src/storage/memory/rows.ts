/**
 * The in-process store's data — entry rows with their revisions, and each user's counters
 * — and the storage engine's primitives on it (engine/primitives.ts): plain objects, each
 * primitive a few lines, run synchronously (runSync), so nothing interleaves with a
 * write. The store (store.ts) reads these rows for everything else.
 */

import type { UsageDelta } from '../../memory/model/apply.js';
import { revisionBytes } from '../../memory/model/usage.js';
import type { RevisionRecord, StoredEntry, Usage } from '../../memory/port.js';
import type {
  CommonPrimitives,
  Copy,
  Counters,
  EntryWrites,
  OlderRevision,
  TrashedCopy,
} from '../engine/primitives.js';
import type { EntryRow } from '../sql-rows.js';

export interface Row {
  readonly id: number;
  readonly user: string;
  entry: StoredEntry;
  dropped?: { readonly at: number; readonly by: string };
  revisions: RevisionRecord[];
  /** When a model last opened it (EntryStore.recordOpened): kept on the row, as a SQL column, through every change. */
  opened?: number;
}

/** What a user takes, kept by delta on every change as the SQL stores keep their users row. */
export interface UserCounters {
  totalBytes: number;
  entries: number;
  historyBytes: number;
}

export class MemoryRows implements CommonPrimitives, EntryWrites {
  readonly rows = new Map<number, Row>();
  readonly counters = new Map<string, UserCounters>();
  /** Each user's change counter (ChangeFeed), moved with their counters by every change. */
  readonly versions = new Map<string, number>();
  nextId = 1;
  closed = false;

  liveEntry(user: string, name: string): EntryRow | undefined {
    const row = this.liveRow(user, name);
    return row && { id: row.id, ...row.entry };
  }

  /** By name, as the SQL backends read them, so that a mutateAll decides over the same order on every backend. */
  liveEntries(user: string): EntryRow[] {
    return this.live(user)
      .map((row) => ({ id: row.id, ...row.entry }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  latestTrashed(user: string, name: string): EntryRow | undefined {
    const row = this.trashed(user, name)[0];
    return row && { id: row.id, ...row.entry };
  }

  usage(user: string): Usage {
    const { totalBytes, entries } = this.counters.get(user) ?? { totalBytes: 0, entries: 0 };
    return { totalBytes, entries };
  }

  insertEntry(user: string, entry: StoredEntry): number {
    const row: Row = { id: this.nextId++, user, entry, revisions: [] };
    this.rows.set(row.id, row);
    return row.id;
  }

  updateEntry(_user: string, id: number, entry: StoredEntry): void {
    this.row(id).entry = entry;
  }

  dropEntry(_user: string, id: number, entry: StoredEntry, record: RevisionRecord): void {
    const row = this.row(id);
    row.entry = entry;
    row.dropped = { at: record.at, by: record.actor };
  }

  undropEntry(_user: string, id: number, entry: StoredEntry): void {
    const row = this.row(id);
    row.entry = entry;
    row.dropped = undefined;
  }

  addRevision(_user: string, id: number, record: RevisionRecord): void {
    this.row(id).revisions.push(record);
  }

  trimRevisions(_user: string, id: number, through: number): number {
    const row = this.row(id);
    const kept = row.revisions.filter((record) => record.revision > through);
    const trimmed = sumBytes(row.revisions) - sumBytes(kept);
    row.revisions = kept;
    return trimmed;
  }

  addUsage(user: string, delta: UsageDelta): Counters {
    this.bump(user);
    const counters = this.counters.get(user) ?? { totalBytes: 0, entries: 0, historyBytes: 0 };
    counters.totalBytes += delta.totalBytes;
    counters.entries += delta.entries;
    counters.historyBytes += delta.historyBytes;
    this.counters.set(user, counters);
    return { historyBytes: counters.historyBytes, entries: counters.entries };
  }

  olderRevisions(user: string, limit: number): OlderRevision[] {
    return this.all()
      .filter((row) => row.user === user)
      .flatMap((row) => row.revisions.slice(0, -1).map((record) => ({ row, record })))
      .sort((a, b) => a.record.at - b.record.at || a.row.id - b.row.id || a.record.revision - b.record.revision)
      .slice(0, limit)
      .map(({ row, record }) => ({ entry: row.id, revision: record.revision, bytes: recordBytes(record) }));
  }

  deleteRevisions(_user: string, revisions: readonly OlderRevision[]): void {
    for (const { entry, revision } of revisions) {
      const row = this.row(entry);
      row.revisions = row.revisions.filter((record) => record.revision !== revision);
    }
  }

  oldestTrash(user: string, limit: number): TrashedCopy[] {
    return this.all()
      .filter((row) => row.user === user && row.dropped !== undefined)
      .sort((a, b) => (a.dropped?.at ?? 0) - (b.dropped?.at ?? 0) || a.id - b.id)
      .slice(0, limit)
      .map((row) => ({ id: row.id, bytes: sumBytes(row.revisions) }));
  }

  deleteCopies(_user: string, ids: readonly number[]): number {
    let freed = 0;
    for (const id of ids) {
      freed += sumBytes(this.row(id).revisions);
      this.rows.delete(id);
    }
    return freed;
  }

  copies(user: string, name: string, includeLive: boolean): Copy[] {
    return this.all()
      .filter((row) => row.user === user && row.entry.name === name && (includeLive || row.dropped !== undefined))
      .map(toCopy);
  }

  expiredTrash(cutoff: number): Copy[] {
    return this.all()
      .filter((row) => row.dropped !== undefined && row.dropped.at <= cutoff)
      .map(toCopy);
  }

  /** Moves the user's change counter: something of theirs changed. */
  bump(user: string): void {
    this.versions.set(user, (this.versions.get(user) ?? 0) + 1);
  }

  all(): Row[] {
    if (this.closed) throw new Error('the memory store is closed');
    return [...this.rows.values()];
  }

  live(user: string): Row[] {
    return this.all().filter((row) => row.user === user && row.dropped === undefined);
  }

  liveRow(user: string, name: string): Row | undefined {
    return this.live(user).find((row) => row.entry.name === name);
  }

  /** The user's dropped rows (of one name, if given), most recently dropped first. */
  trashed(user: string, name?: string): Row[] {
    return this.all()
      .filter(
        (row) => row.user === user && row.dropped !== undefined && (name === undefined || row.entry.name === name),
      )
      .sort((a, b) => (b.dropped?.at ?? 0) - (a.dropped?.at ?? 0) || b.id - a.id);
  }

  private row(id: number): Row {
    const row = this.rows.get(id);
    if (!row) throw new Error(`no entry row ${id} in the memory store`);
    return row;
  }
}

function toCopy(row: Row): Copy {
  const { name, description, size } = row.entry;
  return { id: row.id, user: row.user, name, description, size, dropped: row.dropped !== undefined };
}

function recordBytes(record: RevisionRecord): number {
  return revisionBytes(record.description, record.body);
}

function sumBytes(records: readonly RevisionRecord[]): number {
  return records.reduce((sum, record) => sum + recordBytes(record), 0);
}
