/**
 * The port every storage backend implements (SQLite, PostgreSQL, in-process), published
 * as `engram/store` so that a backend of someone else's is typed like ours (and tested
 * like ours with `engram/testing`). It lives in core because the Memory service is
 * written against it; backends live in src/storage.
 *
 * A store knows nothing of edit rules, and keeps no rule or clock of its own. A write is
 * `mutate(...)`: inside one transaction the store reads the entry and the user's usage,
 * calls the pure `decide` function, hands its change to the pure `applyChange` (apply.ts)
 * with the caller and the WriteRules the Memory service passed, and persists what that
 * returns. `decide` may throw to refuse; the store then changes nothing and rethrows.
 *
 * `Store` is the union of the ports its contract suites test apart: EntryStore (the index,
 * reads, writes), RecoveryStore (history, trash, undrop, purge), DumpStore (a whole
 * store, copied), SearchStore (full-text search), ActivityStore and ChangeStore. Signing
 * in is not the memory's: a backend offers the access ports (tokens, accounts, OAuth;
 * access/port.ts) beside it, and a dump copies their records with the entries.
 */

import type { AccountRecord } from '../access/accounts/port.js';
import type { ClientRecord, GrantRecord, GrantSecretRecord } from '../access/oauth/port.js';
import type { TokenRecord } from '../access/tokens/port.js';
import type { ActivityQuery, ActivityRecord, ActorCount, ChangeListener } from './activity.js';
import type { Caller } from './model/caller.js';
import { EngramError } from './model/errors.js';
import type { IndexRow } from './model/format.js';
import type { Policy } from './model/policy.js';
import type { SearchHit, SearchTerms } from './search.js';

export type RevisionOperation =
  | 'create'
  | 'append'
  | 'replace'
  | 'remove'
  | 'describe'
  | 'drop'
  | 'restore'
  | 'undrop'
  | 'import';

export interface StoredEntry {
  readonly name: string;
  readonly description: string;
  readonly body: string;
  /** UTF-8 byte length of the body, kept in its own column so the index never reads bodies. */
  readonly size: number;
  /** Milliseconds since the epoch. */
  readonly created: number;
  readonly updated: number;
  /** Revision number of the entry's latest change, 1 on creation. */
  readonly revision: number;
}

export type { Caller };

/**
 * What every change is applied under: the Memory service's clock and its policy's
 * history limits, handed to the store with each write so that one owner (the Memory
 * service, from its Policy) decides them for every backend.
 */
export interface WriteRules extends Pick<Policy, 'historyLimit' | 'historyCap'> {
  /** The time of a change in ms since the epoch, read inside its transaction. */
  readonly now: () => number;
  /** The note the change's revision records (RevisionRecord.note), when its service gives one. */
  readonly note?: string;
}

export type Change =
  | { readonly kind: 'put'; readonly operation: RevisionOperation; readonly description: string; readonly body: string }
  | { readonly kind: 'drop' }
  | { readonly kind: 'none' };

/** What a user's live entries take, against the caps of the Policy (see usage.ts). */
export interface Usage {
  /** Sum of entryBytes over the user's live entries: names, descriptions and bodies, in UTF-8 bytes. */
  readonly totalBytes: number;
  /** How many live entries the user has. */
  readonly entries: number;
}

export type Decide = (current: StoredEntry | undefined, usage: Usage) => Change;

export interface MutationResult {
  /** The entry before the change (undefined if it did not exist). */
  readonly before: StoredEntry | undefined;
  /** The entry after the change (undefined if it was dropped or never existed). */
  readonly after: StoredEntry | undefined;
}

/** One recorded change of an entry: what it became, by whom, when. */
export interface RevisionRecord {
  readonly revision: number;
  readonly operation: RevisionOperation;
  readonly actor: string;
  readonly at: number;
  /** The description and body the entry had after this change (before it, for a drop). */
  readonly description: string;
  readonly body: string;
  /** Why the change was made, when a service said so (a revert: revert.ts; a merge: tidy.ts); absent for every other change. */
  readonly note?: string;
}

/** A revision of any copy (live or dropped) of a name, with the store's id of that copy (as in a dump). */
export interface CopyRevision extends RevisionRecord {
  readonly entry: number;
}

