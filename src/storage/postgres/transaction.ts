/**
 * How the PostgreSQL store talks to the pool: every write as one transaction (BEGIN …
 * COMMIT, ROLLBACK on any failure, or one statement that commits on its own), and every
 * statement or transaction tried again with
 * backoff when the failure is transient — a serialization failure, a deadlock, no free
 * connection slot, or the connection lost while the server restarts and the pool
 * reconnects. What still fails is put in words (errors.ts). What the caller's decide
 * throws is rethrown as is, after ROLLBACK, and never retried.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { EngramError } from '../../memory/model/errors.js';
import type { Connection, Pool, Queryable, Statement } from './driver.js';
import { explainFailure, isConnectionError, NO_CONNECTION_SLOT, unavailable } from './errors.js';

const ATTEMPTS = 6;
const FIRST_DELAY_MS = 50;

/**
 * serialization_failure and deadlock_detected: the transaction did nothing and may simply
 * run again; too_many_connections: no connection was opened, and a slot frees up soon.
 */
const RETRYABLE_STATES = new Set(['40001', '40P01', NO_CONNECTION_SLOT]);

function isTransient(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (typeof code === 'string' && RETRYABLE_STATES.has(code)) || isConnectionError(error);
}

/** Carries an error thrown by decide through the transaction, marked as not to be retried. */
class Refusal extends Error {
  constructor(readonly reason: unknown) {
    super('decide refused the change');
  }
}

/** Calls the caller's decide inside a transaction: what it throws rolls back and reaches the caller unchanged. */
export function callDecide<T>(decide: () => T): T {
  try {
    return decide();
  } catch (error) {
    throw new Refusal(error);
  }
}

/**
 * A transaction that several writes share (shared-commit.ts): its connection, and its id
 * (txid_current) once it has written, as its first save returns it (no round trip of its own).
 */
export interface SharedTransaction {
  readonly connection: Connection;
  xid: string | undefined;
}

/** How Runner.transaction runs its work. */
export interface TransactionOptions {
  /** Whether a transient failure may run the work again (by default it may): not once it handed something outside. */
  readonly mayRepeat?: () => boolean;
  /** The work only reads (begun READ ONLY, so the server holds it to that): a connection lost at COMMIT loses nothing. */
  readonly readOnly?: boolean;
}

export class Runner {
  constructor(
    private readonly pool: Pool,
    /** `host:port`, for messages. */
    private readonly address: string,
  ) {}

  /** One statement on any connection of the pool. */
  query<Row>(statement: Statement): Promise<Row[]> {
    return this.retrying(async () => (await this.pool.query<Row>(statement)).rows);
  }

  /**
   * One statement that writes and commits on its own (its own transaction, no BEGIN or
   * COMMIT round trip). Tried again only while it cannot have reached the server; a
   * connection lost once it was sent may or may not have committed it: `lost`.
   */
  async commit<Row>(statement: Statement): Promise<Row[] | 'lost'> {
    const connection = await this.retrying(() => this.connect());
    try {
      const { rows } = await connection.query<Row>(statement);
      connection.release();
      return rows;
    } catch (error) {
      if (!isConnectionError(error)) {
        connection.release();
        throw explainFailure(error, this.address);
      }
      connection.release(error instanceof Error ? error : new Error(String(error)));
      return 'lost';
    }
  }

  /**
   * A connection holding a transaction that several statements will share (shared-commit.ts),
   * ended by finish. Tried again while it fails to begin.
   */
  begin(): Promise<SharedTransaction> {
    return this.retrying(async () => {
      const connection = await this.connect();
      try {
        await connection.query({ text: 'BEGIN' });
        return { connection, xid: undefined };
      } catch (error) {
        connection.release(error instanceof Error ? error : new Error(String(error)));
        throw error;
      }
    });
  }

  /**
   * Commits what begin started and gives the connection back. If the connection breaks
   * while committing, whether the transaction committed is asked on another connection by
   * its id (txid_status, made for this): `committed`, `rolled back`, or `lost` when that
   * cannot be told (the server stays unreachable, or the transaction still has not ended).
   * A transaction without an id wrote nothing: lost or not, nothing of it is kept. A
   * commit that fails otherwise rolls back and throws.
   */
  async finish({ connection, xid }: SharedTransaction): Promise<'committed' | 'rolled back' | 'lost'> {
    try {
      await connection.query({ text: 'COMMIT' });
    } catch (error) {
      if (isConnectionError(error)) {
        connection.release(error instanceof Error ? error : new Error(String(error)));
        return xid === undefined ? 'rolled back' : this.outcomeOf(xid);
      }
      await rollBack(connection, error);
      throw explainFailure(error, this.address);
    }
    // Outside the try: once COMMIT has answered, nothing may take the commit for a failure
    // (its writes would be made again).
    connection.release();
    return 'committed';
  }

