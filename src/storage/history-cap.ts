/**
 * How every store keeps a user's history under the history cap (Policy.historyCap, which
 * reaches the store with each write as WriteRules.historyCap): the rule is the same on
 * each backend, so it is stated once here and walked once, by the storage engine
 * (engine/trim.ts), over each store's rows, oldest first, which the pure applyChange
 * (memory/model/apply.ts) never sees. When a recorded revision
 * takes the user's history over the cap, the store deletes, in the same transaction, the
 * oldest revisions that are not the latest of their entry, then the oldest dropped
 * entries whole. It always goes back within the cap, and further, to 90% of the cap, so
 * that steady writes trim once in a while rather than on every write; but unless the cap
 * itself requires more, one trim frees at most MAX_EXTRA_BYTES below the cap and deletes at
 * most MAX_ROWS rows, so that the write which trims stays quick (SQLite trims on the event loop).
 */

/** What part of the cap a trim brings the history back to, when its work allows. */
const TRIM_TARGET = 0.9;

/** Most bytes one trim goes below the cap. */
const MAX_EXTRA_BYTES = 512 * 1024;

/** Most rows (revisions, or dropped entries) one trim deletes, unless the cap itself requires more. */
const MAX_ROWS = 500;

/** Rows a trimming query reads at once: the work of one statement stays bounded. */
export const TRIM_BATCH = 100;

/** How far one trim goes: what it has freed so far, and whether it may stop. */
export class Trim {
  freed = 0;
  private deleted = 0;

  private constructor(
    /** Bytes that must go to be within the cap. */
    private readonly required: number,
    /** Bytes that would bring the history to its target. */
    private readonly wanted: number,
  ) {}

  /** The trim a history of `historyBytes` needs under `cap`, or undefined while within it. */
  static of(historyBytes: number, cap: number): Trim | undefined {
    if (historyBytes <= cap) return undefined;
    const target = Math.max(Math.floor(cap * TRIM_TARGET), cap - MAX_EXTRA_BYTES);
    return new Trim(historyBytes - cap, historyBytes - target);
  }

  get done(): boolean {
    return this.freed >= this.wanted || (this.freed >= this.required && this.deleted >= MAX_ROWS);
  }

  /** The first of `candidates` (oldest first) to delete now, counted as freed. */
  take<T extends { readonly bytes: number }>(candidates: readonly T[]): T[] {
    const chosen: T[] = [];
    for (const candidate of candidates) {
      if (this.done) break;
      chosen.push(candidate);
      this.freed += candidate.bytes;
      this.deleted++;
    }
    return chosen;
  }
}
