/**
 * What backups need of storage, as the backup feature names it (transfer imports no
 * storage: docs/architecture.md). A backup is one SQLite file in Engram's own schema with a
 * small table saying what it is (`engram_backup`): a valid memory file, restorable to
 * either backend, readable with any SQLite tool. The SQLite backend implements this port
 * (storage/sqlite/backup-files.ts); app.ts hands it to the backup services.
 */

import type { BatchedDump, Store } from '../../memory/port.js';
import type { StoreCounts } from '../migration.js';
import type { Destination } from './durable.js';

/** What a backup holds, counted as `engram migrate` counts a copy. */
export type BackupCounts = StoreCounts;

export const COUNT_NAMES = ['users', 'entries', 'trash', 'revisions', 'tokens', 'accounts', 'apps'] as const;

/** Where a backup's memory came from. */
export type BackupSourceKind = 'sqlite' | 'postgres';

/** What is written into a backup beside its rows (the `engram_backup` table). */
export interface BackupStamp {
  /** When the copy was taken (ms since the epoch): the moment of the snapshot, about. */
  readonly takenAt: number;
  /** The Engram version that took it. */
  readonly engramVersion: string;
  readonly source: BackupSourceKind;
}

/** A backup's metadata as read back: the stamp, the file's schema version and the counts at the time. */
export interface BackupMetadata extends BackupStamp {
  /** The SQLite schema version of the file (its `schema_version`), as the Engram that wrote it knew it. */
  readonly schemaVersion: number;
  readonly counts: BackupCounts;
}

/** A file read as a backup, without changing it. */
export interface BackupInspection {
  /** What PRAGMA integrity_check found wrong: empty when the file is sound. */
  readonly problems: readonly string[];
  /** The `engram_backup` row, or undefined when there is none (not a backup, or not a finished one). */
  readonly metadata: BackupMetadata | undefined;
  /** The file's schema version, or undefined when it has none (not an Engram memory). */
  readonly schemaVersion: number | undefined;
  /** Counted from the rows now, to hold against the metadata's. */
  readonly counts: BackupCounts;
}

export interface SnapshotOptions {
  /** Told the copy's bytes as it grows, and the source's size. */
  readonly onProgress?: (progress: { readonly bytes: number; readonly total: number }) => void;
  /** Called with the complete copy's temporary path (`….partial`) before it is made durable and published. */
  readonly beforeRename?: (partialPath: string) => void | Promise<void>;
}

/** SQLite memory files, as backups use them. */
export interface BackupFiles {
  /** The SQLite schema version this Engram writes. */
  readonly schemaVersion: number;
  /**
   * Copies the live SQLite memory at `source` (others may write it) consistently to
   * `destination`, never replacing a file, atomically: a whole file there, or none. Returns
   * the path written (a chooser's next free name when its first was taken meanwhile).
   */
  snapshot(source: string, destination: Destination, options?: SnapshotOptions): Promise<string>;
  /**
   * Writes `dump` as a new memory at `path` (which must not exist), in the current schema,
   * a batch of entries at a time as the dump reads them (a memory larger than the heap is
   * never held whole), in one transaction that leaves the event loop free between two
   * batches of rows (a server writing a scheduled backup goes on answering); told the
   * entries written so far, of how many the dump holds. A scratch file its caller makes
   * durable (stamp, fsync, publish) or removes: written without a write-ahead log or fsync,
   * so that its end folds no log back into it on the event loop.
   */
  write(path: string, dump: BatchedDump, onProgress?: (entries: number, total: number) => void): Promise<void>;
  /** The memory file at `path` opened as a store, upgraded to the current schema if older: only ever a copy. */
  open(path: string): Store;
  /**
   * Writes `stamp` into the file at `path` (closed, not served) with its schema version and
   * its counts, read from its rows off the event loop, and leaves it one self-contained file
   * (no write-ahead log).
   */
  stamp(path: string, stamp: BackupStamp): Promise<BackupMetadata>;
  /**
   * Reads the file at `path` read-only, checking every page (integrity_check) off the event
   * loop; throws when it is no SQLite database, with SQLite's code (SQLITE_NOTADB, SQLITE_CORRUPT…).
   */
  inspect(path: string): Promise<BackupInspection>;
}
