/**
 * Who may read the database: a file created 0600, before SQLite ever opens it, in a folder
 * that exists. The store never creates folders: a mistyped folder in a path (a client's
 * config, a flag) would otherwise start a new, empty memory that looks like a lost one, so
 * it is refused, naming the folder. (Where the database lives is the caller's to say, and
 * to make: the `engram` command creates the folders of its default path, 0700; see
 * src/cli/environment.ts.)
 */

import { closeSync, existsSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { EngramError } from '../../memory/model/errors.js';

/** The refusal of a database path whose folder does not exist. */
export function noSuchFolderError(path: string): EngramError {
  const folder = dirname(path);
  return new EngramError(
    'STORE_UNAVAILABLE',
    `There is no memory at ${path}: its folder ${folder} does not exist, so nothing was created (a mistyped ` +
      'path must not start a new, empty memory). Check the path; to start a memory there, create the folder first.',
    { reason: 'no-such-folder', path, folder },
  );
}

/**
 * Whether nothing is at the folder `path` is to be created in. (A file there, or another
 * failure, is left to the opening, whose error says what it is.)
 */
export function folderMissing(path: string): boolean {
  try {
    statSync(dirname(path));
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** Creates an empty database file (0600) if there is none, in a folder that must exist. */
export function prepareDatabaseFile(path: string): void {
  if (path === ':memory:' || existsSync(path)) return;
  if (folderMissing(path)) throw noSuchFolderError(path);
  closeSync(openSync(path, 'a', 0o600));
}
