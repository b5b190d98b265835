/**
 * The event-loop measure the "never blocks other users" tests rely on: it must see a loop
 * held by CPU and one held by a blocking wait (what a synchronous wait on SQLite's lock
 * is), and must not call a loop held that was only waiting its turn for a core.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { HELD_LOOP_MS, withEventLoopDelay } from './event-loop.js';

const HELD_FOR_MS = 300;

/** Spins until this process has used `ms` of CPU, however long a busy machine makes that take. */
function spinCpu(ms: number): void {
  const start = process.cpuUsage();
  while (true) {
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms) return;
  }
}

describe('withEventLoopDelay', () => {
  it('sees the loop held by CPU', async () => {
    const { maxDelayMs } = await withEventLoopDelay(async () => {
      await sleep(5);
      spinCpu(HELD_FOR_MS);
    });
    expect(maxDelayMs).toBeGreaterThan(HELD_LOOP_MS);
  });

  it('sees the loop held by a blocking wait that uses no CPU', async () => {
    const { maxDelayMs } = await withEventLoopDelay(async () => {
      await sleep(5);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, HELD_FOR_MS);
    });
    expect(maxDelayMs).toBeGreaterThan(HELD_LOOP_MS);
  });

  it('does not call a loop that only awaits held', async () => {
    const { result, maxDelayMs } = await withEventLoopDelay(async () => {
      await sleep(HELD_FOR_MS);
      return 'done';
    });
    expect(result).toBe('done');
    expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
  });
});
