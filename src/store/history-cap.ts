/**
 * How every store keeps a user's history under the history cap (Policy.historyCap): the
 * rule is the same on each backend, so it is stated once here. When a recorded revision
 * takes the user's history over the cap, the store deletes, in the same transaction, the
 * oldest revisions that are not the latest of their entry, then the oldest dropped
 * entries whole, until the history is back at TRIM_TARGET of the cap. Trimming below the
 * cap, not just to it, means that steady writes trim once in a while, not on every write.
 */

/** What part of the cap a trim brings the history back to. */
const TRIM_TARGET = 0.9;

/** Rows a trimming query reads at once: the work of one statement stays bounded. */
export const TRIM_BATCH = 100;

/** How many bytes of history to free now that the user's history is `historyBytes`; 0 while within the cap. */
export function bytesToFree(historyBytes: number, cap: number): number {
  return historyBytes > cap ? historyBytes - Math.floor(cap * TRIM_TARGET) : 0;
}

/**
 * The first of `candidates` (oldest first) whose bytes together reach `needed`: all of
 * them when they do not, so that the caller goes on to the next batch.
 */
export function oldestFreeing<T extends { readonly bytes: number }>(candidates: readonly T[], needed: number): T[] {
  const chosen: T[] = [];
  let freed = 0;
  for (const candidate of candidates) {
    if (freed >= needed) break;
    chosen.push(candidate);
    freed += candidate.bytes;
  }
  return chosen;
}
