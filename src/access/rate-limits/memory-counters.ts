/**
 * Rate-limit counters in the server's own memory (rate-limiter-flexible's RateLimiterMemory),
 * for a server alone on its database (SQLite, or the in-process store). The library keeps a
 * key until its window ends, however many keys arrive meanwhile; every key here comes from
 * a caller (an address, a token, a user name typed), so they are also capped in number, over
 * every limit together: past `maxKeys`, the key whose window began first is forgotten (its
 * count starts again), so no flood of addresses or tokens can grow the server without end.
 */

import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateCount, RateCounter, RateCounters } from './port.js';
import type { RateRule } from './rules.js';

/** Keys remembered at most, over every limit: some megabytes. */
export const DEFAULT_MAX_KEYS = 100_000;

/**
 * One request of `key` counted by a rate-limiter-flexible limiter: refused when it goes past
 * the rule's points. A failure of the store (not a refusal) is thrown as it came.
 */
export async function takeOne(limiter: RateLimiterAbstract, key: string): Promise<RateCount> {
  try {
    const res = await limiter.consume(key, 1);
    return { allowed: true, remaining: res.remainingPoints, resetMs: Math.max(res.msBeforeNext, 0) };
  } catch (refusal) {
    if (!(refusal instanceof RateLimiterRes)) throw refusal;
    return { allowed: false, remaining: 0, resetMs: Math.max(refusal.msBeforeNext, 0) };
  }
}

interface Remembered {
  readonly limiter: RateLimiterMemory;
  readonly key: string;
  /** When its window ends, in ms since the epoch. */
  readonly ends: number;
}

export class MemoryRateCounters implements RateCounters {
  /** Every key counted, by limit and key, in the order their windows began (Map keeps insertion order). */
  private readonly keys = new Map<string, Remembered>();

  constructor(private readonly maxKeys: number = DEFAULT_MAX_KEYS) {}

  async counter(rule: RateRule): Promise<RateCounter> {
    const limiter = new RateLimiterMemory({
      keyPrefix: rule.name,
      points: rule.points,
      duration: rule.windowSeconds,
    });
    return {
      take: async (key) => {
        const now = Date.now();
        const count = await takeOne(limiter, key);
        this.remember(limiter, `${rule.name}\n${key}`, key, now, count);
        return count;
      },
      giveBack: async (key) => {
        // Only within the window it was counted in: past it, the count began again without it.
        if ((this.keys.get(`${rule.name}\n${key}`)?.ends ?? 0) > Date.now()) await limiter.reward(key, 1);
      },
    };
  }

  private remember(limiter: RateLimiterMemory, id: string, key: string, now: number, count: RateCount): void {
    const known = this.keys.get(id);
    if (known !== undefined && known.ends > now) return;
    // A window that began again moves to the end, as the newest.
    this.keys.delete(id);
    this.keys.set(id, { limiter, key, ends: now + count.resetMs });
    for (const [oldest, remembered] of this.keys) {
      if (this.keys.size <= this.maxKeys) break;
      this.keys.delete(oldest);
      void remembered.limiter.delete(remembered.key);
    }
  }
}
