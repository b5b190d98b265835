/**
 * An in-process store: everything in plain objects, nothing on disk. For tests, for
 * agents that want a scratch memory, and as the simplest reading of the Store contract.
 * A transaction is a synchronous stretch of code, so nothing interleaves with it.
 */

import type { IndexRow } from '../../core/format.js';
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
  UndropResult,
} from '../../core/store.js';
import { notEmptyError } from '../../core/store.js';
import { utf8Bytes } from '../../core/text.js';
import { MemoryTokenStore } from './tokens.js';

export interface MemoryStoreOptions {
  /** Revisions kept per entry; older ones are forgotten as new ones arrive. */
  readonly historyLimit?: number;
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

export class MemoryStore implements Store {
  private readonly rows = new Map<number, Row>();
  private nextId = 1;
  private readonly now: () => number;
  private readonly historyLimit: number;
  private closed = false;
  readonly tokens = new MemoryTokenStore();

  constructor(options: MemoryStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.historyLimit = options.historyLimit ?? 100;
  }

  async index(user: string): Promise<IndexRow[]> {
    return this.live(user)
      .map(({ entry: { name, size, description } }) => ({ name, size, description }))
      .sort((a, b) => compare(a.name, b.name));
  }

  async get(user: string, names: readonly string[]): Promise<StoredEntry[]> {
    return names.flatMap((name) => this.liveRow(user, name)?.entry ?? []);
  }

  async mutate(actor: Actor, name: string, decide: Decide): Promise<MutationResult> {
    const row = this.liveRow(actor.user, name);
    const before = row?.entry;
    const change = decide(before, { totalBytes: this.totalBytes(actor.user) });
    return { before, after: this.apply(actor, name, row, change) };
  }

  async mutateAll(actor: Actor, decide: DecideAll): Promise<void> {
    const rows = this.live(actor.user);
    const changes = decide(
      rows.map((row) => row.entry),
      { totalBytes: this.totalBytes(actor.user) },
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

  async undrop(actor: Actor, name: string): Promise<UndropResult> {
    const row = this.trashed(actor.user, name)[0];
    if (!row) return { status: 'missing' };
    if (this.liveRow(actor.user, name)) return { status: 'taken' };
    row.dropped = undefined;
    row.entry = { ...row.entry, revision: row.entry.revision + 1 };
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
    const users = [...new Set(rows.map((row) => row.user))].sort(compare);
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
      users: users.map((user) => ({ user, totalBytes: this.totalBytes(user) })),
      tokens: tokens.sort((a, b) => a.created - b.created || compare(a.id, b.id)),
    };
  }

  /** Usage is summed from the live entries here, never stored, so the dump's totals are not read. */
  async load(dump: StoreDump, options: LoadOptions): Promise<void> {
    if (!options.replace && (this.all().length > 0 || this.tokens.size > 0)) throw notEmptyError();
    this.tokens.replaceAll(dump.tokens);
    this.rows.clear();
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
    let count = 0;
    for (const row of this.all()) {
      if (matches(row)) {
        this.rows.delete(row.id);
        count++;
      }
    }
    return count;
  }

  private apply(actor: Actor, name: string, row: Row | undefined, change: Change): StoredEntry | undefined {
    if (change.kind === 'none') return row?.entry;
    const at = this.now();
    if (change.kind === 'drop') {
      if (!row) return undefined;
      row.dropped = { at, by: actor.label };
      row.entry = { ...row.entry, revision: row.entry.revision + 1 };
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

  private record(actor: Actor, row: Row, operation: RevisionOperation, at: number): void {
    const { revision, description, body } = row.entry;
    row.revisions.push({ revision, operation, actor: actor.label, at, description, body });
    if (row.revisions.length > this.historyLimit) row.revisions.splice(0, row.revisions.length - this.historyLimit);
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

  private totalBytes(user: string): number {
    return this.live(user).reduce((sum, row) => sum + row.entry.size, 0);
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
