/** The SQLite backend's entry point: `openSqliteStore({ path })`. */

import { defaultDatabasePath } from './file.js';
import { SqliteStore, type SqliteStoreOptions } from './store.js';

export { defaultDatabasePath, SqliteStore, type SqliteStoreOptions };

export function openSqliteStore(options: Partial<SqliteStoreOptions> = {}): SqliteStore {
  return new SqliteStore({ ...options, path: options.path ?? defaultDatabasePath() });
}
