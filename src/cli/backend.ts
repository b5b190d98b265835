/**
 * Which store a command opens: PostgreSQL when a database URL is given (flag, then
 * ENGRAM_DATABASE_URL, then the config file), else the SQLite file (flag, ENGRAM_DB,
 * config, default path). Also how to name it to a person without leaking a password.
 */

import type { Store } from '../core/store.js';
import { openSqliteStore } from '../store/sqlite/index.js';
import { log } from './output.js';

export type Backend =
  | { readonly kind: 'sqlite'; readonly path: string }
  | {
      readonly kind: 'postgres';
      readonly url: string;
      readonly poolSize?: number;
      readonly statementTimeoutMs?: number;
    };

/** A database given as a path or as a postgres:// URL (engram migrate takes either). */
export function backendOf(location: string): Backend {
  return /^postgres(ql)?:\/\//i.test(location)
    ? { kind: 'postgres', url: location }
    : { kind: 'sqlite', path: location };
}

/** How to open it; the history limits and the clock are not here: the Memory service hands them to every write. */
export interface OpenOptions {
  /** SQLite only: let concurrent writes share one commit (default true). */
  readonly groupCommit?: boolean | undefined;
  /** SQLite only: index for search in a worker thread (default false), for a server that runs for long. */
  readonly searchWorker?: boolean;
}

export async function openBackend(backend: Backend, options: OpenOptions = {}): Promise<Store> {
  if (backend.kind === 'sqlite') {
    return openSqliteStore({
      path: backend.path,
      onWarning: log,
      searchWorker: options.searchWorker ?? false,
      ...(options.groupCommit === undefined ? {} : { groupCommit: options.groupCommit }),
    });
  }
  // Loaded only when asked for: most people never need the PostgreSQL driver.
  const { openPostgresStore } = await import('../store/postgres/index.js');
  return openPostgresStore({
    connectionString: backend.url,
    ...(backend.poolSize === undefined ? {} : { max: backend.poolSize }),
    ...(backend.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: backend.statementTimeoutMs }),
  });
}

/** "SQLite /path/memory.db" or "PostgreSQL postgres://user@host:5432/db" (no password). */
export function describeBackend(backend: Backend): string {
  if (backend.kind === 'sqlite') return `SQLite ${backend.path}`;
  try {
    const url = new URL(backend.url);
    url.password = '';
    return `PostgreSQL ${url.toString()}`;
  } catch {
    return 'PostgreSQL (unparsable URL)';
  }
}
