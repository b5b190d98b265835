/**
 * Opening the database file: created 0600 in a folder that exists (file.ts), WAL with synchronous=FULL
 * (an acknowledged write survives power loss), foreign keys, secure_delete (purged text
 * is overwritten), migrated to the newest schema. Opening comes before anything is
 * served, so it may wait on the spot for another process's lock, up to the deadline;
 * then the connection's busy timeout drops to a few milliseconds and the store waits on
 * timers instead (busy.ts). Reads go through a memory map of the file. A file that cannot be
 * opened is explained (errors.ts). Either SQLite driver opens it (drivers.ts): the same
 * pragmas, the same file.
 *
 * Except a file written once and made durable by its writer (a backup's `.partial`, which
 * is fsynced, stamped and published after it is closed): no write-ahead log and no fsync
 * (journal_mode=DELETE, synchronous=OFF). Its pages then reach the file as SQLite's cache
 * spills them, and neither the COMMIT of a dump loaded in turns nor the close has a log of
 * the whole dump to fold back into the file on the event loop (a 120 MB dump held a server
 * up for over a second). A rollback journal still lets a failed load roll back, and costs
 * next to nothing in a new file: pages past its size when the transaction began are not
 * journaled.
 */

import { BUSY_TIMEOUT_MS } from './busy.js';
import type { Database } from './driver.js';
import type { SqliteDriver } from './drivers.js';
import { explainFailure, type FailureContext } from './errors.js';
import { prepareDatabaseFile } from './file.js';
import { FileIdentity } from './file-identity.js';
import { migrate } from './migrations.js';

/** Address space mapped for reads (SQLite caps it at 2 GiB); a larger file reads the rest with pread. */
export const MMAP_BYTES = 1024 * 1024 * 1024;

export interface OpenedDatabase {
  readonly db: Database;
  /** The file that was opened, to check before every write that the path still names it. */
  readonly file: FileIdentity;
}

export function openDatabase(
  context: FailureContext,
  onWarning: ((message: string) => void) | undefined,
  driver: SqliteDriver,
  writtenOnce = false,
): OpenedDatabase {
  let db: Database | undefined;
  try {
    prepareDatabaseFile(context.path);
    db = new driver.Database(context.path, { timeout: context.busyDeadlineMs });
    const file = new FileIdentity(context.path, onWarning);
    db.pragma(writtenOnce ? 'journal_mode = DELETE' : 'journal_mode = WAL');
    db.pragma(writtenOnce ? 'synchronous = OFF' : 'synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma('secure_delete = ON');
    // Reads go through a memory map of the file: a page not yet in SQLite's cache is then a
    // mapping of the OS page cache, not a pread into a page SQLite allocates and copies into
    // (an open on stdio paid that for most entries). Writes still go through write() and fsync.
    db.pragma(`mmap_size = ${MMAP_BYTES}`);
    migrate(db, context.path);
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    return { db, file };
  } catch (error) {
    db?.close();
    throw explainFailure(error, context);
  }
}