/** An entry in the trash: dropped, seen and restorable only by the human. */
export interface TrashedEntry extends StoredEntry {
  readonly droppedAt: number;
  readonly droppedBy: string;
}

/** A change to apply to one named entry as part of a multi-entry transaction. */
export interface NamedChange {
  readonly name: string;
  readonly change: Change;
  /**
   * With no live entry of the name, bring back its most recently dropped copy first (an
   * undrop revision, as `undrop` records it), and apply `change` to that copy unless it
   * already holds the change's description and body (a revert, revert.ts).
   */
  readonly undrop?: boolean;
}

/** Sees every live entry of the user (bodies included) and returns the changes to apply. */
export type DecideAll = (entries: readonly StoredEntry[], usage: Usage) => readonly NamedChange[];

/** Sees the copy an undrop would bring back and the user's usage; throws to refuse. */
export type UndropCheck = (entry: StoredEntry, usage: Usage) => void;

export type UndropResult =
  | { readonly status: 'restored'; readonly entry: StoredEntry }
  /** A live entry holds the name (and a copy is in the trash). */
  | { readonly status: 'taken' }
  /** Nothing of that name is in the trash. */
  | { readonly status: 'missing' };

/** One entry of a dump: a live or dropped copy of any user's entry, with every revision kept. */
export interface DumpedEntry extends StoredEntry {
  /** The store's own row id: kept, so that copies dropped at the same moment keep their order. */
  readonly id: number;
  readonly user: string;
  /** Null for a live entry. */
  readonly droppedAt: number | null;
  readonly droppedBy: string | null;
  /** Oldest first. */
  readonly revisions: readonly RevisionRecord[];
  /** When a model last opened it (ms since the epoch, EntryStore.recordOpened); null or absent: not since `openedSince`. */
  readonly opened?: number | null;
}

export interface UserUsage extends Usage {
  readonly user: string;
  /** UTF-8 bytes of the descriptions and bodies of every revision the user's entries (live and dropped) keep. */
  readonly historyBytes: number;
}

/** Everything a store holds, to copy it whole into another store (`engram migrate`). */
export interface StoreDump {
  /** Every user's entries, live and dropped, by ascending id. */
  readonly entries: readonly DumpedEntry[];
  /** Every user's usage total, by user name in code-point order. */
  readonly users: readonly UserUsage[];
  /** Every token, in order of creation (then id). */
  readonly tokens: readonly TokenRecord[];
  /** Every account, by user name in code-point order. Sessions are not copied: browsers sign in again. */
  readonly accounts: readonly AccountRecord[];
  /** Every registered OAuth client, in order of registration (then id). */
  readonly clients: readonly ClientRecord[];
  /** Every grant (connected app), in order of creation (then id). */
  readonly grants: readonly GrantRecord[];
  /** Every secret of those grants, by grant id, then hash. */
  readonly grantSecrets: readonly GrantSecretRecord[];
  /** Every change held for review, of every user, oldest first (then by id). */
  readonly proposals: readonly ProposalRecord[];
  /**
   * Since when the store records openings (Overview.openedSince); absent in a dump of a
   * store that does not, whose load keeps the target's own.
   */
  readonly openedSince?: number;
}

/** A StoreDump without its entries: what a dump in batches hands back whole, once its entries are taken. */
export type DumpTables = Omit<StoreDump, 'entries'>;

/** Where a dump in batches (DumpStore.dumpInBatches) hands its entries, as it reads them. */
export interface EntryBatches {
  /** How many entries the dump holds: told once, before the first batch. */
  total(entries: number): void;
  /**
   * The next entries, each with every revision it keeps, in the store's own order (ids
   * ascending within each user's): the next batch is read once this one's promise settles,
   * and a rejection ends the dump with it.
   */
  batch(entries: readonly DumpedEntry[]): Promise<void>;
}

/** A dump being read: it hands its entries to `batches` as it reads them, and answers the rest (dumpInBatchesOf). */
export type BatchedDump = (batches: EntryBatches) => Promise<DumpTables>;

export interface LoadOptions {
  /** Replace whatever the store holds; without it, a store that is not empty refuses the load. */
  readonly replace: boolean;
  /** Told, as the load proceeds, how many of the dump's entries are written so far. */
  readonly onProgress?: (entriesWritten: number) => void;
}

