/**
 * What a backend gives the storage engine: the primitive reads and writes of its rows,
 * inside one transaction the backend holds while the engine runs (drive.ts). Each does
 * one thing to the rows and keeps no rule: what to write, which revisions to trim, how
 * usage moves, how the history cap walks the rows are the engine's (writes.ts, trim.ts,
 * purge.ts). A new backend implements these and reads (index, search, activity…) of its own.
 *
 * Every entry row has an id of the backend's, unique across users; the body of a row is
 * kept once, in its latest revision, and in the row itself only when that revision is not
 * kept (`rowBody`, a history limit of 0) — a backend that keeps text elsewhere may ignore it.
 */

import type { AppliedChange, UsageDelta } from '../../memory/model/apply.js';
import type { RevisionRecord, StoredEntry, Usage } from '../../memory/port.js';
import type { EntryRow } from '../sql-rows.js';
import type { Maybe } from './drive.js';

/** A user's counters after a change moved them: what the history cap is checked against. */
export interface Counters {
  readonly historyBytes: number;
  /** The user's live entries: a bound on how many latest revisions a trim passes by. */
  readonly entries: number;
}

/** A revision the history cap may delete: not the latest of its entry. */
export interface OlderRevision {
  readonly entry: number;
  readonly revision: number;
  /** What it takes against the history cap (usage.ts revisionBytes). */
  readonly bytes: number;
}

/** A dropped entry the history cap may delete whole, with what its revisions take. */
export interface TrashedCopy {
  readonly id: number;
  readonly bytes: number;
}

/** A copy (live or dropped) of an entry that a purge deletes, with what it takes of its user's usage. */
export interface Copy {
  readonly id: number;
  readonly user: string;
  readonly name: string;
  readonly description: string;
  readonly size: number;
  readonly dropped: boolean;
}

/** What every backend gives; with it, one of EntryWrites or WholeWrites (Primitives). */
export interface CommonPrimitives {
  /** The user's live entry of `name`. */
  liveEntry(user: string, name: string): Maybe<EntryRow | undefined>;
  /** Every live entry of the user. */
  liveEntries(user: string): Maybe<readonly EntryRow[]>;
  /** The most recently dropped copy of `name` (by drop time, then id). */
  latestTrashed(user: string, name: string): Maybe<EntryRow | undefined>;
  /** The user's usage as a decision sees it (no row yet: zeros). */
  usage(user: string): Maybe<Usage>;

  /** The row `id` goes to the trash, dropped by `record.actor` at `record.at`, at `entry.revision`. */
  dropEntry(user: string, id: number, entry: StoredEntry, record: RevisionRecord, rowBody: string | null): Maybe<void>;
  /** The dropped row `id` is live again, at `entry.revision`. */
  undropEntry(user: string, id: number, entry: StoredEntry, rowBody: string | null): Maybe<void>;
  /** Records `record` of the row `id`; not `kept` when the change's own history limit deletes it at once. */
  addRevision(user: string, id: number, record: RevisionRecord, kept: boolean): Maybe<void>;
  /** Deletes the row's revisions numbered at or below `through`, returning the bytes they took. */
  trimRevisions(user: string, id: number, through: number): Maybe<number>;
  /**
   * Moves the user's counters by `delta`, and their change counter. The counters exist by
   * then: a backend creates them at zero where it first keeps anything of the user (SQLite
   * and the in-process store here, PostgreSQL when it takes the user's lock).
   */
  addUsage(user: string, delta: UsageDelta): Maybe<Counters>;

  /**
   * At most `limit` of the user's revisions that are not the latest of their entry, oldest
   * first (by time, then entry id, then revision); `liveEntries`, the user's live entries,
   * bounds how many latest revisions a backend's index walk passes by.
   */
  olderRevisions(user: string, limit: number, liveEntries: number): Maybe<readonly OlderRevision[]>;
  deleteRevisions(user: string, revisions: readonly OlderRevision[]): Maybe<void>;
  /** At most `limit` of the user's dropped entries, oldest drop first (then by id). */
  oldestTrash(user: string, limit: number): Maybe<readonly TrashedCopy[]>;
  /** Deletes the user's rows `ids` with all their revisions, returning the bytes those revisions took. */
  deleteCopies(user: string, ids: readonly number[]): Maybe<number>;

  /** The user's copies of `name`: every dropped one, and the live one too with `includeLive`. */
  copies(user: string, name: string, includeLive: boolean): Maybe<readonly Copy[]>;
  /** Every user's copies dropped at or before `cutoff`. */
  expiredTrash(cutoff: number): Maybe<readonly Copy[]>;
}

/** How a `write` is persisted by the four primitives the engine composes: the row, then addRevision, trimRevisions, addUsage. */
export interface EntryWrites {
  /** A new live row for `entry`, returning its id. */
  insertEntry(user: string, entry: StoredEntry, rowBody: string | null): Maybe<number>;
  /** The live row `id` takes `entry`'s values. */
  updateEntry(user: string, id: number, entry: StoredEntry, rowBody: string | null): Maybe<void>;
  readonly saveWrite?: undefined;
}

/**
 * The hot-path override a backend may give instead: a `write` persisted whole — the row
 * inserted (`id` undefined) or updated, its revision recorded, the revisions past its
 * history limit deleted, the counters moved — exactly as EntryWrites and the primitives
 * after them would, in fewer round trips (PostgreSQL: one statement).
 */
export interface WholeWrites {
  saveWrite(user: string, id: number | undefined, applied: AppliedChange): Maybe<Counters>;
}

export type Primitives = CommonPrimitives & (EntryWrites | WholeWrites);
