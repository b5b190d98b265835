/**
 * The Memory service: the three tool operations (open, write, drop) and the index,
 * over any Store. Every front door — MCP, HTTP, CLI, library — calls this and nothing
 * below it, so all of them apply the same rules and return the same messages.
 */

import { Activity } from './activity.js';
import { putEntry, writeRules } from './model/apply.js';
import { assertWritable, type Caller } from './model/caller.js';
import { checkCaps, planEdit, type WriteRequest, writeNotFound } from './model/edit.js';
import { EngramError } from './model/errors.js';
import { didYouMean, type IndexRow, type MissingEntry } from './model/format.js';
import { parseName, parseWritableName } from './model/names.js';
import { DEFAULT_POLICY, type Policy } from './model/policy.js';
import { closest } from './model/similarity.js';
import { normalizeNewlines, utf8Bytes } from './model/text.js';
import { NO_OPENED_LOG, OpenedLog, type OpenedLogOptions, type OpenedNotes } from './opened.js';
import type {
  Change,
  Decide,
  Overview,
  ProposalRecord,
  ProposalStore,
  Store,
  StoredEntry,
  Usage,
  WriteRules,
} from './port.js';
import { Recovery } from './recovery.js';
import { Revert } from './revert.js';
import { Review } from './review.js';
import { parseSearch, type SearchHit, searchLimit } from './search.js';
import { Tidy } from './tidy.js';

export type { Caller, WriteRequest };

/** Missing names of one memory_open that get "did you mean" suggestions; the rest are only reported. */
const SUGGESTED_NAMES = 10;

/**
 * Existing names compared with missing ones, in all, for one call's "did you mean": about
 * 20 ms at some 0.2 µs a comparison. A name costs one comparison per entry, so ten names
 * are suggested for up to 10,000 entries, fewer above, and none past 100,000 (a memory
 * grown that far with raised caps), where the answer says "not found" and no more.
 */
const SUGGESTION_COMPARISONS = 100_000;

/** How many missing names of one call get suggestions, against a memory of `entries` entries. */
export function suggestedNames(entries: number): number {
  return Math.min(SUGGESTED_NAMES, Math.floor(SUGGESTION_COMPARISONS / Math.max(entries, 1)));
}

/** The most names one `names` call returns, however many match (a picker's worth). */
export const MAX_LISTED_NAMES = 100;

/** Entry names that matched what was typed: the first ones, and how many matched in all. */
export interface NameList {
  readonly names: readonly string[];
  readonly total: number;
}

export interface WriteOutcome {
  /** The entry after the write (for a review-mode caller's: as it would be once approved). */
  readonly entry: StoredEntry;
  /** False when the write left the entry exactly as it was. */
  readonly changed: boolean;
  /** A review-mode caller's change, held for review instead of applied (review.ts). */
  readonly proposal?: ProposalRecord | undefined;
}

export interface DropOutcome {
  /** The entry dropped (for a review-mode caller's: the entry its proposal would drop). */
  readonly entry: StoredEntry;
  /** A review-mode caller's drop, held for review instead of applied (review.ts). */
  readonly proposal?: ProposalRecord | undefined;
}

export interface OpenOutcome {
  /** Found entries, in the order they were asked for. */
  readonly found: StoredEntry[];
  readonly missing: MissingEntry[];
}

export interface MemoryOptions {
  readonly store: Store;
  /**
   * The rules this memory enforces; what is left out is DEFAULT_POLICY's. The history
   * limits (historyLimit, historyCap) travel to the store with every write, so they hold
   * on any store, however it was opened.
   */
  readonly policy?: Partial<Policy>;
  /**
   * Clock in milliseconds, the only one: the times of every change, revision and drop the
   * store records, and trash retention. Tests inject one.
   */
  readonly now?: () => number;
  /** Where review-mode callers' changes wait (a backend's `proposals`); without it, review mode is refused. */
  readonly proposals?: ProposalStore | undefined;
  /**
   * How the entries models open are noted (opened.ts): its settings, and where a failure to
   * write them is told; false notes nothing. Call close() to write what waits.
   */
  readonly openedLog?: Omit<OpenedLogOptions, 'store' | 'now'> | false | undefined;
}

/** How an open is asked for. */
export interface OpenOptions {
  /**
   * A model reading (the tool handler: `memory_open` and the MCP resources): noted as an
   * opening (opened.ts). Every other read — the web UI, `engram open`, a merge looking up
   * revisions — is a person's or Engram's own, and never makes an entry look used.
   */
  readonly byModel?: boolean;
}