/** How a load in batches (DumpStore.loadInBatches) is asked: as a load, its progress told with the dump's total. */
export interface BatchedLoadOptions {
  /** Replace whatever the store holds; without it, a store that is not empty refuses the load. */
  readonly replace: boolean;
  /** Told, as the load proceeds, how many of the dump's entries are written so far, of how many it holds. */
  readonly onProgress?: ((entriesWritten: number, entriesTotal: number) => void) | undefined;
}

/**
 * `store`'s loadInBatches, or, for a store that has none, every batch gathered and
 * loaded whole (such a store holds its whole memory anyway): refused, changing nothing,
 * when the store is not empty without `replace` or when `dumped` rejects.
 */
export async function loadInBatchesOf(
  store: DumpStore,
  dumped: BatchedDump,
  options: BatchedLoadOptions,
): Promise<void> {
  if (store.loadInBatches) return store.loadInBatches(dumped, options);
  // Refused before the dump is read, as a load in batches refuses before taking a batch.
  if (!options.replace && !(await store.isEmpty())) throw notEmptyError();
  let total = 0;
  const entries: DumpedEntry[] = [];
  const tables = await dumped({
    total: (count) => {
      total = count;
    },
    // One by one: a spread of a batch of some 100,000 entries overflows the stack.
    batch: async (batch) => {
      for (const entry of batch) entries.push(entry);
    },
  });
  await store.load(
    { entries, ...tables },
    { replace: options.replace, onProgress: (written) => options.onProgress?.(written, total) },
  );
}

/** `store`'s dumpInBatches, or its whole dump handed over as one batch by a store that has none (held whole anyway). */
export async function dumpInBatchesOf(store: DumpStore, batches: EntryBatches): Promise<DumpTables> {
  if (store.dumpInBatches) return store.dumpInBatches(batches);
  const { entries, ...tables } = await store.dump();
  batches.total(entries.length);
  if (entries.length > 0) await batches.batch(entries);
  return tables;
}

/** What `load` throws, changing nothing, when the store is not empty and `replace` was not asked for. */
export function notEmptyError(): EngramError {
  return new EngramError(
    'CONFLICT',
    'the target store is not empty, so nothing was loaded: load with replace to overwrite everything in it, or load into an empty store.',
  );
}

/** An index row with the entry's last change: its time, revision number and actor; and when it was last opened. */
export interface OverviewRow extends IndexRow {
  /** When it was created, in ms since the epoch (so "not opened since" never reaches before it). */
  readonly created: number;
  readonly updated: number;
  readonly revision: number;
  readonly actor: string;
  /** When a model last opened it, in ms since the epoch (approximately: recordOpened); undefined: not since openedSince. */
  readonly opened: number | undefined;
}

/** The index for people: its rows, and since when openings are recorded. */
export interface Overview {
  readonly entries: OverviewRow[];
  /**
   * When this store began recording openings (ms since the epoch: its upgrade to them, or
   * its creation): an entry opened before then shows no `opened`, so "not opened since"
   * is never claimed before it.
   */
  readonly openedSince: number;
}

/** One entry a model opened, and when (EntryStore.recordOpened). */
export interface OpenedEntry {
  readonly user: string;
  readonly name: string;
  readonly at: number;
}

/** The entries of every user: the index, reads, and the one way to change them. */
export interface EntryStore {
  /** One row per live entry of the user, sorted by name, from stored columns only. */
  index(user: string): Promise<readonly IndexRow[]>;
  /**
   * The index for people (the web UI): one row per live entry, sorted by name, with when
   * it last changed, its revision and who made that change (the latest revision's actor)
   * and when it was last opened; never reads bodies.
   */
  overview(user: string): Promise<Overview>;
  /** What the user's live entries take now (the same figures `decide` is given). */
  usage(user: string): Promise<Usage>;
  /** Every user the store keeps anything of (live entries, trash or history), with their usage, by name in code-point order. */
  users(): Promise<UserUsage[]>;
  /** The live entries among `names` (already normalised), in no particular order. */
  get(user: string, names: readonly string[]): Promise<StoredEntry[]>;
  /**
   * Reads, decides and writes one entry atomically: `decide`'s change goes through
   * `applyChange` under `rules`, recording a revision for a change.
   */
  mutate(caller: Caller, name: string, decide: Decide, rules: WriteRules): Promise<MutationResult>;
  /** Like mutate, over all of the user's entries at once (given to `decide` by name), in one transaction (import, wipe). */
  mutateAll(caller: Caller, decide: DecideAll, rules: WriteRules): Promise<void>;
  /**
   * Notes when entries were opened, in one transaction: each live entry of `opens` whose
   * `opened` is unset or older than `at - minimumGap` takes `at`; a name with no live
   * entry is passed over. Bookkeeping, not a change: no revision, the user's change counter
   * stays (no watcher is told), and the entry's `updated` and revision stay. The store keeps
   * no rule of its own: the caller (memory/opened.ts) passes the gap.
   */
  recordOpened(opens: readonly OpenedEntry[], minimumGap: number): Promise<void>;
}

