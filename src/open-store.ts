/**
 * Which store a config opens, and opening it: a SQLite file by path, or PostgreSQL by URL
 * (its driver loaded only then: most people never need it, and `engram stdio` must not pay
 * for it). Each backend's code is loaded only as it opens, so that what the CLI takes from
 * here before (the drivers' and accelerators' names) loads no store: `engram stdio`
 * answers a client's opening before its store opens (cli/stdio.ts). Part of the
 * composition root with app.ts: the doors name a database this way and never import a
 * backend (docs/architecture.md, import rules).
 */

import type { Accelerators } from './storage/accelerators.js';
import type { StorageBackend } from './storage/backend.js';
import type { SqliteDriverName } from './storage/sqlite/drivers.js';

/** The storage accelerators' names and switches (storage/accelerators.ts), for the CLI's ENGRAM_ACCEL_* variables. */
export { ACCELERATOR_NAMES, type AcceleratorName, type Accelerators } from './storage/accelerators.js';

/** The SQLite drivers' names, for the CLI's --sqlite-driver and ENGRAM_SQLITE_DRIVER. */
export { SQLITE_DRIVER_NAMES, type SqliteDriverName } from './storage/sqlite/drivers.js';

/** The SQLite checks the CLI makes before it opens or creates a file (cli/existing-memory.ts). */
export { folderMissing, noSuchFolderError } from './storage/sqlite/file.js';

export type Backend =
  | { readonly kind: 'sqlite'; readonly path: string }
  | {
      readonly kind: 'postgres';
      readonly url: string;
      readonly poolSize?: number | undefined;
      readonly statementTimeoutMs?: number | undefined;
    };

/** A database given as a path or as a postgres:// URL (engram migrate takes either). */
export function backendOf(location: string): Backend {
  return /^postgres(ql)?:\/\//i.test(location)
    ? { kind: 'postgres', url: location }
    : { kind: 'sqlite', path: location };
}

/** How to open it; the history limits and the clock are not here: the Memory service hands them to every write. */
export interface OpenOptions {
  /** Each storage accelerator on or off, else its default (storage/accelerators.ts; docs/accelerators.md). */
  readonly accelerators?: Accelerators | undefined;
  /**
   * SQLite only: the driver, `better-sqlite3` or `node` (node:sqlite, Node 22.16+); by
   * default better-sqlite3 when it loads, else node (storage/sqlite/drivers.ts).
   */
  readonly sqliteDriver?: SqliteDriverName | undefined;
  /**
   * SQLite only: told, in words for a log, when the file was removed or replaced while open, or search indexing
   * failed; and where the copy kept before a schema upgrade is.
   */
  readonly onWarning?: ((message: string) => void) | undefined;
}

/**
 * Opens the store, its schema brought to this Engram's. A SQLite file made by an older Engram is
 * first copied into backups/ beside it (storage/sqlite/upgrade-backup.ts); when the copy
 * cannot be written, nothing is opened and nothing changed.
 */
export async function openBackend(backend: Backend, options: OpenOptions = {}): Promise<StorageBackend> {
  if (backend.kind === 'sqlite') {
    const { backupBeforeUpgrade, openSqliteStore } = await import('./storage/sqlite/index.js');
    const kept = await backupBeforeUpgrade(backend.path, options.sqliteDriver);
    if (kept) {
      options.onWarning?.(
        `upgrading the memory's database ${backend.path} from schema version ${kept.version} to ` +
          `${kept.upgradingTo}; a copy of it as it was is kept at ${kept.path}`,
      );
    }
    return openSqliteStore({
      path: backend.path,
      onWarning: options.onWarning,
      accelerators: options.accelerators,
      driver: options.sqliteDriver,
    });
  }
  const { openPostgresStore } = await import('./storage/postgres/index.js');
  return openPostgresStore({
    connectionString: backend.url,
    max: backend.poolSize,
    statementTimeoutMs: backend.statementTimeoutMs,
    accelerators: options.accelerators,
  });
}
