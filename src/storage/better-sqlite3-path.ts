/**
 * Where better-sqlite3 is installed, for drivers.ts and the SQLite store's search worker, which loads the
 * driver by path (a worker run from source text resolves a bare name from the working
 * folder, not from Engram's). Here, one folder below the package's root like the bundled
 * `engram` command, so that the lookup starts from a folder of Engram's in both.
 */

import { createRequire } from 'node:module';

export function betterSqlite3Path(): string {
  return createRequire(import.meta.url).resolve('better-sqlite3');
}