export class Memory {
  readonly store: Store;
  readonly policy: Policy;
  /** What every write is applied under: this policy's history limits and this clock. */
  readonly rules: WriteRules;
  /** History, restore, trash, undrop, purge: for the human, never for the model. */
  readonly recovery: Recovery;
  /** What changed across the whole memory, by whom; and word of changes as they commit. */
  readonly activity: Activity;
  /** One actor's changes over a time range, previewed, reverted in one operation, and undone. */
  readonly revert: Revert;
  /** Changes held for review: a review-mode caller's writes and drops, approved or rejected by the person. */
  readonly review: Review;
  /** Possible duplicates listed, and one entry merged into another: for the person, never for the model. */
  readonly tidy: Tidy;
  /** Where the entries models open are noted, to be written off the read path (opened.ts). */
  readonly opened: OpenedNotes;

  constructor(options: MemoryOptions) {
    this.store = options.store;
    this.policy = { ...DEFAULT_POLICY, ...options.policy };
    const now = options.now ?? Date.now;
    this.rules = writeRules(this.policy, now);
    this.recovery = new Recovery(this.store, this.policy, this.rules);
    this.activity = new Activity(this.store);
    this.revert = new Revert(this.store, this.policy, this.rules, this.recovery);
    this.review = new Review(this.store, options.proposals, this.policy, this.rules, this.recovery);
    this.tidy = new Tidy(this.store, this.policy, this.rules, this.recovery);
    this.opened =
      options.openedLog === false ? NO_OPENED_LOG : new OpenedLog({ ...options.openedLog, store: this.store, now });
  }

  /** Writes the openings noted and not yet written; the store stays open (its owner closes it). */
  close(): Promise<void> {
    return this.opened.close();
  }

  /** One row per entry, sorted by name; never reads bodies. */
  index(caller: Caller): Promise<readonly IndexRow[]> {
    return this.store.index(caller.user);
  }

  /**
   * Entry names for a picker (a client completing an entry's name): those starting with
   * `typed`, or whose part after the `/` does, case folded; in index order, at most `limit`
   * (never more than MAX_LISTED_NAMES), with how many matched. Never reads bodies.
   */
  async names(caller: Caller, typed = '', limit = MAX_LISTED_NAMES): Promise<NameList> {
    const start = typed.trim().toLowerCase();
    const matches = (await this.store.index(caller.user))
      .map((row) => row.name)
      .filter((name) => name.startsWith(start) || name.slice(name.indexOf('/') + 1).startsWith(start));
    return { names: matches.slice(0, Math.max(0, Math.min(limit, MAX_LISTED_NAMES))), total: matches.length };
  }

  /** The index for people: each entry with when it last changed, who changed it and when a model last opened it; never reads bodies. */
  overview(caller: Caller): Promise<Overview> {
    return this.store.overview(caller.user);
  }

  /** What the caller's live entries take, against the policy's caps. */
  usage(caller: Caller): Promise<Usage> {
    return this.store.usage(caller.user);
  }

  /**
   * Full-text search of the caller's live entries, for people (search.ts), never a tool of
   * the model: the query checked and bounded (INVALID_ARGUMENT), at most `limit` hits.
   */
  async search(caller: Caller, query: string, options: { readonly limit?: number } = {}): Promise<SearchHit[]> {
    const terms = parseSearch(query);
    return this.store.search(caller.user, terms, { limit: searchLimit(options.limit) });
  }

  /** The entries of `rawNames` that exist, and suggestions for the rest; a model's opening of each is noted (opened.ts). */
  async open(caller: Caller, rawNames: readonly string[], options: OpenOptions = {}): Promise<OpenOutcome> {
    const names = [...new Set(rawNames.map((raw) => parseName(raw, this.policy)))];
    if (names.length > this.policy.maxNames) {
      throw new EngramError(
        'INVALID_ARGUMENT',
        `memory_open takes at most ${this.policy.maxNames} names per call; ${names.length} were given. ` +
          'Open the entries you need most first, then the rest in another call.',
        { reason: 'too-many-names', given: names.length, max: this.policy.maxNames },
      );
    }
    const rows = await this.store.get(caller.user, names);
    const byName = new Map(rows.map((entry) => [entry.name, entry]));
    const found = names.flatMap((name) => byName.get(name) ?? []);
    if (options.byModel)
      this.opened.note(
        caller.user,
        found.map((entry) => entry.name),
      );
    const absent = names.filter((name) => !byName.has(name));
    const missing = absent.length === 0 ? [] : await this.describeMissing(caller, absent);
    return { found, missing };
  }

