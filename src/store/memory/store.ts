/**
 * An in-process store: everything in plain objects, nothing on disk. For tests, for
 * agents that want a scratch memory, and as the simplest reading of the Store contract.
 * A transaction is a synchronous stretch of code, so nothing interleaves with it.
 */

import type { IndexRow } from '../../core/format.js';
import { DEFAULT_POLICY } from '../../core/policy.js';
import type {
  Actor,
  Change,
  Decide,
  DecideAll,
  LoadOptions,
  MutationResult,
  RevisionOperation,
  RevisionRecord,
  Store,
  StoreDump,
  StoredEntry,
  TrashedEntry,
  UndropCheck,
  UndropResult,
  Usage,
} from '../../core/store.js';
import { notEmptyError } from '../../core/store.js';
import { utf8Bytes } from '../../core/text.js';
import { entryBytes, revisionBytes } from '../../core/usage.js';
import { Trim } from '../history-cap.js';
import { MemoryTokenStore } from './tokens.js';

export interface MemoryStoreOptions {
  /** Revisions kept per entry; older ones are forgotten as new ones arrive. */
  readonly historyLimit?: number;
  /** Most bytes of history one user keeps (see history-cap.ts); default Policy.historyCap. */
  readonly historyCap?: number;
  /** Clock in milliseconds; tests inject one. */
  readonly now?: () => number;
}

interface Row {
  readonly id: number;
  readonly user: string;
  entry: StoredEntry;
  dropped?: { readonly at: number; readonly by: string };
  revisions: RevisionRecord[];
}

/** What a user takes, kept by delta on every change as the SQL stores keep their users row. */
interface Counters {
  totalBytes: number;
  entries: number;
  historyBytes: number;
}

export class MemoryStore implements Store {
  private readonly rows = new Map<number, Row>();
  private nextId = 1;
  private readonly now: () => number;
  private readonly historyLimit: number;
  private readonly historyCap: number;
  private readonly counters = new Map<string, Counters>();
  private closed = false;
  readonly tokens = new MemoryTokenStore();

  constructor(options: MemoryStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.historyLimit = options.historyLimit ?? 100;
    this.historyCap = options.historyCap ?? DEFAULT_POLICY.historyCap;
  }

  async index(user: string): Promise<IndexRow[]> {
    return this.live(user)
      .map(({ entry: { name, size, description } }) => ({ name, size, description }))
      .sort((a, b) => compare(a.name, b.name));
  }

  async usage(user: string): Promise<Usage> {
    return this.usageOf(user);
  }

  async get(user: string, names: readonly string[]): Promise<StoredEntry[]> {
    return names.flatMap((name) => this.liveRow(user, name)?.entry ?? []);
  }

  async mutate(actor: Actor, name: string, decide: Decide): Promise<MutationResult> {
    const row = this.liveRow(actor.user, name);
    const before = row?.entry;
    const change = decide(before, this.usageOf(actor.user));
    return { before, after: this.apply(actor, name, row, change) };
  }

  async mutateAll(actor: Actor, decide: DecideAll): Promise<void> {
    const rows = this.live(actor.user);
    const changes = decide(
      rows.map((row) => row.entry),
      this.usageOf(actor.user),
    );
    const byName = new Map(rows.map((row) => [row.entry.name, row]));
    for (const { name, change } of changes) this.apply(actor, name, byName.get(name), change);
  }

  async history(user: string, name: string): Promise<RevisionRecord[]> {
    const row = this.liveRow(user, name) ?? this.trashed(user, name)[0];
    return row ? [...row.revisions] : [];
  }

  async trash(user: string): Promise<TrashedEntry[]> {
    return this.trashed(user).map((row) => ({
      ...row.entry,
      droppedAt: row.dropped?.at ?? 0,
      droppedBy: row.dropped?.by ?? '',
    }));
  }

