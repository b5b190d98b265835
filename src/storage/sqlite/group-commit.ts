/**
 * Group commit: writes that arrive together share one transaction and one fsync.
 * One durable commit per write caps a process at the disk's fsync rate; batching lifts
 * that under concurrency. In a batch of several, each write runs in its own savepoint, so
 * one refused write does not fail its neighbours; a write alone runs as a plain
 * transaction (a savepoint would only cost). Every write is acknowledged (its promise
 * settles) only after its COMMIT is durable. While another process holds the
 * write lock, the batch waits (on a timer, or until the search worker lets the write gate
 * go: write-gate.ts; never on the event loop) and is tried again
 * whole, joined by the writes that arrived meanwhile; a write still waiting past the
 * deadline is refused with the busy error.
 */

import { performance } from 'node:perf_hooks';
import { isBusy, pauseAfter } from './busy.js';
import type { Database, Transaction } from './driver.js';

interface Pending {
  readonly work: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** When the write arrived (performance.now). */
  readonly since: number;
}

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

export interface GroupCommitOptions {
  /** How long a write may wait for another process's lock, in ms. */
  readonly busyDeadlineMs: number;
  /** Called before each try of a batch; what it throws fails the whole batch (a replaced file). */
  readonly beforeBatch: () => void;
  /** Runs each try of a batch (write-gate.ts); what it throws as busy is waited out like SQLite's lock. */
  readonly gate?: { run<T>(work: () => T): T };
}

export class GroupCommit {
  private queue: Pending[] = [];
  /** A flush is due: on the next turn of the event loop, or after a pause while the database is busy. */
  private scheduled = false;
  /** Tries in a row that found the database busy. */
  private busyTries = 0;
  /** One write: a transaction on its own, a savepoint inside the batch's (better-sqlite3 nests them so). */
  private readonly one: Transaction<(work: () => unknown) => unknown>;
  /** Told the size of each batch committed (metrics); unset, nothing is counted. */
  private observer: ((writes: number) => void) | undefined;
  /** Several writes, each in its own savepoint, their outcomes pushed in order. */
  private readonly several: Transaction<(batch: readonly Pending[], outcomes: Outcome[]) => void>;

  constructor(
    private readonly db: Database,
    private readonly options: GroupCommitOptions,
  ) {
    this.one = db.transaction((work: () => unknown) => work());
    this.several = db.transaction((batch: readonly Pending[], outcomes: Outcome[]) => {
      for (const { work } of batch) {
        try {
          outcomes.push({ ok: true, value: this.one(work) });
        } catch (error) {
          // Some failures (disk full, I/O error) roll back the whole transaction, not just
          // the savepoint: the writes before were undone, and the ones after must not run
          // on their own, so the batch fails as a whole.
          if (!this.db.inTransaction) throw error;
          outcomes.push({ ok: false, error });
        }
      }
    });
  }

  /** Tells `observer` how many writes each committed batch held; undefined stops telling. */
  observe(observer: ((writes: number) => void) | undefined): void {
    this.observer = observer;
  }

  /** Runs `work` (synchronous, inside the shared transaction) and settles after the commit. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject, since: performance.now() });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    let outcomes: Outcome[];
    try {
      outcomes = this.commit(batch);
    } catch (error) {
      if (isBusy(error)) {
        this.waitForLock(batch, error);
        return;
      }
      this.busyTries = 0;
      for (const pending of batch) pending.reject(error);
      return;
    }
    this.busyTries = 0;
    this.observer?.(batch.length);
    batch.forEach((pending, index) => {
      const outcome = outcomes[index] as Outcome;
      if (outcome.ok) pending.resolve(outcome.value);
      else pending.reject(outcome.error);
    });
  }

  /**
   * One try of the whole batch in one immediate transaction; throws when it cannot begin or
   * commit. A write alone fails with its transaction, so what it throws is thrown here.
   */
  private commit(batch: readonly Pending[]): Outcome[] {
    this.options.beforeBatch();
    const run = () => {
      if (batch.length === 1) return [{ ok: true, value: this.one.immediate((batch[0] as Pending).work) } as const];
      const outcomes: Outcome[] = [];
      this.several.immediate(batch, outcomes);
      return outcomes;
    };
    return this.options.gate ? this.options.gate.run(run) : run();
  }

  /** The batch found the database busy (and was rolled back): refuse who waited too long, try the rest later. */
  private waitForLock(batch: readonly Pending[], error: unknown): void {
    const now = performance.now();
    const waiting = batch.filter((pending) => {
      if (now - pending.since < this.options.busyDeadlineMs) return true;
      pending.reject(error);
      return false;
    });
    this.queue = [...waiting, ...this.queue];
    if (this.queue.length === 0) {
      this.busyTries = 0;
      return;
    }
    this.scheduled = true;
    void pauseAfter(error, ++this.busyTries).then(() => this.flush());
  }
}