/** What was dropped or changed, seen and undone: revisions, the trash, undrop and purge. */
export interface RecoveryStore {
  /** Revisions of the live entry `name`, else of its most recently dropped copy; oldest first. */
  history(user: string, name: string): Promise<RevisionRecord[]>;
  /**
   * The revisions of every copy of `name`, live and dropped, each with its copy's id:
   * oldest first, by time, then copy id, then revision (what a revert reads, revert.ts).
   */
  timeline(user: string, name: string): Promise<CopyRevision[]>;
  /** The user's trash, most recently dropped first. */
  trash(user: string): Promise<TrashedEntry[]>;
  /**
   * Brings back the most recently dropped copy of `name`, recording an `undrop` revision
   * (`applyUndrop` under `rules`). `check` sees that copy and the user's usage inside the
   * transaction and may throw to refuse (a cap): the store then changes nothing and rethrows.
   */
  undrop(caller: Caller, name: string, rules: WriteRules, check?: UndropCheck): Promise<UndropResult>;
  /**
   * Deletes the dropped copies of `name` (and the live entry too with includeLive) with all
   * their revisions, so that no copy of their text remains in the store's files.
   * Returns how many entries were purged.
   */
  purge(user: string, name: string, options: { readonly includeLive: boolean }): Promise<number>;
  /** Purges, for every user, the trash dropped at or before `cutoff` (ms since the epoch). */
  purgeTrash(cutoff: number): Promise<number>;
}

/** A whole store at once, to copy it into another (`engram migrate`, `engram restore-backup`). */
export interface DumpStore {
  /** True when the store holds no entry (live or dropped), no user's usage, no token, account, client or grant. */
  isEmpty(): Promise<boolean>;
  /** Everything the store holds, read as one consistent snapshot. */
  dump(): Promise<StoreDump>;
  /**
   * Which database this store's tables are, however it was named (a PostgreSQL URL spelled
   * another way): two stores answering the same are one, and a copy between them is refused
   * (it would wait on itself). Optional: a store named by a file path is told by the path.
   */
  identity?(): Promise<string>;
  /**
   * `dump`, read as one consistent snapshot as well, but its entries handed to `batches`
   * as they are read, a batch at a time, and the rest returned at the end: a store that
   * may be larger than its process's memory (a SQL database's) is copied without being held
   * whole. Optional: a store without it is dumped whole (dumpInBatchesOf).
   */
  dumpInBatches?(batches: EntryBatches): Promise<DumpTables>;
  /**
   * Writes `dump` in one transaction, keeping every id, time and total as given: all of it,
   * or nothing. Unless `replace`, a store that is not empty refuses with CONFLICT (notEmptyError).
   */
  load(dump: StoreDump, options: LoadOptions): Promise<void>;
  /**
   * `load` of a dump read as it is loaded (`dumped`, another store's dump in batches): the
   * same one transaction, each batch written as it is handed over, so that a memory larger
   * than the process's heap is copied (`engram migrate`, `engram restore-backup`) without
   * being held whole. A rejection of `dumped` (a batch refused, a check failed at its end)
   * rolls it all back: the store is left as it was. Optional: a store without it gathers the
   * batches and loads them whole (loadInBatchesOf).
   */
  loadInBatches?(dumped: BatchedDump, options: BatchedLoadOptions): Promise<void>;
}

/**
 * Full-text search of live entries for people (search.ts), from an index the store keeps
 * in the same transaction as every write that changes a live entry's text, drops, brings
 * back, purges, loads or wipes it.
 */
