/**
 * The SQLite backend's entry point: `openSqliteStore({ path })`. The path is required:
 * a library opens the file it is given and reads no environment (the `engram` command
 * picks its default path in src/cli/environment.ts). Opening a file made by an older
 * Engram upgrades its schema; `await backupBeforeUpgrade(path)` first keeps a copy of it as
 * it was, as the `engram` command does (upgrade-backup.ts).
 */

import { SqliteStore, type SqliteStoreOptions } from './store.js';

export type { SqliteDriverName } from './drivers.js';
export { backupBeforeUpgrade, type UpgradeBackup } from './upgrade-backup.js';
export { SqliteStore, type SqliteStoreOptions };

export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(options);
}
