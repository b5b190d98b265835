/**
 * An in-process store: everything in plain objects, nothing on disk. For tests, for
 * agents that want a scratch memory, and as the simplest reading of the Store contract.
 * A transaction is a synchronous stretch of code, so nothing interleaves with it. Like
 * every store it has no settings: the clock and the history limits come with each write.
 */

import type { ActivityQuery, ActivityRecord, ActorCount, ChangeListener } from '../../memory/activity.js';
import { type AppliedChange, applyChange, applyUndrop, entryAfter } from '../../memory/model/apply.js';
import type { IndexRow } from '../../memory/model/format.js';
import { utf8Bytes } from '../../memory/model/text.js';
import { entryBytes, revisionBytes } from '../../memory/model/usage.js';
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
import { notEmptyError } from '../../memory/port.js';
import { type SearchHit, type SearchTerms, searchHit, searchRank } from '../../memory/search.js';
import type { StorageBackend } from '../backend.js';
import { ChangeFeed, mutationDetails } from '../change-feed.js';
import { Trim } from '../history-cap.js';
import { MemoryAccountStore } from './accounts.js';
import { MemoryOAuthStore } from './oauth.js';
import { MemoryTokenStore } from './tokens.js';

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

export class MemoryStore implements StorageBackend {
  private readonly rows = new Map<number, Row>();
  private nextId = 1;
  private readonly counters = new Map<string, Counters>();
  /** Each user's change counter (ChangeFeed), moved with their counters by every change. */
  private readonly versions = new Map<string, number>();
  /** One process owns the data: watchers are told synchronously after each change, and nothing is polled. */
  private readonly feed = new ChangeFeed({
    readVersions: (users) => new Map(users.map((user) => [user, this.versions.get(user) ?? 0])),
  });
  private closed = false;
  readonly tokens = new MemoryTokenStore();
  readonly accounts = new MemoryAccountStore();
  readonly oauth = new MemoryOAuthStore();

  async index(user: string): Promise<IndexRow[]> {
    return this.live(user)
      .map(({ entry: { name, size, description } }) => ({ name, size, description }))
      .sort((a, b) => compare(a.name, b.name));
  }

  async overview(user: string): Promise<OverviewRow[]> {
    return this.live(user)
      .map(({ entry: { name, size, description, updated, revision }, revisions }) => ({
        name,
        size,
        description,
        updated,
        revision,
        actor: revisions.find((record) => record.revision === revision)?.actor ?? '',
      }))
      .sort((a, b) => compare(a.name, b.name));
  }

  async usage(user: string): Promise<Usage> {
    return this.usageOf(user);
  }

  async users(): Promise<UserUsage[]> {
    return [...this.counters.entries()]
      .filter(([, counters]) => counters.entries > 0 || counters.historyBytes > 0)
      .sort(([a], [b]) => compare(a, b))
      .map(([user, counters]) => ({ user, ...counters }));
  }

  async get(user: string, names: readonly string[]): Promise<StoredEntry[]> {
    return names.flatMap((name) => this.liveRow(user, name)?.entry ?? []);
  }

  async mutate(caller: Caller, name: string, decide: Decide, rules: WriteRules): Promise<MutationResult> {
    const row = this.liveRow(caller.user, name);
    const before = row?.entry;
    const change = decide(before, this.usageOf(caller.user));
    const result = { before, after: this.apply(caller, name, row, change, rules) };
    const details = mutationDetails(name, change, result);
    if (details) this.feed.committed(caller.user, details);
    return result;
  }

