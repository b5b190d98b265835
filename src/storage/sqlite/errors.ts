/**
 * SQLite's failures in words: a busy, read-only, full, missing or damaged database file
 * becomes an EngramError with a stable code (STORE_BUSY, STORE_READ_ONLY, STORE_FULL,
 * STORE_REPLACED, STORE_UNAVAILABLE) and a message that names the file, says what is
 * wrong and what to do, so that no front door reports it as an internal error.
 */

import { EngramError, isEngramError } from '../../memory/model/errors.js';

export interface FailureContext {
  /** The database file, as given. */
  readonly path: string;
  /** How long a write waited for the lock before giving up, in ms. */
  readonly busyDeadlineMs: number;
}

/** What the store throws when the file at its path is no longer the file it has open. */
export function replacedError(path: string): EngramError {
  return new EngramError(
    'STORE_REPLACED',
    `The database file at ${path} was removed or replaced while Engram had it open, so nothing was written: ` +
      'a write now would be lost when Engram restarts. Restart Engram so that it opens the file at that path ' +
      '(restore the file from a backup first if it was removed by mistake).',
  );
}

function reasonOf(error: Error, code: string): string {
  return `${error.message || code} (${code})`;
}

/**
 * The EngramError that explains `error`, or `error` itself when it is not a failure of the
 * database file (an EngramError, a programming error).
 */
export function explainFailure(error: unknown, context: FailureContext): unknown {
  if (isEngramError(error) || !(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return error;
  const { path } = context;
  const reason = reasonOf(error, code);
  if (code.startsWith('SQLITE_BUSY')) {
    return new EngramError(
      'STORE_BUSY',
      `The memory's database is busy: another program is writing to it (${path}) and did not finish within ` +
        `${formatSeconds(context.busyDeadlineMs)}. Nothing was changed; try again in a moment.`,
    );
  }
  if (code === 'SQLITE_READONLY_DBMOVED') return replacedError(path);
  if (code.startsWith('SQLITE_READONLY')) {
    return new EngramError(
      'STORE_READ_ONLY',
      `The memory's database ${path} cannot be written: the file, its folder or its file system is read-only ` +
        `(${reason}). Nothing was changed. Give the user running Engram write access to the file and its folder, ` +
        'then try again.',
    );
  }
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') {
    return new EngramError(
      'STORE_FULL',
      `The disk holding the memory's database ${path} is full (${reason}). Nothing was changed. ` +
        'Free some space on that disk, then try again.',
    );
  }
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new EngramError(
      'STORE_UNAVAILABLE',
      `The file ${path} is not a readable Engram database (${reason}): it is damaged, or not a database at all. ` +
        'Nothing was changed. Check the path; if the file was damaged, restore it from a backup.',
    );
  }
  if (code.startsWith('SQLITE_CANTOPEN') || typeof (error as { syscall?: unknown }).syscall === 'string') {
    return new EngramError(
      'STORE_UNAVAILABLE',
      `The memory's database ${path} cannot be opened (${reason}). Check that the file and its folder exist ` +
        'and that the user running Engram may read and write both, then try again.',
    );
  }
  if (code.startsWith('SQLITE_IOERR')) {
    return new EngramError(
      'STORE_UNAVAILABLE',
      `Reading or writing the memory's database ${path} failed (${reason}). Check the disk and the file system ` +
        'that hold it, then try again; if a change was being made, read the entry back first: it may not have been saved.',
    );
  }
  return error;
}

function formatSeconds(ms: number): string {
  return ms >= 1_000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

/** True when a write broke a primary key or a unique column: the key it adds is taken already. */
export function isDuplicateKey(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
