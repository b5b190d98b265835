/**
 * How the SQLite store runs its statements: a write first checks that the file at the path
 * is still the one open (file-identity.ts); anything that finds the database locked by
 * another process is tried again later without blocking the event loop (busy.ts); and what
 * still fails is put in words (errors.ts). Reads rarely wait (WAL lets them run beside a
 * writer), but a reader can meet a lock while another process recovers the log.
 */

import { whileBusy } from './busy.js';
import { explainFailure, type FailureContext } from './errors.js';
import type { FileIdentity } from './file-identity.js';
import type { WriteGate } from './write-gate.js';

export class Guard {
  constructor(
    private readonly file: FileIdentity,
    private readonly context: FailureContext,
    private readonly gate: WriteGate,
  ) {}

  /** How long a write waits for another process's lock, in ms. */
  get busyDeadlineMs(): number {
    return this.context.busyDeadlineMs;
  }

  /** Runs a read (synchronous), retried while the database is busy; failures explained. */
  read<T>(attempt: () => T): Promise<T> {
    return this.explained(whileBusy(attempt, this.context.busyDeadlineMs));
  }

  /**
   * Runs a write transaction (synchronous) through the write gate (write-gate.ts): refused
   * if the file was replaced, retried while busy; failures explained.
   */
  write<T>(transaction: () => T): Promise<T> {
    return this.explained(
      whileBusy(() => {
        this.file.check();
        return this.gate.run(transaction);
      }, this.context.busyDeadlineMs),
    );
  }

  /** Runs `work` (synchronous) through the write gate, outside any retry: it throws busy while the search worker writes. */
  exclusive<T>(work: () => T): T {
    return this.gate.run(work);
  }

  /** Throws STORE_REPLACED when the file at the path is no longer the one open. */
  checkFile(): void {
    this.file.check();
  }

  /** `work`'s outcome; a failure of the database file becomes an EngramError in words. */
  async explained<T>(work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (error) {
      throw explainFailure(error, this.context);
    }
  }
}
