/**
 * How to name the store a command opens (open-store.ts) to a person, or repeat it in a
 * command line to run again, without leaking a password.
 */

import type { Backend } from '../open-store.js';

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
