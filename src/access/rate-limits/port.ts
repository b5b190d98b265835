/**
 * Where rate limits count: a counter per limit, taking one request of a key at a time. In
 * one process the counts live in memory (memory-counters.ts); a backend shared by several
 * servers (PostgreSQL) offers counters in its database, so that every server behind one
 * database holds one count per key.
 */

import type { RateRule } from './rules.js';

/** What a counter says of one request. */
export interface RateCount {
  /** Whether the request is within the limit. */
  readonly allowed: boolean;
  /** Requests the key may still make in this window (0 once refused). */
  readonly remaining: number;
  /** Milliseconds until the window ends and the key may make requests again. */
  readonly resetMs: number;
}

export interface RateCounter {
  /** Counts one request of `key` (an opaque string of at most 64 characters). */
  take(key: string): Promise<RateCount>;
  /** Takes back one request of `key` counted by `take`: one that turned out not to count (a sign-in that succeeded). */
  giveBack(key: string): Promise<void>;
}

export interface RateCounters {
  /** A counter of `rule`; one per limit, each counting its keys apart from the others'. */
  counter(rule: RateRule): Promise<RateCounter>;
}
