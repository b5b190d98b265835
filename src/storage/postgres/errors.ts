/**
 * PostgreSQL's failures in words: a server that cannot be reached, is out of disk space,
 * accepts only reads, or has no connection or time to spare becomes an EngramError with
 * a stable code (STORE_UNAVAILABLE, STORE_FULL, STORE_READ_ONLY, STORE_BUSY) and a
 * message naming the server by host:port (never the password), saying what to do — so
 * that no front door reports it as an internal error.
 */

import { EngramError, isEngramError } from '../../memory/model/errors.js';
import { asSentence } from '../../memory/model/text.js';

const NETWORK_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

/** SQLSTATEs of a server that is shutting down or starting up; class 08 is the connection's own failures. */
const SERVER_GONE = new Set(['57P01', '57P02', '57P03']);

/** too_many_connections: every connection slot of the server is taken; one frees up soon. */
export const NO_CONNECTION_SLOT = '53300';

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** True when the failure is the connection itself (server down, restarting, unreachable), not a statement. */
export function isConnectionError(error: unknown): boolean {
  // An EngramError is a failure already put in words (another store's, maybe "cannot reach"): never this connection's.
  if (!(error instanceof Error) || isEngramError(error)) return false;
  const code = codeOf(error);
  if (code !== undefined && (NETWORK_ERRORS.has(code) || SERVER_GONE.has(code) || code.startsWith('08'))) return true;
  return /Connection terminated|connection timeout|not queryable/i.test(error.message);
}

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // Node reports a refused connection to every address of a host as an AggregateError with no message.
  return error.message || String(codeOf(error) ?? error.name);
}

/**
 * The error to show when no connection could be opened: the server is unreachable, or it
 * answered and refused (wrong password, no such database). Either way: where, and why.
 */
export function unavailable(address: string, error: unknown): EngramError {
  const message = isConnectionError(error)
    ? `cannot reach PostgreSQL at ${address}: ${asSentence(reasonOf(error))} Check that the server is running and that the database URL is right.`
    : `PostgreSQL at ${address} refused the connection: ${asSentence(reasonOf(error))} Check the user, password and database in the database URL.`;
  return new EngramError('STORE_UNAVAILABLE', message);
}

/**
 * The EngramError that explains `error`, or `error` itself when it is not a failure of the
 * database server (an EngramError, a statement's own error).
 */
export function explainFailure(error: unknown, address: string): unknown {
  if (isEngramError(error) || !(error instanceof Error)) return error;
  if (isConnectionError(error)) return unavailable(address, error);
  const reason = reasonOf(error);
  switch (codeOf(error)) {
    case '53100':
      return new EngramError(
        'STORE_FULL',
        `The PostgreSQL database at ${address} is out of disk space (${reason}). Nothing was changed. ` +
          'Free space on the database server, then try again.',
      );
    case '25006':
      return new EngramError(
        'STORE_READ_ONLY',
        `The PostgreSQL database at ${address} accepts only reads (${reason}): it is a standby, or set read-only. ` +
          'Nothing was changed. Point Engram at the primary server, or make the database writable, then try again.',
      );
    case NO_CONNECTION_SLOT:
      return new EngramError(
        'STORE_BUSY',
        `The PostgreSQL database at ${address} has no connection to spare (${reason}). Nothing was changed; ` +
          'try again in a moment. If it lasts, lower the pool size of the Engram servers or raise max_connections.',
      );
    // query_canceled (the statement timeout) and lock_not_available: it waited for a lock or the server too long.
    case '57014':
    case '55P03':
      return busy(address, `a statement waited too long for a lock or for the server (${reason})`);
  }
  // node-postgres's pool: every connection stayed in use while this request waited for one.
  if (/timeout exceeded when trying to connect/i.test(error.message)) {
    return busy(address, `every connection of this server's pool stayed in use (${reason})`);
  }
  return error;
}

function busy(address: string, what: string): EngramError {
  return new EngramError(
    'STORE_BUSY',
    `The PostgreSQL database at ${address} is busy: ${what}. Nothing was changed; try again in a moment.`,
  );
}

/** True for unique_violation: a write added a primary key or unique value that is taken already. */
export function isDuplicateKey(error: unknown): boolean {
  return codeOf(error) === '23505';
}