  async undrop(actor: Actor, name: string, check?: UndropCheck): Promise<UndropResult> {
    const row = this.trashed(actor.user, name)[0];
    if (!row) return { status: 'missing' };
    if (this.liveRow(actor.user, name)) return { status: 'taken' };
    check?.(row.entry, this.usageOf(actor.user));
    row.dropped = undefined;
    row.entry = { ...row.entry, revision: row.entry.revision + 1 };
    this.count(actor.user, { totalBytes: bytesOf(row.entry), entries: 1 });
    this.record(actor, row, 'undrop', this.now());
    return { status: 'restored', entry: row.entry };
  }

  async purge(user: string, name: string, options: { readonly includeLive: boolean }): Promise<number> {
    return this.forget(
      (row) => row.user === user && row.entry.name === name && (options.includeLive || row.dropped !== undefined),
    );
  }

  async purgeTrash(cutoff: number): Promise<number> {
    return this.forget((row) => row.dropped !== undefined && row.dropped.at <= cutoff);
  }

  async isEmpty(): Promise<boolean> {
    return this.all().length === 0 && this.tokens.size === 0;
  }

  async dump(): Promise<StoreDump> {
    const rows = this.all().sort((a, b) => a.id - b.id);
    const tokens = await this.tokens.list();
    return {
      entries: rows.map(({ id, user, entry, dropped, revisions }) => ({
        ...entry,
        id,
        user,
        droppedAt: dropped?.at ?? null,
        droppedBy: dropped?.by ?? null,
        revisions: [...revisions],
      })),
      users: [...this.counters.entries()]
        .sort(([a], [b]) => compare(a, b))
        .map(([user, counters]) => ({ user, ...counters })),
      tokens: tokens.sort((a, b) => a.created - b.created || compare(a.id, b.id)),
    };
  }

