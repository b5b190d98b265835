/**
 * Errors that a caller can act on. Every refusal in Engram is an EngramError with a
 * stable code (for programs), the data of what went wrong (`detail`: the name, the
 * suggestions, the sizes, the revisions kept…), and a message. The message is written
 * for the model, the Memory service's first reader: what was wrong and exactly how to
 * call again. A front door whose reader calls otherwise (the command line's flags, the
 * REST API's routes) words the refusals that say how to call from `detail` instead.
 */

export type ErrorCode =
  | 'INVALID_ARGUMENT'
  | 'INVALID_NAME'
  | 'READ_ONLY_GROUP'
  | 'READ_ONLY_TOKEN'
  | 'NOT_FOUND'
  | 'NO_MATCH'
  | 'AMBIGUOUS'
  | 'TOO_LARGE'
  | 'NOTHING_TO_DO'
  | 'CONFLICT'
  | 'UNAUTHORIZED'
  | 'UNKNOWN_TOOL'
  | 'INVALID_CONFIG'
  /** The user's entry count cap is reached. */
  | 'TOO_MANY_ENTRIES'
  /** The server is already doing this kind of work for the user (an import): try again shortly. */
  | 'BUSY'
  /** Another process held the database's write lock past the deadline: try again shortly. */
  | 'STORE_BUSY'
  /** The database file or its folder cannot be written (permissions, read-only file system). */
  | 'STORE_READ_ONLY'
  /** The disk (or the database's quota) is full. */
  | 'STORE_FULL'
  /** The database file was removed or replaced while open: writes would be lost at the next start. */
  | 'STORE_REPLACED'
  /** The database cannot be reached or read (server down, corrupt file, lost connection). */
  | 'STORE_UNAVAILABLE'
  /** Too many failed sign-ins for this user or from this address lately: try again after a while. */
  | 'TOO_MANY_ATTEMPTS'
  /** A person's save of an entry that has changed since they read it (If-Match): nothing was saved. */
  | 'STALE_REVISION'
  /** A review-mode caller's change refused because the user already has as many changes waiting for review as the policy allows. */
  | 'TOO_MANY_PROPOSALS'
  /** A proposal that no longer applies to the entry as it is now: shown with its diff, not applied. */
  | 'PROPOSAL_CONFLICT';

/**
 * What a refusal that tells its reader how to call again is about, for the doors that
 * word it themselves. Refusals whose message names no way of calling carry none.
 */
