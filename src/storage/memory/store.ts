/**
 * An in-process store: everything in plain objects, nothing on disk. For tests, for
 * agents that want a scratch memory, and as the simplest reading of the Store contract.
 * Its writes are the storage engine's (engine/) on its rows' primitives (rows.ts), run
 * synchronously, so nothing interleaves with them; its reads are its own. Like every
 * store it has no settings: the clock and the history limits come with each write.
 *
 * Not SQLite `:memory:`, though that would leave two backends: a SQLite store takes ~45 ms
 * to open (its migrations and statements) against ~0.01 ms for this one, and the unit
 * tests open some 220 stores.
 */

import type { ActivityQuery, ActivityRecord, ActorCount, ChangeListener } from '../../memory/activity.js';
import { EngramError } from '../../memory/model/errors.js';
import type { IndexRow } from '../../memory/model/format.js';
import { utf8Bytes } from '../../memory/model/text.js';
import type {
  Caller,
  CopyRevision,
  Decide,
  DecideAll,
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
import { notEmptyError } from '../../memory/port.js';
import { type SearchHit, type SearchTerms, searchHit, searchRank } from '../../memory/search.js';
import type { StorageBackend } from '../backend.js';
import { ChangeFeed, mutationDetails, recordingDecide } from '../change-feed.js';
import { runSync } from '../engine/drive.js';
import { purge, purgeTrash } from '../engine/purge.js';
import { mutate, mutateAll, undrop } from '../engine/writes.js';
import { MemoryAccountStore } from './accounts.js';
import { MemoryOAuthStore } from './oauth.js';
import { MemoryProposalStore } from './proposals.js';
import { MemoryRows } from './rows.js';
import { MemoryTokenStore } from './tokens.js';

export class MemoryStore implements StorageBackend {
  private readonly data = new MemoryRows();
  /** One process owns the data: watchers are told synchronously after each change, and nothing is polled. */
  private readonly feed = new ChangeFeed({
    readVersions: (users) => new Map(users.map((user) => [user, this.data.versions.get(user) ?? 0])),
  });
  /** Since when openings are recorded: the store's creation, as a new database's (or a loaded dump's). */
  private openedSince = Date.now();
  readonly tokens = new MemoryTokenStore();
  readonly accounts = new MemoryAccountStore();
  readonly oauth = new MemoryOAuthStore((user) => this.accounts.has(user));
  readonly proposals = new MemoryProposalStore((user) => {
    this.data.bump(user);
    this.feed.committed(user);
  });

  async index(user: string): Promise<IndexRow[]> {
    return this.data
      .live(user)
      .map(({ entry: { name, size, description } }) => ({ name, size, description }))
      .sort((a, b) => compare(a.name, b.name));
  }

  async overview(user: string): Promise<Overview> {
    const entries = this.data
      .live(user)
      .map(({ entry: { name, size, description, created, updated, revision }, revisions, opened }) => ({
        name,
        size,
        description,
        created,
        updated,
        revision,
        actor: revisions.find((record) => record.revision === revision)?.actor ?? '',
        opened,
      }))
      .sort((a, b) => compare(a.name, b.name));
    return { entries, openedSince: this.openedSince };
  }

  /** Bookkeeping on the row alone: the user's change counter stays, so no watcher is told. */
  async recordOpened(opens: readonly OpenedEntry[], minimumGap: number): Promise<void> {
    for (const { user, name, at } of opens) {
      const row = this.data.liveRow(user, name);
      if (row && (row.opened === undefined || row.opened < at - minimumGap)) row.opened = at;
    }
  }

  async usage(user: string): Promise<Usage> {
    return this.data.usage(user);
  }

  async users(): Promise<UserUsage[]> {
    return [...this.data.counters.entries()]
      .filter(([, counters]) => counters.entries > 0 || counters.historyBytes > 0)
      .sort(([a], [b]) => compare(a, b))
      .map(([user, counters]) => ({ user, ...counters }));
  }

  async get(user: string, names: readonly string[]): Promise<StoredEntry[]> {
    return names.flatMap((name) => this.data.liveRow(user, name)?.entry ?? []);
  }

  async mutate(caller: Caller, name: string, decide: Decide, rules: WriteRules): Promise<MutationResult> {
    const recording = recordingDecide(decide);
    const result = runSync(mutate(this.data, caller, name, recording.decide, rules));
    const details = mutationDetails(name, recording.decided(), result);
    if (details) this.feed.committed(caller.user, details);
    return result;
  }

  async mutateAll(caller: Caller, decide: DecideAll, rules: WriteRules): Promise<void> {
    runSync(mutateAll(this.data, caller, decide, rules));
    this.feed.committed(caller.user);
  }

  async history(user: string, name: string): Promise<RevisionRecord[]> {
    const row = this.data.liveRow(user, name) ?? this.data.trashed(user, name)[0];
    return row ? [...row.revisions] : [];
  }

  async timeline(user: string, name: string): Promise<CopyRevision[]> {
    return this.data
      .all()
      .filter((row) => row.user === user && row.entry.name === name)
      .flatMap((row) => row.revisions.map((record) => ({ ...record, entry: row.id })))
      .sort((a, b) => a.at - b.at || a.entry - b.entry || a.revision - b.revision);
  }

  async trash(user: string): Promise<TrashedEntry[]> {
    return this.data.trashed(user).map((row) => ({
      ...row.entry,
      droppedAt: row.dropped?.at ?? 0,
      droppedBy: row.dropped?.by ?? '',
    }));
  }

  async undrop(caller: Caller, name: string, rules: WriteRules, check?: UndropCheck): Promise<UndropResult> {
    const result = runSync(undrop(this.data, caller, name, rules, check));
    if (result.status === 'restored') {
      this.feed.committed(caller.user, { name, revision: result.entry.revision, operation: 'undrop' });
    }
    return result;
  }

  async purge(user: string, name: string, options: { readonly includeLive: boolean }): Promise<number> {
    const purged = runSync(purge(this.data, user, name, options.includeLive)).length;
    if (purged > 0) this.feed.committed(user, { name });
    return purged;
  }

  async purgeTrash(cutoff: number): Promise<number> {
    const purged = runSync(purgeTrash(this.data, cutoff)).length;
    if (purged > 0) this.feed.committedSome();
    return purged;
  }

  async activity(user: string, query: ActivityQuery): Promise<ActivityRecord[]> {
    const { before, actor } = query;
    return this.data
      .all()
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
    for (const row of this.data.all().filter((row) => row.user === user)) {
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
    return this.data
      .live(user)
      .flatMap(({ entry }) => {
        const rank = searchRank(entry, terms);
        return rank === undefined ? [] : [{ entry, rank }];
      })
      .sort((a, b) => a.rank - b.rank || b.entry.updated - a.entry.updated || compare(a.entry.name, b.entry.name))
      .slice(0, options.limit)
      .map(({ entry }) => searchHit(entry, terms));
  }

  async isEmpty(): Promise<boolean> {
    return (
      this.data.all().length === 0 &&
      this.tokens.size === 0 &&
      this.accounts.size === 0 &&
      this.oauth.size === 0 &&
      this.proposals.size === 0
    );
  }

  async dump(): Promise<StoreDump> {
    const rows = this.data.all().sort((a, b) => a.id - b.id);
    const tokens = await this.tokens.list();
    return {
      entries: rows.map(({ id, user, entry, dropped, revisions, opened }) => ({
        ...entry,
        id,
        user,
        droppedAt: dropped?.at ?? null,
        droppedBy: dropped?.by ?? null,
        revisions: [...revisions],
        opened: opened ?? null,
      })),
      users: [...this.data.counters.entries()]
        .sort(([a], [b]) => compare(a, b))
        .map(([user, counters]) => ({ user, ...counters })),
      tokens: tokens.sort((a, b) => a.created - b.created || compare(a.id, b.id)),
      accounts: await this.accounts.list(),
      ...this.oauth.snapshot(),
      proposals: this.proposals.all(),
      openedSince: this.openedSince,
    };
  }

  /** Keeps the dump's usage figures as given, as the SQL stores do. */
  async load(dump: StoreDump, options: LoadOptions): Promise<void> {
    if (!options.replace && !(await this.isEmpty())) throw notEmptyError();
    this.tokens.replaceAll(dump.tokens);
    this.accounts.replaceAll(dump.accounts);
    this.oauth.replaceAll(dump);
    this.proposals.replaceAll(dump.proposals);
    this.data.rows.clear();
    this.data.counters.clear();
    for (const { user, totalBytes, entries, historyBytes } of dump.users) {
      this.data.counters.set(user, { totalBytes, entries, historyBytes });
    }
    for (const { id, user, droppedAt, droppedBy, revisions, opened, ...entry } of dump.entries) {
      const dropped = droppedAt === null ? undefined : { at: droppedAt, by: droppedBy ?? '' };
      this.data.rows.set(id, {
        id,
        user,
        entry,
        dropped,
        revisions: [...revisions],
        ...(opened == null ? {} : { opened }),
      });
    }
    if (dump.openedSince !== undefined) this.openedSince = dump.openedSince;
    this.data.nextId = dump.entries.reduce((max, entry) => Math.max(max, entry.id), 0) + 1;
    for (const user of new Set([...this.data.versions.keys(), ...this.data.counters.keys()])) this.data.bump(user);
    options.onProgress?.(dump.entries.length);
    this.feed.committedSome();
  }

  /** Ready while open: an in-process store has no schema to fall behind. */
  async ready(): Promise<void> {
    if (this.data.closed) throw new EngramError('STORE_UNAVAILABLE', 'the in-process memory store is closed');
  }

  async close(): Promise<void> {
    this.data.closed = true;
    this.feed.close();
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

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
