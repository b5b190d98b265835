/**
 * Who may read the database: a file created 0600 in a folder created 0700, before
 * SQLite ever opens it. (Where it lives is the caller's to say: the `engram` command's
 * default path is in src/cli/environment.ts.)
 */

import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

/** Creates the folder (0700) and an empty database file (0600) if they do not exist. */
export function prepareDatabaseFile(path: string): void {
  if (path === ':memory:') return;
  const folder = dirname(path);
  if (!existsSync(folder)) mkdirSync(folder, { recursive: true, mode: 0o700 });
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
}