  async write(caller: Caller, request: WriteRequest): Promise<WriteOutcome> {
    const name = parseWritableName(request.name, this.policy);
    assertWritable(caller);
    const edit: WriteRequest = {
      name,
      description: request.description,
      new: request.new === undefined ? undefined : normalizeNewlines(request.new),
      old: request.old === undefined ? undefined : normalizeNewlines(request.old),
    };
    try {
      const decide = (current: StoredEntry | undefined, usage: Usage): Change => {
        const result = planEdit(current, edit, this.policy);
        if (current && result.body === current.body && result.description === current.description) {
          return { kind: 'none' };
        }
        checkCaps(name, current, { description: result.description, size: utf8Bytes(result.body) }, usage, this.policy);
        return { kind: 'put', ...result };
      };
      if (caller.review) return await this.proposeWrite(caller, edit, decide);
      const { before, after } = await this.store.mutate(caller, name, decide, this.rules);
      if (!after) throw new Error(`store returned no entry after writing ${name}`);
      return { entry: after, changed: before?.revision !== after.revision };
    } catch (error) {
      if (error instanceof EngramError && error.code === 'NOT_FOUND') {
        throw writeNotFound(name, await this.suggest(caller, name));
      }
      throw error;
    }
  }

  /**
   * A review-mode caller's write: the same decision, on the entry and usage as they are now,
   * refusing as the write would; then held for review instead of applied (nothing held
   * when it would change nothing).
   */
  private async proposeWrite(caller: Caller, edit: WriteRequest, decide: Decide): Promise<WriteOutcome> {
    const [current, usage] = await this.readForDecision(caller, edit.name);
    const change = decide(current, usage);
    if (change.kind !== 'put') return { entry: current as StoredEntry, changed: false };
    // The entry as the write would leave it: what the model is told it would see once approved.
    const entry = putEntry(edit.name, current, change, this.rules.now());
    const asked = { name: edit.name, description: edit.description, new: edit.new, old: edit.old };
    const operation = change.operation as ProposalRecord['operation'];
    const proposal = await this.review.hold(caller, { ...asked, operation }, current, change);
    return { entry, changed: true, proposal };
  }

  private async readForDecision(caller: Caller, name: string): Promise<[StoredEntry | undefined, Usage]> {
    const [[current], usage] = await Promise.all([this.store.get(caller.user, [name]), this.store.usage(caller.user)]);
    return [current, usage];
  }

  async drop(caller: Caller, rawName: string): Promise<DropOutcome> {
    const name = parseName(rawName, this.policy);
    assertWritable(caller);
    if (caller.review) {
      const [current] = await this.readForDecision(caller, name);
      if (!current) throw await this.dropNotFound(caller, name);
      const asked = { name, description: undefined, new: undefined, old: undefined, operation: 'drop' as const };
      return { entry: current, proposal: await this.review.hold(caller, asked, current, current) };
    }
    const { before } = await this.store.mutate(
      caller,
      name,
      (current) => (current ? { kind: 'drop' } : { kind: 'none' }),
      this.rules,
    );
    if (!before) throw await this.dropNotFound(caller, name);
    await this.recovery.purgeIfNoRetention();
    return { entry: before };
  }

  private async dropNotFound(caller: Caller, name: string): Promise<EngramError> {
    const suggestions = await this.suggest(caller, name);
    return new EngramError(
      'NOT_FOUND',
      `${name} not found, nothing was dropped.${didYouMean(suggestions)} memory_open() lists every entry.`,
      { reason: 'drop-not-found', name, suggestions },
    );
  }

  /** Up to three existing names close to `name` (already parsed), unless the memory is too large to compare (suggestedNames). */
  private async suggest(caller: Caller, name: string): Promise<readonly string[]> {
    const [missing] = await this.describeMissing(caller, [name]);
    return missing!.suggestions;
  }

  /** Suggestions for the first few missing names only (suggestedNames), so one call's cost stays bounded. */
  private async describeMissing(caller: Caller, names: string[]): Promise<MissingEntry[]> {
    const rows = await this.store.index(caller.user);
    const suggested = suggestedNames(rows.length);
    const existing = suggested > 0 ? rows.map((row) => row.name) : [];
    return names.map((name, at) => ({
      name,
      suggestions: at < suggested ? closest(name, existing) : [],
    }));
  }
}

export function createMemory(options: MemoryOptions): Memory {
  return new Memory(options);
}
