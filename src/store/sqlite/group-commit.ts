/**
 * Group commit: writes that arrive together share one transaction and one fsync.
 * One durable commit per write caps a process at the disk's fsync rate; batching lifts
 * that under concurrency. Each write still runs in its own savepoint, so one refused
 * write does not fail its neighbours, and every write is acknowledged (its promise
 * settles) only after the shared COMMIT is durable.
 */

import type Database from 'better-sqlite3';

interface Pending {
  readonly work: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;

  constructor(private readonly db: Database.Database) {}

  /** Runs `work` (synchronous, inside the shared transaction) and settles after the commit. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
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
    const outcomes: Outcome[] = [];
    try {
      this.db
        .transaction(() => {
          for (const { work } of batch) {
            try {
              // A transaction function called inside another runs as a savepoint.
              outcomes.push({ ok: true, value: this.db.transaction(work)() });
            } catch (error) {
              // Some failures (disk full, I/O error) roll back the whole transaction, not just
              // the savepoint: the writes before were undone, and the ones after must not run
              // on their own, so the batch fails as a whole.
              if (!this.db.inTransaction) throw error;
              outcomes.push({ ok: false, error });
            }
          }
        })
        .immediate();
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    batch.forEach((pending, index) => {
      const outcome = outcomes[index] as Outcome;
      if (outcome.ok) pending.resolve(outcome.value);
      else pending.reject(outcome.error);
    });
  }
}
