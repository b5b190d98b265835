/**
 * The SQLite backend's entry point: `openSqliteStore({ path })`. The path is required:
 * a library opens the file it is given and reads no environment (the `engram` command
 * picks its default path in src/cli/environment.ts).
 */

import { SqliteStore, type SqliteStoreOptions } from './store.js';

export type { SqliteDriverName } from './drivers.js';
export { SqliteStore, type SqliteStoreOptions };

export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(options);
}
