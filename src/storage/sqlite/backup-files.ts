/**
 * The SQLite side of backups (transfer/backup/port.ts): a backup is a memory file in this
 * backend's schema, so copying, creating, opening, stamping and inspecting one are SQLite's
 * work, done here with the driver the caller chose. The stamp is a one-row table,
 * `engram_backup`, beside the memory's own tables: the file stays a valid memory, and the
 * table is ignored by everything but backups. A stamped file is switched out of WAL mode,
 * so a backup is one self-contained file with nothing beside it.
 *
 * Stamping counts every row, and inspecting reads every page (integrity_check): seconds for
 * a large memory, so both run on a worker thread, from their source text as the search
 * worker's program does (search-worker.ts says why), and a server's event loop keeps
 * answering while its scheduled backup is checked.
 */

import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type {
  BackupCounts,
  BackupFiles,
  BackupInspection,
  BackupMetadata,
  BackupStamp,
  SnapshotOptions,
} from '../../transfer/backup/port.js';
import type { Database } from './driver.js';
import { type SqliteDriverName, sqliteDriver, type WorkerDriver } from './drivers.js';
import { MIGRATIONS } from './migrations.js';
import { type DriverConstructor, nodeSqliteDriver } from './node-driver.js';
import { snapshotSqlite } from './snapshot.js';
import { SqliteStore } from './store.js';

/** SQLite memory files as backups use them, opened with `driver` (by default the store's choice). */
export function sqliteBackupFiles(driver?: SqliteDriverName): BackupFiles {
  return {
    schemaVersion: MIGRATIONS.length,
    snapshot: async (source, destination, options: SnapshotOptions = {}) =>
      (await snapshotSqlite(source, destination, { ...options, driver })).path,
    async write(path, dump, onProgress) {
      if (existsSync(path)) throw new Error(`${path} already exists: a new memory file is never made over one`);
      // Written once and made durable by its writer (stamped, fsynced, published): no write-ahead log to fold back at the end.
      const store = new SqliteStore({ path, driver, writtenOnce: true });
      try {
        await store.writeInBatches(dump, { replace: false, onProgress });
      } finally {
        await store.close();
      }
    },
    open(path) {
      if (!existsSync(path)) throw new Error(`${path}: no such file`);
      return new SqliteStore({ path, driver });
    },
    stamp: (path, stamp) => inWorker<BackupMetadata>(sqliteDriver(driver).worker, { path, stamp }),
    inspect: (path) => inWorker<BackupInspection>(sqliteDriver(driver).worker, { path }),
  };
}

interface FileWork {
  readonly path: string;
  /** Given, the file is stamped; else it is inspected, read-only. */
  readonly stamp?: BackupStamp;
}

/** Runs fileWork on a worker thread, and hands back what it returns, or rejects with its failure (and SQLite's code). */
function inWorker<Result>(driver: WorkerDriver, work: FileWork): Promise<Result> {
  const source = `(${runFileWorker})(require, ${nodeSqliteDriver}, ${fileWork});`;
  const thread = new Worker(source, { eval: true, workerData: { driver, work } });
  return new Promise<Result>((resolve, reject) => {
    let answer: { result?: Result; failed?: { message: string; code?: string } } | undefined;
    thread.on('message', (message: typeof answer) => {
      answer = message;
    });
    thread.on('error', (error) => {
      answer ??= { failed: { message: error.message } };
    });
    thread.once('exit', (code) => {
      if (answer?.failed !== undefined) {
        reject(Object.assign(new Error(answer.failed.message), { code: answer.failed.code }));
      } else if (answer === undefined || code !== 0) {
        reject(new Error(`the backup file's worker stopped (exit code ${code})`));
      } else {
        resolve(answer.result as Result);
      }
    });
  });
}

