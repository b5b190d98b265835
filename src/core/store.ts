/**
 * The port every storage backend implements (SQLite, PostgreSQL, in-process). It lives
 * in core because the Memory service is written against it; backends live in src/store.
 *
 * A store knows nothing of edit rules. A write is `mutate(...)`: inside one transaction
 * the store reads the entry and the user's usage, calls the pure `decide` function, and
 * applies what it returns together with one revision. `decide` may throw to refuse; the
 * store then changes nothing and rethrows.
 */

import type { IndexRow } from './format.js';

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

/** Who acts: whose memory, and the label recorded in history (client name, token label, `cli`). */
export interface Actor {
  readonly user: string;
  readonly label: string;
}

export type Change =
  | { readonly kind: 'put'; readonly operation: RevisionOperation; readonly description: string; readonly body: string }
  | { readonly kind: 'drop' }
  | { readonly kind: 'none' };

export interface Usage {
  /** Sum of the sizes of the user's live entries. */
  readonly totalBytes: number;
}

export type Decide = (current: StoredEntry | undefined, usage: Usage) => Change;

export interface MutationResult {
  /** The entry before the change (undefined if it did not exist). */
  readonly before: StoredEntry | undefined;
  /** The entry after the change (undefined if it was dropped or never existed). */
  readonly after: StoredEntry | undefined;
}

export interface Store {
  /** One row per live entry of the user, sorted by name, from stored columns only. */
  index(user: string): Promise<IndexRow[]>;
  /** The live entries among `names` (already normalised), in no particular order. */
  get(user: string, names: readonly string[]): Promise<StoredEntry[]>;
  /** Reads, decides and writes one entry atomically, recording a revision for a change. */
  mutate(actor: Actor, name: string, decide: Decide): Promise<MutationResult>;
  close(): Promise<void>;
}
