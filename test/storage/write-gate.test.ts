/**
 * The write gate between the event loop and the search worker (write-gate.ts), with the
 * worker's side played by this test through the shared cells: a write that finds the
 * worker writing is refused as busy, and tried again as soon as the worker lets the gate
 * go — woken through the shared memory, not found later by a retry timer, which left the
 * loop and the worker both idle for its pause. The global timers are faked: nothing here
 * waits on the clock, so a write that goes on proves it was woken.
 *
 * Invariant of the gate, part of the searchWorker accelerator (docs/accelerators.md,
 * "Storage"; without a worker the gate is always free): at most one of the loop and the
 * worker holds it, each asks SQLite for the write lock only while holding it; the loop
 * never sleeps on SQLite's busy timeout behind the worker, and is woken as the worker lets go.
 */

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_DELAY_MS, pauseAfter, whileBusy } from '../../src/storage/sqlite/busy.js';
import { GATE_CELLS, HOLDERS, WriteGate } from '../../src/storage/sqlite/write-gate.js';

/** The worker's side of the gate, as search-worker.ts plays it. */
function workerOf(gate: WriteGate) {
  const cells = new Int32Array(gate.buffer);
  return {
    enter: () => expect(Atomics.compareExchange(cells, GATE_CELLS.holder, HOLDERS.FREE, HOLDERS.WORKER)).toBe(0),
    leave: () => {
      Atomics.store(cells, GATE_CELLS.holder, HOLDERS.FREE);
      Atomics.notify(cells, GATE_CELLS.holder);
    },
    loopWaiting: () => Atomics.load(cells, GATE_CELLS.loopWaiting),
  };
}

/** The error gate.run throws while the worker holds it. */
function busyError(gate: WriteGate): unknown {
  try {
    gate.run(() => 'ran');
  } catch (error) {
    return error;
  }
  throw new Error('the gate let the loop in while the worker held it');
}

/** Whether `promise` has settled once pending callbacks (and the gate's wake-up) have run. */
async function settledSoon(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  // The wake-up of Atomics.waitAsync arrives as a task of the event loop, not a microtask.
  for (let turn = 0; turn < 5 && !settled; turn++) await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('SQLite write gate', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('refuses the loop as busy while the worker writes, and marks the loop waiting', () => {
    const gate = new WriteGate();
    const worker = workerOf(gate);
    worker.enter();
    const error = busyError(gate) as { code: string; freed: unknown };
    expect(error.code).toBe('SQLITE_BUSY');
    expect(error.freed).toBeInstanceOf(Promise);
    expect(worker.loopWaiting()).toBe(1);
  });

  it('wakes the waiting write as soon as the worker lets the gate go, with no timer fired', async () => {
    const gate = new WriteGate();
    const worker = workerOf(gate);
    worker.enter();
    const { freed } = busyError(gate) as { freed: Promise<void> };
    expect(await settledSoon(freed)).toBe(false);
    worker.leave();
    expect(await settledSoon(freed)).toBe(true);
    expect(gate.run(() => 'ran')).toBe('ran');
    expect(worker.loopWaiting()).toBe(0);
  });

  it('tries again at once when the worker had already gone by the time the loop waits', async () => {
    const gate = new WriteGate();
    const worker = workerOf(gate);
    worker.enter();
    const error = busyError(gate);
    // The wait begins as the pause is asked for: after the worker left, it finds the gate free.
    worker.leave();
    expect(await settledSoon(pauseAfter(error, 1))).toBe(true);
  });

  it('still tries again after MAX_DELAY_MS (the faked timer) when the worker never lets go', async () => {
    const gate = new WriteGate();
    workerOf(gate).enter();
    const { freed } = busyError(gate) as { freed: Promise<void> };
    await vi.advanceTimersByTimeAsync(MAX_DELAY_MS - 1);
    expect(await settledSoon(freed)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settledSoon(freed)).toBe(true);
  });

  it("runs a write waiting in whileBusy once the worker leaves, on the gate's word alone", async () => {
    const gate = new WriteGate();
    const worker = workerOf(gate);
    worker.enter();
    const write = whileBusy(() => gate.run(() => 'written'), 10_000);
    expect(await settledSoon(write)).toBe(false);
    worker.leave();
    expect(await settledSoon(write)).toBe(true);
    await expect(write).resolves.toBe('written');
  });

  it('waits on a timer, as before, for a busy error that cannot say when the lock is let go', async () => {
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    const pause = pauseAfter(busy, 1);
    const marker = Symbol('pending');
    expect(await Promise.race([pause, Promise.resolve(marker)])).toBe(marker);
    await expect(pause).resolves.toBeUndefined();
  });
});