/** The worker thread's program, run from its source text: it may use only its arguments and its workerData. */
function runFileWorker(load: NodeJS.Require, nodeDriver: typeof nodeSqliteDriver, work: typeof fileWork): void {
  const threads = load('node:worker_threads') as typeof import('node:worker_threads');
  const data = threads.workerData as { driver: WorkerDriver; work: FileWork };
  const port = threads.parentPort as import('node:worker_threads').MessagePort;
  let db: Database | undefined;
  try {
    const Driver: DriverConstructor =
      data.driver.name === 'node' ? nodeDriver(load) : (load(data.driver.path) as DriverConstructor);
    db = new Driver(data.work.path, { fileMustExist: true, readonly: data.work.stamp === undefined });
    port.postMessage({ result: work(db, data.work.stamp) });
  } catch (error) {
    const { message, code } = error as { message?: string; code?: unknown };
    port.postMessage({
      failed: { message: String(message ?? error), code: typeof code === 'string' ? code : undefined },
    });
  } finally {
    db?.close();
  }
}

/**
 * Stamps the open file with `stamp` (its metadata, as returned), or inspects it without
 * writing. Run from its source text in the worker: it uses nothing but its arguments.
 */
function fileWork(db: Database, stamp: BackupStamp | undefined): BackupMetadata | BackupInspection {
  const hasTable = (name: string) =>
    db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").get(name) !== undefined;
  const schemaVersion = (): number | undefined =>
    hasTable('schema_version')
      ? (db.prepare('SELECT version FROM schema_version').pluck().get() as number | undefined)
      : undefined;
  // Rows of `table` that match `where`: 0 when an older schema has no such table.
  const count = (table: string, where = '') =>
    hasTable(table) ? Number(db.prepare(`SELECT count(*) FROM ${table} ${where}`).pluck().get()) : 0;
  // As `engram migrate` counts a copy: users are those with usage or entries.
  const counts = (): BackupCounts => ({
    users: hasTable('entries')
      ? Number(
          db
            .prepare('SELECT count(*) FROM (SELECT user_id FROM users UNION SELECT user_id FROM entries)')
            .pluck()
            .get(),
        )
      : count('users'),
    entries: count('entries', 'WHERE dropped_at IS NULL'),
    trash: count('entries', 'WHERE dropped_at IS NOT NULL'),
    revisions: count('revisions'),
    tokens: count('tokens'),
    accounts: count('accounts'),
    apps: count('grants'),
  });
  const names = ['users', 'entries', 'trash', 'revisions', 'tokens', 'accounts', 'apps'] as const;

  if (stamp !== undefined) {
    const metadata: BackupMetadata = { ...stamp, schemaVersion: schemaVersion() ?? 0, counts: counts() };
    db.transaction(() => {
      db.exec('DROP TABLE IF EXISTS engram_backup');
      db.exec(`CREATE TABLE engram_backup (taken_at INTEGER NOT NULL, engram_version TEXT NOT NULL,
        source TEXT NOT NULL, schema_version INTEGER NOT NULL, ${names.map((name) => `${name} INTEGER NOT NULL`).join(', ')}) STRICT`);
      db.prepare(
        `INSERT INTO engram_backup (taken_at, engram_version, source, schema_version, ${names.join(', ')})
         VALUES (?, ?, ?, ?, ${names.map(() => '?').join(', ')})`,
      ).run(
        stamp.takenAt,
        stamp.engramVersion,
        stamp.source,
        metadata.schemaVersion,
        ...names.map((name) => metadata.counts[name]),
      );
    })();
    // One file, nothing beside it: out of WAL mode (which folds the log back into the file).
    db.pragma('journal_mode = DELETE');
    return metadata;
  }

  const problems = (db.prepare('PRAGMA integrity_check').pluck().all() as string[]).filter((line) => line !== 'ok');
  let metadata: BackupMetadata | undefined;
  if (problems.length === 0 && hasTable('engram_backup')) {
    const rows = db.prepare('SELECT * FROM engram_backup').all() as Record<string, unknown>[];
    const row = rows.length === 1 ? rows[0] : undefined;
    if (row !== undefined) {
      metadata = {
        takenAt: Number(row.taken_at),
        engramVersion: String(row.engram_version),
        source: row.source === 'postgres' ? 'postgres' : 'sqlite',
        schemaVersion: Number(row.schema_version),
        counts: Object.fromEntries(names.map((name) => [name, Number(row[name])])) as unknown as BackupCounts,
      };
    }
  }
  return { problems, metadata, schemaVersion: schemaVersion(), counts: counts() };
}
