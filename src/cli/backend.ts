/**
 * Which store a command opens: PostgreSQL when a database URL is given (flag, then
 * ENGRAM_DATABASE_URL, then the config file), else the SQLite file (flag, ENGRAM_DB,
 * config, default path). Also how to name it to a person, or repeat it in a command line
 * to run again, without leaking a password.
 */

import type { StorageBackend } from '../storage/backend.js';
import { openSqliteStore } from '../storage/sqlite/index.js';
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

export async function openBackend(backend: Backend, options: OpenOptions = {}): Promise<StorageBackend> {
  if (backend.kind === 'sqlite') {
    return openSqliteStore({
      path: backend.path,
      onWarning: log,
      searchWorker: options.searchWorker ?? false,
      ...(options.groupCommit === undefined ? {} : { groupCommit: options.groupCommit }),
    });
  }
  // Loaded only when asked for: most people never need the PostgreSQL driver.
  const { openPostgresStore } = await import('../storage/postgres/index.js');
  return openPostgresStore({
    connectionString: backend.url,
    ...(backend.poolSize === undefined ? {} : { max: backend.poolSize }),
    ...(backend.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: backend.statementTimeoutMs }),
  });
}

/** "SQLite /path/memory.db" or "PostgreSQL postgres://user@host:5432/db" (no password). */
export function describeBackend(backend: Backend): string {
  if (backend.kind === 'sqlite') return `SQLite ${backend.path}`;
  const shown = urlWithoutPassword(backend.url);
  return shown === undefined ? 'PostgreSQL (unparsable URL)' : `PostgreSQL ${shown.url}`;
}

/**
 * A database URL without its password, in the user part or as `?password=`, and whether
 * it had one; undefined when it cannot be parsed (and so neither can its password be found).
 */
export function urlWithoutPassword(raw: string): { readonly url: string; readonly hadPassword: boolean } | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  const hadPassword = url.password !== '' || url.searchParams.has('password');
  url.password = '';
  if (url.searchParams.has('password')) url.searchParams.delete('password');
  return { url: url.toString(), hadPassword };
}

/** --database-url in a command line printed to run again (repeat-command.ts): never with its password. */
export function databaseUrlToRepeat(value: string): { readonly value: string | undefined; readonly note?: string } {
  const shown = urlWithoutPassword(value);
  if (shown === undefined) {
    return {
      value: undefined,
      note:
        '--database-url is left out of the next line, since its password could not be told apart: ' +
        'set ENGRAM_DATABASE_URL to that URL, then run the line',
    };
  }
  if (!shown.hadPassword) return { value };
  return {
    value: shown.url,
    note:
      'the password in --database-url is left out of the next line: run it with PGPASSWORD set ' +
      '(or the password in ~/.pgpass), or put the password back in',
  };
}
