/**
 * Slows down password guessing (DESIGN §8): failed sign-ins are counted per key (a user
 * name, a client address), and past a few of them each key must wait before it may try
 * again, twice as long after every further failure, up to a cap. A key is forgotten after
 * a quiet spell. Kept in memory, bounded: the least recently failed keys go first, so no
 * flood of names or addresses can grow it without end.
 */

export interface ThrottleRules {
  /** Failures allowed before any wait: a person who mistypes a few times is never slowed. */
  readonly freeFailures: number;
  /** The wait after the first failure past the free ones; each further failure doubles it. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** Failures are forgotten this long after the wait they earned has passed. */
  readonly quietMs: number;
  /** Keys remembered at most; the least recently failed are dropped first. */
  readonly maxKeys: number;
}

export const DEFAULT_THROTTLE: ThrottleRules = {
  freeFailures: 5,
  baseDelayMs: 1_000,
  maxDelayMs: 15 * 60_000,
  quietMs: 15 * 60_000,
  maxKeys: 10_000,
};

interface Failures {
  readonly count: number;
  /** When the latest failure was, in ms since the epoch. */
  readonly last: number;
}

export class SignInThrottle {
  private readonly failures = new Map<string, Failures>();

  constructor(private readonly rules: ThrottleRules = DEFAULT_THROTTLE) {}

  /** Whole seconds `key` must still wait before it may try again; 0 when it may now. */
  waitSeconds(key: string, now: number): number {
    const failures = this.current(key, now);
    if (!failures) return 0;
    const until = failures.last + this.delayAfter(failures.count);
    return until > now ? Math.ceil((until - now) / 1000) : 0;
  }

  /** Counts one more failure of `key`. */
  fail(key: string, now: number): void {
    const count = (this.current(key, now)?.count ?? 0) + 1;
    // Deleted first, so that the key moves to the end: Map keeps insertion order.
    this.failures.delete(key);
    this.failures.set(key, { count, last: now });
    for (const oldest of this.failures.keys()) {
      if (this.failures.size <= this.rules.maxKeys) break;
      this.failures.delete(oldest);
    }
  }

  /** Takes back one failure of `key`: one counted before it was known that the attempt succeeded. */
  forgive(key: string): void {
    const failures = this.failures.get(key);
    if (!failures) return;
    if (failures.count <= 1) this.failures.delete(key);
    else this.failures.set(key, { ...failures, count: failures.count - 1 });
  }

  /** Forgets every failure of `key` (the user signed in). */
  reset(key: string): void {
    this.failures.delete(key);
  }

  /** The failures still counted for `key` at `now`; forgets them after the quiet spell. */
  private current(key: string, now: number): Failures | undefined {
    const failures = this.failures.get(key);
    if (failures && now >= failures.last + this.delayAfter(failures.count) + this.rules.quietMs) {
      this.failures.delete(key);
      return undefined;
    }
    return failures;
  }

  private delayAfter(count: number): number {
    const past = count - this.rules.freeFailures;
    if (past < 0) return 0;
    return Math.min(this.rules.baseDelayMs * 2 ** Math.min(past, 40), this.rules.maxDelayMs);
  }
}