  /**
   * Whether transaction `xid` committed, once it has ended: a transaction still running (its
   * backend yet to see its client gone) is asked about again, a few times, with backoff.
   * Committed counts only once no snapshot taken now sees it running, as a reader after
   * the answer would not.
   */
  private async outcomeOf(xid: string): Promise<'committed' | 'rolled back' | 'lost'> {
    for (let attempt = 1; ; attempt++) {
      let status: string | null;
      let ended: boolean;
      try {
        [{ status, ended }] = (await this.query<{ status: string | null; ended: boolean }>({
          text: 'SELECT txid_status($1) AS status, txid_visible_in_snapshot($1, txid_current_snapshot()) AS ended',
          values: [xid],
        })) as [{ status: string | null; ended: boolean }];
      } catch {
        return 'lost';
      }
      if (status === 'aborted') return 'rolled back';
      if (status === 'committed' && ended) return 'committed';
      // NULL: too old for the server to remember.
      if (status === null || attempt >= ATTEMPTS) return 'lost';
      await sleep(delayBefore(attempt));
    }
  }

  /** Rolls back what begin started, after `cause` (a failed statement), and gives the connection back. */
  abandon({ connection }: SharedTransaction, cause: unknown): Promise<void> {
    return rollBack(connection, cause);
  }

  /**
   * `work` in one transaction on one connection: committed whole, or not at all; tried
   * again (a busy or lost database) while `mayRepeat` says so: a failure once `work` has
   * handed something outside (a dump's batches) is reported, not repeated.
   */
  transaction<T>(work: (connection: Queryable) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    return this.retrying(() => this.attempt(work, options));
  }

  private async attempt<T>(
    work: (connection: Queryable) => Promise<T>,
    { mayRepeat = () => true, readOnly = false }: TransactionOptions,
  ): Promise<T> {
    const connection = await this.connect();
    let read: { result: T } | undefined;
    try {
      await connection.query({ text: readOnly ? 'BEGIN READ ONLY' : 'BEGIN' });
      read = { result: await work(connection) };
      await connection.query({ text: 'COMMIT' });
      connection.release();
      return read.result;
    } catch (error) {
      await rollBack(connection, error);
      if (read && isConnectionError(error)) {
        // A read-only transaction changed nothing: what it read stands, whatever became of its COMMIT.
        if (readOnly) return read.result;
        // The server may have committed before the connection broke: running the work again
        // could apply it twice, so say so instead.
        throw this.mayHaveCommitted();
      }
      // A Refusal already carries decide's reason, and is never repeated anyway.
      if (!(error instanceof Refusal) && !mayRepeat()) throw new Refusal(explainFailure(error, this.address));
      throw error;
    }
  }

  /** What a change whose commit was cut off is reported as: it may or may not have been saved. */
  mayHaveCommitted(): EngramError {
    return new EngramError(
      'STORE_UNAVAILABLE',
      `lost the connection to PostgreSQL at ${this.address} while committing, so the change may or may not have been saved. Read the entry again before repeating the change.`,
    );
  }

  private async connect(): Promise<Connection> {
    try {
      return await this.pool.connect();
    } catch (error) {
      // Unreachable or full: retried, then reported as such. Refused (authentication, no such database): reported at once.
      if (isTransient(error)) throw error;
      const explained = explainFailure(error, this.address);
      throw explained === error ? unavailable(this.address, error) : explained;
    }
  }

  private async retrying<T>(run: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        if (error instanceof Refusal) throw error.reason;
        if (!isTransient(error) || attempt >= ATTEMPTS) throw explainFailure(error, this.address);
        await sleep(delayBefore(attempt));
      }
    }
  }
}

/** How long to wait before trying again after `attempt` failed: doubling, with jitter. */
function delayBefore(attempt: number): number {
  return FIRST_DELAY_MS * 2 ** (attempt - 1) * (0.5 + Math.random() / 2);
}

/** Ends the failed transaction; a connection that cannot even roll back is discarded by the pool. */
async function rollBack(connection: Connection, cause: unknown): Promise<void> {
  try {
    await connection.query({ text: 'ROLLBACK' });
    connection.release();
  } catch {
    connection.release(cause instanceof Error ? cause : new Error(String(cause)));
  }
}
