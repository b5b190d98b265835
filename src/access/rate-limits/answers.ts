/**
 * What every door sends with a 429 of a rate limit, whatever its body: `Retry-After` in
 * seconds (RFC 9110), and the limit and what is left of it in the `RateLimit-Policy` and
 * `RateLimit` fields of draft-ietf-httpapi-ratelimit-headers (-08 to -11: a policy named
 * by a string, `q` its quota, `w` its window in seconds; `r` the quota left, `t` the
 * seconds until it is restored). And the wait, in the words people and models read.
 */

import type { RateVerdict } from './rate-limits.js';

export function rateLimitHeaders(verdict: RateVerdict): Record<string, string> {
  const { rule } = verdict;
  return {
    'Retry-After': String(verdict.resetSeconds),
    'RateLimit-Policy': `"${rule.name}";q=${rule.points};w=${rule.windowSeconds}`,
    RateLimit: `"${rule.name}";r=${verdict.remaining};t=${verdict.resetSeconds}`,
  };
}

/** A wait as people say it: "12 seconds", "1 second", "3 minutes". */
export function waitWords(seconds: number): string {
  if (seconds < 90) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  return `${Math.ceil(seconds / 60)} minutes`;
}

/**
 * What the limit allows, as a sentence's end: "60 requests a minute", "1 sign-in per user
 * every 10 seconds"; `what` names one (`request`), `each` what it counts per (`per user`).
 */
export function allowanceWords(verdict: RateVerdict, what: string, each = ''): string {
  const { points, windowSeconds } = verdict.rule;
  const per =
    windowSeconds === 1
      ? 'a second'
      : windowSeconds === 60
        ? 'a minute'
        : windowSeconds === 3600
          ? 'an hour'
          : `every ${waitWords(windowSeconds)}`;
  return `${points} ${what}${points === 1 ? '' : 's'}${each === '' ? '' : ` ${each}`} ${per}`;
}
