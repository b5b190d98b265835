/**
 * A consistent copy of a live SQLite memory at a path, whole or not at all: a file copy of a
 * database that other processes write is unsafe (a page of one commit beside a page of the
 * next, the write-ahead log left behind), so SQLite writes the copy itself (`VACUUM INTO`,
 * one read transaction: every commit before it, none after), into a temporary file beside
 * the destination whose name ends `.partial`. Only once the copy is complete and on disk
 * (fsync) is it published at its final name, never replacing a file that appeared there
 * meanwhile (transfer/backup/durable.ts: a hard link, then the partial unlinked), and the
 * folder's entry made durable (fsync of the folder): a process killed at any moment leaves
 * either no file at the destination or a whole one, never a half-written copy that looks
 * like a good one.
 *
 * The VACUUM INTO runs on a connection of its own in a worker thread, so a server's event
 * loop keeps answering while a large memory is copied; writers in other connections and
 * processes go on (WAL: a reader holds no one up). Progress is the `.partial` file's size,
 * polled. The worker runs the source text of its program and of nodeSqliteDriver, as the
 * search worker does (search-worker.ts says why).
 */

import { closeSync, openSync, rmSync, statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { type Destination, partialPathFor, pathOf, publishDurably } from '../../transfer/backup/durable.js';
import type { Database } from './driver.js';
import { type SqliteDriverName, sqliteDriver, type WorkerDriver } from './drivers.js';
import { type DriverConstructor, nodeSqliteDriver } from './node-driver.js';

/** How often the `.partial` file's size is read for progress, in ms. */
const PROGRESS_EVERY_MS = 200;

/** How long the copy's connection waits for another process's lock before failing, in ms. */
const SNAPSHOT_BUSY_MS = 60_000;

export interface SnapshotProgress {
  /** Bytes of the copy written so far. */
  readonly bytes: number;
  /** The source's size in bytes (database file, not its log): about what the copy will be, often more. */
  readonly total: number;
}

export interface SnapshotOptions {
  /** The driver to open the source with; by default the one the store would choose (drivers.ts). */
  readonly driver?: SqliteDriverName;
  /** Told the copy's size as it grows, a few times a second, and once at the end. */
  readonly onProgress?: (progress: SnapshotProgress) => void;
  /**
   * Called with the complete copy's temporary path before it is made durable and published: to
   * write into the copy (a backup's metadata). A throw abandons the copy (the temporary file
   * is removed, nothing reaches the destination).
   */
  readonly beforeRename?: (partialPath: string) => void | Promise<void>;
}

export interface Snapshot {
  /** The destination, now holding the whole copy. */
  readonly path: string;
  readonly bytes: number;
}

/**
 * Copies the SQLite memory at `source` (which others may be writing) consistently to
 * `destination`, atomically: a path whose folder exists and that must not (a copy never
 * replaces a file, even one made while it copied), or a chooser of free names asked again
 * when its name is taken meanwhile. Throws, leaving no file behind, when it cannot.
 */
export async function snapshotSqlite(
  source: string,
  destination: Destination,
  options: SnapshotOptions = {},
): Promise<Snapshot> {
  statSync(source); // ENOENT here rather than SQLite creating an empty source
  const first = pathOf(destination);
  if (statSync(first, { throwIfNoEntry: false }) !== undefined) {
    throw Object.assign(new Error(`${first} already exists: a snapshot never replaces a file`), { code: 'EEXIST' });
  }
  const partial = partialPathFor(first);
  const driver = sqliteDriver(options.driver).worker;
  try {
    // Created empty first, readable by its owner alone as the memory is (file.ts): VACUUM INTO fills an empty file.
    closeSync(openSync(partial, 'wx', 0o600));
    await vacuumInto(driver, source, partial, options.onProgress);
    await options.beforeRename?.(partial);
    const path = publishDurably(partial, destination);
    return { path, bytes: statSync(path).size };
  } catch (error) {
    // The copy, and whatever SQLite kept beside it while the hook wrote into it.
    for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(`${partial}${suffix}`, { force: true });
    throw error;
  }
}

interface WorkerData {
  readonly driver: WorkerDriver;
  readonly source: string;
  readonly partial: string;
  readonly busyMs: number;
}

/** Runs `VACUUM INTO partial` on a worker thread, reporting the partial file's size meanwhile. */
function vacuumInto(
  driver: WorkerDriver,
  source: string,
  partial: string,
  onProgress: SnapshotOptions['onProgress'],
): Promise<void> {
  const data: WorkerData = { driver, source, partial, busyMs: SNAPSHOT_BUSY_MS };
  const thread = new Worker(`(${runSnapshotWorker})(require, ${nodeSqliteDriver});`, { eval: true, workerData: data });
  const total = statSync(source).size;
  const report = () => {
    const bytes = statSync(partial, { throwIfNoEntry: false })?.size ?? 0;
    onProgress?.({ bytes, total });
  };
  const timer = onProgress === undefined ? undefined : setInterval(report, PROGRESS_EVERY_MS);
  return new Promise<void>((resolve, reject) => {
    let failure: Error | undefined;
    thread.on('message', (message: { failed?: { message: string; code?: string } }) => {
      if (message.failed !== undefined)
        failure = Object.assign(new Error(message.failed.message), { code: message.failed.code });
    });
    thread.on('error', (error) => {
      failure ??= error;
    });
    thread.once('exit', (code) => {
      if (timer !== undefined) clearInterval(timer);
      if (failure === undefined && code !== 0) failure = new Error(`the snapshot's worker stopped (exit code ${code})`);
      if (failure !== undefined) return reject(failure);
      if (onProgress !== undefined) report();
      resolve();
    });
  });
}

/** The worker thread's program, run from its source text: it may use only its arguments and its workerData. */
function runSnapshotWorker(load: NodeJS.Require, nodeDriver: typeof nodeSqliteDriver): void {
  const threads = load('node:worker_threads') as typeof import('node:worker_threads');
  const data = threads.workerData as WorkerData;
  const port = threads.parentPort as import('node:worker_threads').MessagePort;
  let db: Database | undefined;
  try {
    const Driver: DriverConstructor =
      data.driver.name === 'node' ? nodeDriver(load) : (load(data.driver.path) as DriverConstructor);
    db = new Driver(data.source, { timeout: data.busyMs, fileMustExist: true });
    db.prepare('VACUUM INTO ?').run(data.partial);
  } catch (error) {
    const { message, code } = error as { message?: string; code?: unknown };
    port.postMessage({
      failed: { message: String(message ?? error), code: typeof code === 'string' ? code : undefined },
    });
  } finally {
    db?.close();
  }
}
