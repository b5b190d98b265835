/**
 * The connection to PostgreSQL: a node-postgres pool configured for Engram (pool size,
 * statement timeout, bigint columns read as numbers), wrapped in the small slice of `pg`
 * the store uses (driver.ts), and how to name the server in messages.
 */

import pg from 'pg';
import type { Pool, Statement } from './driver.js';

export interface PoolOptions {
  /** `postgres://user:password@host:port/database`, as node-postgres reads it. */
  readonly connectionString: string;
  /** Most connections the pool opens (node-postgres default: 10). */
  readonly max?: number;
  /**
   * A statement running (or waiting for a lock) longer than this is cancelled, and a
   * transaction left idle this long is ended, releasing its locks; in ms, 0 for no limit.
   */
  readonly statementTimeoutMs?: number;
}

const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
const DEFAULT_POOL_SIZE = 10;
const CONNECT_TIMEOUT_MS = 5_000;

/** Reads bigint columns (times in ms, ids, totals) as numbers: they stay far below 2^53. */
function numberTypes(): pg.CustomTypesConfig {
  const types = new pg.TypeOverrides();
  types.setTypeParser(pg.types.builtins.INT8, Number);
  return types;
}

/** How many connections the pool opens at most. */
export function poolSize(options: PoolOptions): number {
  return options.max ?? DEFAULT_POOL_SIZE;
}

export function createPool(options: PoolOptions): Pool {
  const statementTimeout = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: poolSize(options),
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: 'engram',
    types: numberTypes(),
    ...(statementTimeout > 0
      ? { statement_timeout: statementTimeout, idle_in_transaction_session_timeout: statementTimeout }
      : {}),
  });
  // An idle connection that the server closes (restart, failover) is dropped by the pool and
  // reopened on demand; without a listener the 'error' event would end the process.
  pool.on('error', () => {});
  return {
    query: <Row>(statement: Statement) => pool.query<Row & pg.QueryResultRow>(statement as pg.QueryConfig),
    connect: async () => {
      const client = await pool.connect();
      // While checked out, a connection the server drops fails its statements (and the
      // transaction, which is retried); the 'error' event itself must not end the process.
      const ignore = () => {};
      client.on('error', ignore);
      return {
        query: <Row>(statement: Statement) => client.query<Row & pg.QueryResultRow>(statement as pg.QueryConfig),
        release: (error?: Error) => {
          client.removeListener('error', ignore);
          client.release(error);
        },
      };
    },
    end: () => pool.end(),
  };
}

/**
 * `host:port` of the server a connection string points at, for messages: as node-postgres
 * resolves it when it connects (its defaults, and the libpq PG* variables it reads itself
 * for what the string leaves out), so the message names the server actually tried.
 * Engram reads no environment here: a library user's store is configured by its options.
 */
export function serverAddress(connectionString: string): string {
  try {
    const { host, port } = new pg.Client({ connectionString });
    return `${host}:${port}`;
  } catch {
    return 'the server of the database URL';
  }
}
