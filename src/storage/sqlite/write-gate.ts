/**
 * One writer at a time between the store's connection on the event loop and the search
 * worker's connection (search-worker.ts), settled in shared memory before either asks
 * SQLite for its write lock. SQLite would settle it too, but the event loop would meet the
 * worker's lock inside its busy timeout, asleep on the loop for up to BUSY_TIMEOUT_MS.
 * Through the gate the loop sees the worker writing at once, without asking SQLite, and
 * tries again as soon as the worker lets the gate go (told through the shared memory, not
 * found by a timer, whose pause would leave both idle); the worker, on a thread of its
 * own, may block. The worker also steps aside while the loop
 * waits to get in, so a write waits for one catch-up batch at most, never a backlog.
 * Without a worker the gate is always free: one atomic exchange per write.
 */

import { MAX_DELAY_MS } from './busy.js';

/** The cells of the shared buffer (Int32Array indexes), and what they hold. */
export const GATE_CELLS = {
  /** Who writes now: FREE, LOOP or WORKER. */
  holder: 0,
  /** 1 while the loop found the worker writing and has not got in since. */
  loopWaiting: 1,
  /** 1 when the loop wrote since the worker last looked (search-worker.ts). */
  wrote: 2,
  /** 1 while the worker has no catch-up running or due: the next write must wake it. */
  idle: 3,
} as const;

export const HOLDERS = { FREE: 0, LOOP: 1, WORKER: 2 } as const;

const CELL_COUNT = 4;

/**
 * The error a write meets when the worker holds the gate: busy, so it is tried again
 * (busy.ts) once `freed` resolves. The wait is begun only when `freed` is read: a caller
 * that retries on its own timer (a checkpoint, store.ts) leaves no waiter behind.
 */
function gateBusy(whenFreed: () => Promise<void>): Error {
  const error = Object.assign(new Error('database is locked (the search index is being brought up to date)'), {
    code: 'SQLITE_BUSY',
  });
  let freed: Promise<void> | undefined;
  Object.defineProperty(error, 'freed', { get: () => (freed ??= whenFreed()) });
  return error;
}

export class WriteGate {
  /** Shared with the worker thread. */
  readonly buffer = new SharedArrayBuffer(CELL_COUNT * Int32Array.BYTES_PER_ELEMENT);
  private readonly cells = new Int32Array(this.buffer);
  /** Nested runs of the loop (a write inside a write) hold the gate once. */
  private depth = 0;

  constructor() {
    Atomics.store(this.cells, GATE_CELLS.idle, 1);
  }

  /** Runs `work` (synchronous) holding the gate; throws a busy error, without running it, while the worker holds it. */
  run<T>(work: () => T): T {
    if (this.depth === 0) {
      const { holder, loopWaiting } = GATE_CELLS;
      if (Atomics.compareExchange(this.cells, holder, HOLDERS.FREE, HOLDERS.LOOP) !== HOLDERS.FREE) {
        Atomics.store(this.cells, loopWaiting, 1);
        throw gateBusy(() => this.whenFreed());
      }
      if (Atomics.exchange(this.cells, loopWaiting, 0) !== 0) Atomics.notify(this.cells, loopWaiting);
    }
    this.depth++;
    try {
      return work();
    } finally {
      this.depth--;
      if (this.depth === 0) {
        Atomics.store(this.cells, GATE_CELLS.holder, HOLDERS.FREE);
        Atomics.notify(this.cells, GATE_CELLS.holder);
      }
    }
  }

  /**
   * Resolves once the worker has let the gate go (it notifies as it leaves, and as it is
   * gone: workerGone), or after MAX_DELAY_MS at most, on a timer that also keeps the
   * process alive meanwhile: a pending Atomics.waitAsync does not, and a process with
   * nothing else to do would end there. At once when the worker left before the wait began.
   */
  private whenFreed(): Promise<void> {
    const waiting = Atomics.waitAsync(this.cells, GATE_CELLS.holder, HOLDERS.WORKER);
    if (!waiting.async) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, MAX_DELAY_MS);
      void waiting.value.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * The loop wrote: true when the worker was idle, and so must be woken (once: later
   * writes find it awake); the worker reads `wrote` before each catch-up either way.
   */
  wrote(): boolean {
    Atomics.store(this.cells, GATE_CELLS.wrote, 1);
    return Atomics.compareExchange(this.cells, GATE_CELLS.idle, 1, 0) === 1;
  }

  /** The worker is gone: the gate it may have held is free again. */
  workerGone(): void {
    Atomics.compareExchange(this.cells, GATE_CELLS.holder, HOLDERS.WORKER, HOLDERS.FREE);
    Atomics.notify(this.cells, GATE_CELLS.holder);
  }
}