export interface SearchStore {
  /**
   * The user's live entries holding every one of `terms` (folded words, search-words.ts)
   * as a word of the name, description or body, the last term as the start of a word;
   * ranked all terms in the name first, then all in the description, then the rest, each
   * rank most recently updated first, then by name in code-point order; at most `limit`
   * (1 to 50), each built with `searchHit`.
   */
  search(user: string, terms: SearchTerms, options: { readonly limit: number }): Promise<SearchHit[]>;
}

/**
 * Activity (activity.ts): a user's changes across their whole memory, read from the
 * revisions kept, by an index of the user's revisions by time — never bodies — and who made them.
 */
export interface ActivityStore {
  /**
   * The user's revisions (of live and dropped entries), newest first — by time, then entry
   * id, then revision, all descending — each with its entry's name; only those after
   * `before` in that order, and only `actor`'s when given; at most `limit` (a page of at
   * most ACTIVITY_LIMIT_CAP, and one more to see whether another follows).
   */
  activity(user: string, query: ActivityQuery): Promise<ActivityRecord[]>;
  /** Each actor of the user's revisions with how many they made and the latest's time: most first, then by name in code-point order. */
  actors(user: string): Promise<ActorCount[]>;
}

/**
 * Word of changes as they commit, for live updates (activity.ts MemoryChange). Changes
 * this store commits are told once committed (the in-process store synchronously);
 * changes another process commits to the same database are told within a poll.
 */
export interface ChangeStore {
  /**
   * Calls `listener` for each committed change of the user's memory until the function
   * it resolves to is called. It resolves once the store knows where the watch starts:
   * every change committed after that is told (one committed before may be told too).
   * Rejects when the store is closed.
   */
  watch(user: string, listener: ChangeListener): Promise<() => void>;
}

/**
 * A change a review-mode caller asked for (memory/review.ts), held until the user approves
 * or rejects it: what was asked (a write's texts, name parsed and line endings normalised;
 * nothing more for a drop), and what it would have made of the entry when it was asked.
 */
export interface ProposalRecord {
  /** The service's id, unique in the store. */
  readonly id: string;
  readonly user: string;
  readonly name: string;
  /** A drop, or one of memory_write's operations, as decided on the entry when proposed. */
  readonly operation: 'create' | 'append' | 'replace' | 'remove' | 'describe' | 'drop';
  /** The write's texts as asked (absent: not given); all absent for a drop. */
  readonly description: string | undefined;
  readonly new: string | undefined;
  readonly old: string | undefined;
  /** The entry's revision it was decided on; 0 when there was no entry. */
  readonly baseRevision: number;
  /** The description and body the entry would have had (for a drop: the entry as it was). */
  readonly proposedDescription: string;
  readonly proposedBody: string;
  /** Who proposed it, as history would record them (the caller's label). */
  readonly actor: string;
  /** When it was proposed, in ms since the epoch. */
  readonly at: number;
}

/**
 * Where proposals wait (a backend offers it beside the memory, in the same database, as
 * `proposals`). Keeping or taking one moves its user's change counter (ChangeStore), so
 * watchers — the web UI's Review view — are told. The store keeps no rule: the Review
 * service decides what is proposed, when it expires and how it is applied.
 */
export interface ProposalStore {
  /**
   * Keeps `proposal`, first deleting its user's proposals made at or before `expired`;
   * refuses (false, nothing kept) when the user then has `limit` or more waiting.
   */
  add(proposal: ProposalRecord, limit: number, expired: number): Promise<boolean>;
  /** The user's proposals made after `expired`, oldest first (then by id). */
  list(user: string, expired: number): Promise<ProposalRecord[]>;
  /** The user's proposal `id`, whether expired or not. */
  find(user: string, id: string): Promise<ProposalRecord | undefined>;
  /** Deletes the user's proposal `id` and returns it; undefined when it is not there (another call took it). */
  take(user: string, id: string): Promise<ProposalRecord | undefined>;
  /** Deletes every user's proposals made at or before `cutoff`; returns how many. */
  expire(cutoff: number): Promise<number>;
}

/** A backend's memory: the union of the ports above, and a way to close it. */
export interface Store extends EntryStore, RecoveryStore, DumpStore, SearchStore, ActivityStore, ChangeStore {
  close(): Promise<void>;
}