  async mutateAll(caller: Caller, decide: DecideAll, rules: WriteRules): Promise<void> {
    const rows = this.live(caller.user);
    const changes = decide(
      rows.map((row) => row.entry),
      this.usageOf(caller.user),
    );
    const byName = new Map(rows.map((row) => [row.entry.name, row]));
    for (const { name, change } of changes) this.apply(caller, name, byName.get(name), change, rules);
    this.feed.committed(caller.user);
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

  async undrop(caller: Caller, name: string, rules: WriteRules, check?: UndropCheck): Promise<UndropResult> {
    const row = this.trashed(caller.user, name)[0];
    if (!row) return { status: 'missing' };
    if (this.liveRow(caller.user, name)) return { status: 'taken' };
    check?.(row.entry, this.usageOf(caller.user));
    const applied = applyUndrop(row.entry, caller, rules.now(), rules.historyLimit);
    this.persist(caller.user, row, applied, rules);
    this.feed.committed(caller.user, { name, revision: applied.entry.revision, operation: 'undrop' });
    return { status: 'restored', entry: applied.entry };
  }

  async purge(user: string, name: string, options: { readonly includeLive: boolean }): Promise<number> {
    const purged = this.forget(
      (row) => row.user === user && row.entry.name === name && (options.includeLive || row.dropped !== undefined),
    );
    if (purged > 0) this.feed.committed(user, { name });
    return purged;
  }

  async purgeTrash(cutoff: number): Promise<number> {
    const purged = this.forget((row) => row.dropped !== undefined && row.dropped.at <= cutoff);
    if (purged > 0) this.feed.committedSome();
    return purged;
  }

  async activity(user: string, query: ActivityQuery): Promise<ActivityRecord[]> {
    const { before, actor } = query;
    return this.all()
      .filter((row) => row.user === user)
      .flatMap(({ id, entry: { name }, revisions }) =>
        revisions.map(({ revision, operation, actor, at, description, body }) => ({
          at,
          entry: id,
          revision,
          name,
          operation,
          actor,
          description,
          size: utf8Bytes(body),
        })),
      )
      .filter((record) => (actor === undefined || record.actor === actor) && (!before || isBefore(record, before)))
      .sort((a, b) => b.at - a.at || b.entry - a.entry || b.revision - a.revision)
      .slice(0, query.limit);
  }

  async actors(user: string): Promise<ActorCount[]> {
    const counts = new Map<string, { changes: number; last: number }>();
    for (const row of this.all().filter((row) => row.user === user)) {
      for (const { actor, at } of row.revisions) {
        const count = counts.get(actor) ?? { changes: 0, last: at };
        counts.set(actor, { changes: count.changes + 1, last: Math.max(count.last, at) });
      }
    }
    return [...counts.entries()]
      .map(([actor, count]) => ({ actor, ...count }))
      .sort((a, b) => b.changes - a.changes || compare(a.actor, b.actor));
  }

  watch(user: string, listener: ChangeListener): Promise<() => void> {
    return this.feed.watch(user, listener);
  }

  /** Matches every live entry of the user in process: its words, as search-words.ts reads them. */
  async search(user: string, terms: SearchTerms, options: { readonly limit: number }): Promise<SearchHit[]> {
    return this.live(user)
      .flatMap(({ entry }) => {
        const rank = searchRank(entry, terms);
        return rank === undefined ? [] : [{ entry, rank }];
      })
      .sort((a, b) => a.rank - b.rank || b.entry.updated - a.entry.updated || compare(a.entry.name, b.entry.name))
      .slice(0, options.limit)
      .map(({ entry }) => searchHit(entry, terms));
  }

  async isEmpty(): Promise<boolean> {
    return this.all().length === 0 && this.tokens.size === 0 && this.accounts.size === 0 && this.oauth.size === 0;
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
      accounts: await this.accounts.list(),
      ...this.oauth.snapshot(),
    };
  }

  /** Keeps the dump's usage figures as given, as the SQL stores do. */
  async load(dump: StoreDump, options: LoadOptions): Promise<void> {
    if (!options.replace && !(await this.isEmpty())) throw notEmptyError();
    this.tokens.replaceAll(dump.tokens);
    this.accounts.replaceAll(dump.accounts);
    this.oauth.replaceAll(dump);
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
    for (const user of new Set([...this.versions.keys(), ...this.counters.keys()])) this.bump(user);
    options.onProgress?.(dump.entries.length);
    this.feed.committedSome();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.feed.close();
  }

