/**
 * Where the database lives and who may read it: the default path, and a file created
 * 0600 in a folder created 0700, before SQLite ever opens it.
 */

import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** `$ENGRAM_DB`, else `${XDG_DATA_HOME:-~/.local/share}/engram/memory.db`. */
export function defaultDatabasePath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.ENGRAM_DB) return env.ENGRAM_DB;
  const dataHome = env.XDG_DATA_HOME || join(homedir(), '.local', 'share');
  return join(dataHome, 'engram', 'memory.db');
}

/** Creates the folder (0700) and an empty database file (0600) if they do not exist. */
export function prepareDatabaseFile(path: string): void {
  if (path === ':memory:') return;
  const folder = dirname(path);
  if (!existsSync(folder)) mkdirSync(folder, { recursive: true, mode: 0o700 });
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
}