  /** Keeps the dump's usage figures as given, as the SQL stores do. */
  async load(dump: StoreDump, options: LoadOptions): Promise<void> {
    if (!options.replace && (this.all().length > 0 || this.tokens.size > 0)) throw notEmptyError();
    this.tokens.replaceAll(dump.tokens);
    this.rows.clear();
    this.counters.clear();
    for (const { user, totalBytes, entries, historyBytes } of dump.users) {
      this.counters.set(user, { totalBytes, entries, historyBytes });
    }
    for (const { id, user, droppedAt, droppedBy, revisions, ...entry } of dump.entries) {
      const dropped = droppedAt === null ? undefined : { at: droppedAt, by: droppedBy ?? '' };
      this.rows.set(id, { id, user, entry, dropped, revisions: [...revisions] });
    }
    this.nextId = dump.entries.reduce((max, entry) => Math.max(max, entry.id), 0) + 1;
    options.onProgress?.(dump.entries.length);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private forget(matches: (row: Row) => boolean): number {
    const rows = this.all().filter(matches);
    for (const row of rows) this.remove(row);
    return rows.length;
  }

  /** Deletes the row with its revisions; a live one no longer counts towards its user's usage. */
  private remove(row: Row): void {
    this.rows.delete(row.id);
    const historyBytes = -row.revisions.reduce((sum, record) => sum + recordBytes(record), 0);
    if (row.dropped) this.count(row.user, { historyBytes });
    else this.count(row.user, { totalBytes: -bytesOf(row.entry), entries: -1, historyBytes });
  }

  private apply(actor: Actor, name: string, row: Row | undefined, change: Change): StoredEntry | undefined {
    if (change.kind === 'none') return row?.entry;
    const at = this.now();
    if (change.kind === 'drop') {
      if (!row) return undefined;
      row.dropped = { at, by: actor.label };
      row.entry = { ...row.entry, revision: row.entry.revision + 1 };
      this.count(actor.user, { totalBytes: -bytesOf(row.entry), entries: -1 });
      this.record(actor, row, 'drop', at);
      return undefined;
    }
    const entry: StoredEntry = {
      name,
      description: change.description,
      body: change.body,
      size: utf8Bytes(change.body),
      created: row?.entry.created ?? at,
      updated: at,
      revision: (row?.entry.revision ?? 0) + 1,
    };
    this.count(actor.user, { totalBytes: bytesOf(entry) - (row ? bytesOf(row.entry) : 0), entries: row ? 0 : 1 });
    const target = row ?? this.insert(actor.user, entry);
    target.entry = entry;
    this.record(actor, target, change.operation, at);
    return entry;
  }

  private insert(user: string, entry: StoredEntry): Row {
    const row: Row = { id: this.nextId++, user, entry, revisions: [] };
    this.rows.set(row.id, row);
    return row;
  }

  /** Appends the entry's revision, forgets the ones past the limits, and counts the history's bytes. */
  private record(actor: Actor, row: Row, operation: RevisionOperation, at: number): void {
    const { revision, description, body } = row.entry;
    row.revisions.push({ revision, operation, actor: actor.label, at, description, body });
    const over = Math.max(0, row.revisions.length - this.historyLimit);
    const forgotten = row.revisions.splice(0, over).reduce((sum, record) => sum + recordBytes(record), 0);
    const { historyBytes } = this.count(actor.user, { historyBytes: revisionBytes(description, body) - forgotten });
    this.trimHistory(actor.user, Trim.of(historyBytes, this.historyCap));
  }

  /** Trims the user's history (see history-cap.ts): older revisions first, then the oldest trash whole. */
  private trimHistory(user: string, trim: Trim | undefined): void {
    if (!trim) return;
    const rows = this.all().filter((row) => row.user === user);
    const older = rows
      .flatMap((row) => row.revisions.slice(0, -1).map((record) => ({ row, record, bytes: recordBytes(record) })))
      .sort((a, b) => a.record.at - b.record.at || a.row.id - b.row.id || a.record.revision - b.record.revision);
    for (const { row, record } of trim.take(older)) row.revisions.splice(row.revisions.indexOf(record), 1);
    this.count(user, { historyBytes: -trim.freed });
    const trash = rows
      .filter((row) => row.dropped !== undefined)
      .sort((a, b) => (a.dropped?.at ?? 0) - (b.dropped?.at ?? 0) || a.id - b.id)
      .map((row) => ({ row, bytes: row.revisions.reduce((sum, record) => sum + recordBytes(record), 0) }));
    // remove() counts what each dropped entry took.
    for (const { row } of trim.take(trash)) this.remove(row);
  }

  private usageOf(user: string): Usage {
    const { totalBytes, entries } = this.counters.get(user) ?? { totalBytes: 0, entries: 0 };
    return { totalBytes, entries };
  }

  /** Adds the deltas to the user's counters and returns them. */
  private count(user: string, delta: Partial<Counters>): Counters {
    const counters = this.counters.get(user) ?? { totalBytes: 0, entries: 0, historyBytes: 0 };
    counters.totalBytes += delta.totalBytes ?? 0;
    counters.entries += delta.entries ?? 0;
    counters.historyBytes += delta.historyBytes ?? 0;
    this.counters.set(user, counters);
    return counters;
  }

  private all(): Row[] {
    if (this.closed) throw new Error('the memory store is closed');
    return [...this.rows.values()];
  }

  private live(user: string): Row[] {
    return this.all().filter((row) => row.user === user && row.dropped === undefined);
  }

  private liveRow(user: string, name: string): Row | undefined {
    return this.live(user).find((row) => row.entry.name === name);
  }

  /** The user's dropped rows (of one name, if given), most recently dropped first. */
  private trashed(user: string, name?: string): Row[] {
    return this.all()
      .filter(
        (row) => row.user === user && row.dropped !== undefined && (name === undefined || row.entry.name === name),
      )
      .sort((a, b) => (b.dropped?.at ?? 0) - (a.dropped?.at ?? 0) || b.id - a.id);
  }
}

function bytesOf(entry: StoredEntry): number {
  return entryBytes(entry.name, entry.description, entry.size);
}

function recordBytes(record: RevisionRecord): number {
  return revisionBytes(record.description, record.body);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
