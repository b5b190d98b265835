/**
 * Waiting for another process's write lock without freezing this one. better-sqlite3 is
 * synchronous: a long busy timeout would make SQLite sleep on the event loop, and nothing
 * else (other users' reads, /healthz) would be answered meanwhile. So the connection's own
 * busy timeout is a few milliseconds, and a statement that still finds the database
 * locked is tried again later, until a deadline: on a timer, or, when the search worker
 * held the write gate, as soon as it lets go (write-gate.ts: its busy error says when).
 */

import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** SQLite's own busy timeout: how long one try may block the event loop, in ms. */
export const BUSY_TIMEOUT_MS = 5;

/** How long a write waits for another process's transaction by default, in ms. */
export const DEFAULT_BUSY_DEADLINE_MS = 10_000;

const FIRST_DELAY_MS = 2;
/** The longest pause between tries (before jitter), in ms: the search worker steps aside for longer (search-worker.ts). */
export const MAX_DELAY_MS = 100;

/** True when SQLite gave up because another connection holds a lock (SQLITE_BUSY and its extended codes). */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** The pause before try number `attempt + 1`: doubling from 2 ms up to 100 ms, jittered so waiting processes do not march in step. */
export function retryDelayMs(attempt: number): number {
  const delay = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(attempt - 1, 16));
  return delay * (0.5 + Math.random() / 2);
}

/**
 * The pause after try number `attempt` found the database busy with `error`: until the
 * lock is let go where that can be known (the write gate's, write-gate.ts, whose busy
 * error carries a `freed` promise), else a timer (retryDelayMs).
 */
export function pauseAfter(error: unknown, attempt: number): Promise<unknown> {
  const freed = (error as { freed?: unknown } | null)?.freed;
  return freed instanceof Promise ? freed : sleep(retryDelayMs(attempt));
}

/**
 * Runs `attempt` (synchronous, one transaction) now, and again after a pause each time it
 * finds the database busy, until `deadlineMs` have passed; then rethrows the busy error.
 * Any other failure is rethrown at once. A busy transaction was rolled back, so trying it
 * again is safe.
 */
export async function whileBusy<T>(attempt: () => T, deadlineMs: number): Promise<T> {
  // performance.now, not the store's clock: that one is for timestamps, and tests stop it.
  const deadline = performance.now() + deadlineMs;
  for (let tries = 1; ; tries++) {
    let busy: unknown;
    try {
      return attempt();
    } catch (error) {
      if (!isBusy(error) || performance.now() >= deadline) throw error;
      busy = error;
    }
    await pauseAfter(busy, tries);
  }
}

/**
 * Calls `attempt` until it returns true, pausing between tries as whileBusy does, for at
 * most `deadlineMs`; false when it never did. For what reports "busy" as a result rather
 * than an error (a checkpoint that another connection's read holds back).
 */
export async function retryUntil(attempt: () => boolean, deadlineMs: number): Promise<boolean> {
  const deadline = performance.now() + deadlineMs;
  for (let tries = 1; ; tries++) {
    if (attempt()) return true;
    if (performance.now() >= deadline) return false;
    await sleep(retryDelayMs(tries));
  }
}
