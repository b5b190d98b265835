/**
 * The copy of a SQLite memory kept before its schema is upgraded. Migrations run in one
 * transaction, so a failed upgrade leaves the file as it was; this copy is for the other
 * case, an upgrade that completes but that a person wants to undo (a newer Engram that
 * turned out wrong for them, a step that lost something it should not have). Before this
 * Engram migrates a file made by an older one, it copies the file as it is, consistently
 * (snapshot.ts: SQLite's own VACUUM INTO, never a file copy), into `backups/` beside it,
 * named by the file and its schema version (`backups/memory.db.schema-12.backup`), and
 * keeps it. When that copy cannot be written (the folder is not writable, the disk is
 * full), the upgrade is refused and the file stays at its version: no upgrade without
 * the way back.
 */

import { existsSync, mkdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { EngramError } from '../../memory/model/errors.js';
import { DEFAULT_BUSY_DEADLINE_MS } from './busy.js';
import type { Database } from './driver.js';
import { type SqliteDriverName, sqliteDriver } from './drivers.js';
import { explainFailure } from './errors.js';
import { MIGRATIONS, recordedVersion } from './migrations.js';
import { snapshotSqlite } from './snapshot.js';

/** The folder, beside the database file, that holds the copies kept before upgrades. */
export const UPGRADE_BACKUP_FOLDER = 'backups';

export interface UpgradeBackup {
  /** The copy, at the schema version the file had. */
  readonly path: string;
  /** The schema version of the file (and of the copy) before the upgrade. */
  readonly version: number;
  /** The schema version opening it upgrades it to: this Engram's. */
  readonly upgradingTo: number;
}

/** Thrown into the snapshot when the copy is not at the version read before it: another Engram upgraded the file meanwhile. */
class UpgradedMeanwhile extends Error {}

/**
 * Keeps a copy of the SQLite memory at `path` when this Engram is about to upgrade its
 * schema: a file made by an older Engram. Nothing for a new or missing file, one already at
 * this schema, or one from a newer Engram (which opening refuses). Throws an EngramError,
 * having changed nothing, when the copy cannot be written.
 */
export async function backupBeforeUpgrade(
  path: string,
  driverName?: SqliteDriverName,
): Promise<UpgradeBackup | undefined> {
  const driver = sqliteDriver(driverName);
  for (;;) {
    let version: number | undefined;
    try {
      version = versionOf(path, driver.Database);
    } catch (error) {
      // Said as opening the store would say it: no upgrade is attempted when the file cannot be read.
      throw explainFailure(error, { path, busyDeadlineMs: DEFAULT_BUSY_DEADLINE_MS });
    }
    if (version === undefined || version >= MIGRATIONS.length) return undefined;
    const folder = join(dirname(path), UPGRADE_BACKUP_FOLDER);
    const stem = `${basename(path)}.schema-${version}`;
    const destination = freeName(folder, stem);
    try {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      // Another Engram upgrading the same file at once may take the name meanwhile: then the next one.
      const kept = await snapshotSqlite(
        path,
        { next: () => freeName(folder, stem) },
        {
          driver: driver.name,
          beforeRename: (partial) => {
            if (versionOf(partial, driver.Database) !== version) throw new UpgradedMeanwhile();
          },
        },
      );
      return { path: kept.path, version, upgradingTo: MIGRATIONS.length };
    } catch (error) {
      if (error instanceof UpgradedMeanwhile) continue;
      throw cannotKeepCopy(path, version, destination, error);
    }
  }
}

/** The schema version the file at `path` records; undefined when there is no such file yet, or it is empty. */
function versionOf(path: string, Driver: ReturnType<typeof sqliteDriver>['Database']): number | undefined {
  if (path === ':memory:' || !existsSync(path) || statSync(path).size === 0) return undefined;
  let db: Database | undefined;
  try {
    db = new Driver(path, { fileMustExist: true, timeout: DEFAULT_BUSY_DEADLINE_MS });
    return recordedVersion(db);
  } finally {
    db?.close();
  }
}

/** `<stem>.backup` in `folder`, else `<stem>-2.backup`, `-3` …: a kept copy is never replaced. */
function freeName(folder: string, stem: string): string {
  for (let n = 1; ; n++) {
    const candidate = join(folder, `${stem}${n === 1 ? '' : `-${n}`}.backup`);
    if (!existsSync(candidate)) return candidate;
  }
}

function cannotKeepCopy(path: string, version: number, destination: string, error: unknown): EngramError {
  const { message, code } = error as { message?: string; code?: unknown };
  const reason = typeof code === 'string' ? `${message} (${code})` : String(message ?? error);
  const megabytes = Math.max(1, Math.ceil(statSync(path).size / 1_000_000));
  return new EngramError(
    'STORE_UNAVAILABLE',
    `The memory's database ${path} is at schema version ${version} and this Engram upgrades it to ` +
      `${MIGRATIONS.length}, keeping a copy of it as it is first, but the copy could not be written to ` +
      `${destination}: ${reason}. Nothing was changed: the database is still at version ${version}. Let the user ` +
      `running Engram create and write ${dirname(destination)}, with room for about ${megabytes} MB on its disk, ` +
      'then try again.',
  );
}