  private forget(matches: (row: Row) => boolean): number {
    const rows = this.all().filter(matches);
    for (const row of rows) this.remove(row);
    return rows.length;
  }

  /** Deletes the row with its revisions; a live one no longer counts towards its user's usage. */
  private remove(row: Row): void {
    this.rows.delete(row.id);
    const historyBytes = -sumBytes(row.revisions);
    if (row.dropped) this.count(row.user, { historyBytes });
    else this.count(row.user, { totalBytes: -bytesOf(row.entry), entries: -1, historyBytes });
  }

  /** Applies one decided change to the live row (if any) and returns the entry after it. */
  private apply(
    caller: Caller,
    name: string,
    row: Row | undefined,
    change: Change,
    rules: WriteRules,
  ): StoredEntry | undefined {
    const current = row?.entry;
    const applied = applyChange({ name, current, change, caller, at: rules.now(), historyLimit: rules.historyLimit });
    if (applied) this.persist(caller.user, row, applied, rules);
    return entryAfter(current, applied);
  }

  /** Persists what applyChange or applyUndrop returned, then keeps the user's history within the cap. */
  private persist(user: string, row: Row | undefined, applied: AppliedChange, rules: WriteRules): void {
    const target = row ?? this.insert(user, applied.entry);
    target.entry = applied.entry;
    if (applied.kind === 'drop') target.dropped = { at: applied.record.at, by: applied.record.actor };
    if (applied.kind === 'undrop') target.dropped = undefined;
    target.revisions.push(applied.record);
    const kept = target.revisions.filter((record) => record.revision > applied.trimThrough);
    const trimmed = target.revisions.length === kept.length ? 0 : sumBytes(target.revisions) - sumBytes(kept);
    target.revisions = kept;
    const { usage } = applied;
    const { historyBytes } = this.count(user, { ...usage, historyBytes: usage.historyBytes - trimmed });
    this.trimHistory(user, Trim.of(historyBytes, rules.historyCap));
  }

  private insert(user: string, entry: StoredEntry): Row {
    const row: Row = { id: this.nextId++, user, entry, revisions: [] };
    this.rows.set(row.id, row);
    return row;
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
      .map((row) => ({ row, bytes: sumBytes(row.revisions) }));
    // remove() counts what each dropped entry took.
    for (const { row } of trim.take(trash)) this.remove(row);
  }

  private usageOf(user: string): Usage {
    const { totalBytes, entries } = this.counters.get(user) ?? { totalBytes: 0, entries: 0 };
    return { totalBytes, entries };
  }

  /** Adds the deltas to the user's counters and returns them. */
  private count(user: string, delta: Partial<Counters>): Counters {
    this.bump(user);
    const counters = this.counters.get(user) ?? { totalBytes: 0, entries: 0, historyBytes: 0 };
    counters.totalBytes += delta.totalBytes ?? 0;
    counters.entries += delta.entries ?? 0;
    counters.historyBytes += delta.historyBytes ?? 0;
    this.counters.set(user, counters);
    return counters;
  }

  /** Moves the user's change counter: something of theirs changed. */
  private bump(user: string): void {
    this.versions.set(user, (this.versions.get(user) ?? 0) + 1);
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

/** Whether `record` comes after `position` in activity order (newest first). */
function isBefore(record: ActivityRecord, position: ActivityQuery['before'] & object): boolean {
  return (
    record.at < position.at ||
    (record.at === position.at &&
      (record.entry < position.entry || (record.entry === position.entry && record.revision < position.revision)))
  );
}

function bytesOf(entry: StoredEntry): number {
  return entryBytes(entry.name, entry.description, entry.size);
}

function recordBytes(record: RevisionRecord): number {
  return revisionBytes(record.description, record.body);
}

function sumBytes(records: readonly RevisionRecord[]): number {
  return records.reduce((sum, record) => sum + recordBytes(record), 0);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
