/**
 * The rate limits of `engram serve` (rules.ts): each door names the limit and whom a
 * request counts against (an address, a user name, a token), and is told whether it is
 * within the limit and, if not, when to try again; each door words the refusal for its
 * reader. Whom a request counts against is kept only as a hash: no address, user name or
 * token reaches the counters, which on PostgreSQL are rows of a table.
 */

import { createHash } from 'node:crypto';
import type { RateCounter, RateCounters } from './port.js';
import { RATE_LIMIT_NAMES, type RateLimitName, type RateLimitRules, type RateRule } from './rules.js';

/** What a limit says of one request. */
export interface RateVerdict {
  readonly allowed: boolean;
  readonly rule: RateRule;
  /** Requests left in this window. */
  readonly remaining: number;
  /** Whole seconds until the window ends (at least 1). */
  readonly resetSeconds: number;
}

/** Whom a request counts against under which limit. */
export type RateCheck = readonly [RateLimitName, string];

/** A subject as the counters see it: its SHA-256, 43 characters of base64url. */
function keyOf(subject: string): string {
  return createHash('sha256').update(subject).digest('base64url');
}

interface Limit {
  readonly rule: RateRule;
  readonly counter: RateCounter;
}

export class RateLimits {
  private constructor(private readonly counters: ReadonlyMap<RateLimitName, Limit>) {}

  /** The limits in force (`rules`; those off are left out) over `counters`. */
  static async create(counters: RateCounters, rules: RateLimitRules): Promise<RateLimits> {
    const made = new Map<RateLimitName, Limit>();
    for (const name of RATE_LIMIT_NAMES) {
      const rate = rules[name];
      if (rate === undefined) continue;
      const rule = { name, ...rate };
      made.set(name, { rule, counter: await counters.counter(rule) });
    }
    return new RateLimits(made);
  }

  /** Whether a limit is in force. */
  has(name: RateLimitName): boolean {
    return this.counters.has(name);
  }

  /**
   * Counts the request under each limit in force among `checks`; the refusal that waits
   * longest when any refuses, else undefined. Every check counts, refused or not.
   */
  async refusal(checks: readonly RateCheck[]): Promise<RateVerdict | undefined> {
    const verdicts = await Promise.all(checks.map(([name, subject]) => this.take(name, subject)));
    let refused: RateVerdict | undefined;
    for (const verdict of verdicts) {
      if (verdict === undefined || verdict.allowed) continue;
      if (refused === undefined || verdict.resetSeconds > refused.resetSeconds) refused = verdict;
    }
    return refused;
  }

  /**
   * Runs `attempt`, counted under `name` for `subject` by refusal() just before, and keeps
   * that count only if the attempt fails as `failed` says (a sign-in's wrong password): a
   * success, or another error (the store down, the sign-in slowed down), is given back.
   * Counted before it runs, so that attempts sent together see each other.
   */
  async countingFailures<T>(
    name: RateLimitName,
    subject: string,
    attempt: () => Promise<T>,
    failed: (error: unknown) => boolean,
  ): Promise<T> {
    const giveBack = () => this.counters.get(name)?.counter.giveBack(keyOf(subject));
    let result: T;
    try {
      result = await attempt();
    } catch (error) {
      if (!failed(error)) await giveBack();
      throw error;
    }
    await giveBack();
    return result;
  }

  private async take(name: RateLimitName, subject: string): Promise<RateVerdict | undefined> {
    const limit = this.counters.get(name);
    if (limit === undefined) return undefined;
    const count = await limit.counter.take(keyOf(subject));
    return {
      allowed: count.allowed,
      rule: limit.rule,
      remaining: count.remaining,
      resetSeconds: Math.max(1, Math.ceil(count.resetMs / 1000)),
    };
  }
}