export type ErrorDetail =
  /** `old` was given for an entry whose body is empty. */
  | { readonly reason: 'old-in-empty-body'; readonly name: string }
  /** `old` does not occur; the body line that most resembles it. */
  | { readonly reason: 'old-not-found'; readonly name: string; readonly closestLine: string }
  /** A write of `old` (or of nothing) on an entry that does not exist. */
  | { readonly reason: 'write-not-found'; readonly name: string; readonly suggestions: readonly string[] }
  /** A new entry without a description. */
  | { readonly reason: 'create-without-description'; readonly name: string }
  /** A description that folds to nothing, on an existing entry. */
  | { readonly reason: 'empty-description'; readonly name: string }
  /** `old` given as the empty string. */
  | { readonly reason: 'empty-old' }
  /** A text of the request holding a NUL character, which no store can keep. */
  | { readonly reason: 'nul-character'; readonly field: TextField }
  /** A description over the description cap, in characters. */
  | { readonly reason: 'description-over-cap'; readonly name: string; readonly size: number; readonly cap: number }
  /** Neither new, old nor description. */
  | { readonly reason: 'nothing-to-do' }
  /** Past the user's byte cap. */
  | { readonly reason: 'user-cap'; readonly name: string; readonly totalAfter: number; readonly cap: number }
  /** Past the user's entry cap. */
  | { readonly reason: 'entry-cap'; readonly name: string; readonly entriesAfter: number; readonly cap: number }
  /** More names in one memory_open than the policy's maxNames. */
  | { readonly reason: 'too-many-names'; readonly given: number; readonly max: number }
  /** A drop of a name that does not exist. */
  | { readonly reason: 'drop-not-found'; readonly name: string; readonly suggestions: readonly string[] }
  /** A change by a read-only caller. */
  | { readonly reason: 'read-only-caller' }
  /** An approval or rejection of proposals by a review-mode caller, which only proposes. */
  | { readonly reason: 'review-caller' }
  /** A restore of an entry that is in the trash. */
  | { readonly reason: 'restore-in-trash'; readonly name: string }
  /** A person opened an entry that is in the trash (REST; the model never sees the trash). */
  | { readonly reason: 'open-in-trash'; readonly name: string; readonly droppedAt: number; readonly droppedBy: string }
  /** A restore or undrop of text over the entry cap (`body`) or the description cap, as they are now. */
  | {
      readonly reason: 'recovered-over-cap';
      readonly operation: 'restore' | 'undrop';
      readonly name: string;
      readonly revision: number;
      readonly part: 'body' | 'description';
      readonly size: number;
      readonly cap: number;
    }
  /** An undrop while a live entry holds the name. */
  | { readonly reason: 'undrop-taken'; readonly name: string }
  /** An undrop of a name that is not in the trash. */
  | { readonly reason: 'undrop-missing'; readonly name: string }
  /** A purge of a live entry without force. */
  | { readonly reason: 'purge-live'; readonly name: string }
  /** An account added for a user who has one. */
  | { readonly reason: 'account-exists'; readonly user: string }
  /** A user who has no account, memory, token or connected app. */
  | { readonly reason: 'user-not-found'; readonly user: string }
  /** Sign-in refused, without checking the password, after too many failures lately. */
  | { readonly reason: 'sign-in-throttled'; readonly retryAfterSeconds: number }
  /** A new entry whose name is taken (a person's create, which never appends). */
  | { readonly reason: 'entry-exists'; readonly name: string }
  /** A save based on revision `expected` of an entry now at revision `current`. */
  | { readonly reason: 'stale-revision'; readonly name: string; readonly expected: number; readonly current: number }
  /**
   * An import from another memory system with items over the entry cap (transfer/bridges/run.ts):
   * `count` of them in all, the first ones' `sources` listed.
   */
  | {
      readonly reason: 'import-too-large';
      readonly sources: readonly string[];
      readonly count: number;
      readonly cap: number;
    }
  /** An Engram export given as another memory system's file (transfer/bridges/llama-webui.ts). */
  | { readonly reason: 'import-engram-export'; readonly path: string }
  /** An entity type mapped to a group this memory does not have (transfer/bridges/server-memory.ts). */
  | {
      readonly reason: 'import-map-group';
      readonly type: string;
      readonly group: string;
      readonly groups: readonly string[];
    }
  /** A SQLite database path whose folder does not exist: no memory is created there. */
  | { readonly reason: 'no-such-folder'; readonly path: string; readonly folder: string }
  /** A revert of an actor that has no change in this memory's history (revert.ts); `actors`: the ones that have. */
  | { readonly reason: 'revert-unknown-actor'; readonly actor: string; readonly actors: readonly string[] }
  /** A revert whose range holds none of the actor's changes, or an apply that would change nothing. */
  | { readonly reason: 'revert-nothing'; readonly actor: string }
  /** An apply whose preview no longer shows the memory as it is: nothing was changed. */
  | { readonly reason: 'revert-stale' }
  /** An undo of a revert id that no kept revision carries. */
  | { readonly reason: 'revert-unknown'; readonly id: string }
  /** A revert that would leave an entry or the memory over a cap in force now: nothing was changed. */
  | {
      readonly reason: 'revert-over-cap';
      readonly part: 'body' | 'description' | 'total' | 'entries';
      readonly name: string;
      readonly size: number;
      readonly cap: number;
    }
  /** A listing of possible duplicates asked for more pairs than it lists at most, or fewer than one (memory/tidy.ts). */
  | { readonly reason: 'duplicates-limit'; readonly max: number }
  /** A merge of an entry into itself. */
  | { readonly reason: 'merge-same'; readonly name: string }
  /** An undo of a merge whose entry merged in (`from`) is no longer kept: it would take its text out of `into` with nowhere to go. */
  | { readonly reason: 'merge-purged'; readonly id: string; readonly from: string; readonly into: string }
  /** A merge naming an entry that is not live (never made, dropped, or renamed meanwhile). */
  | { readonly reason: 'merge-missing'; readonly name: string }
  /** A merge of an entry that changed since the person looked at it (revision `expected`, now `current`): nothing was changed. */
  | {
      readonly reason: 'merge-stale';
      readonly name: string;
      readonly expected: number;
      readonly current: number;
    }
  /**
   * A merge that would leave `into`'s body over the entry cap (`body`), or the memory over its
   * byte cap (`total`): `size` against `cap`; nothing was changed.
   */
  | {
      readonly reason: 'merge-over-cap';
      readonly part: 'body' | 'total';
      readonly from: string;
      readonly into: string;
      readonly size: number;
      readonly cap: number;
    }
  /** A proposal (a change held for review) that is not waiting: approved, rejected, expired or never made. */
  | { readonly reason: 'proposal-not-found'; readonly id: string }
  /** An approval of a proposal that no longer applies to the entry as it is now (memory/review.ts). */
  | {
      readonly reason: 'proposal-conflict';
      readonly id: string;
      readonly name: string;
      /** What stands in the way, in a few words for a person ("old text no longer found", …). */
      readonly why: string;
    }
  /** A revision that is not kept. */
  | {
      readonly reason: 'no-such-revision';
      readonly name: string;
      readonly revision: number;
      readonly first: number;
      readonly last: number;
    };

/** The texts of a write (`description`, `new`, `old`) or of an imported entry (`description`, `body`). */
export type TextField = 'description' | 'new' | 'old' | 'body';

export class EngramError extends Error {
  override readonly name = 'EngramError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly detail?: ErrorDetail,
  ) {
    super(message);
  }
}

export function isEngramError(value: unknown): value is EngramError {
  return value instanceof EngramError;
}
