/**
 * Taking a backup: a consistent copy of the whole memory while servers keep writing, as one
 * SQLite file in Engram's schema, stamped with what it holds, at its final name only once
 * whole and on disk. From SQLite, SQLite copies the live file itself (VACUUM INTO, through
 * BackupFiles.snapshot); from PostgreSQL, the whole store is read in one repeatable-read
 * snapshot and written into a new SQLite file as it is read, a batch of entries at a time
 * (Store.dumpInBatches, BackupFiles.write): a memory of some gigabytes is backed up by a
 * server (a scheduled backup) in the few megabytes of one batch, never held whole.
 */

import { statSync } from 'node:fs';
import { dumpInBatchesOf, type Store } from '../../memory/port.js';
import { type Destination, partialPathFor, pathOf, publishDurably, removePartial } from './durable.js';
import type { BackupFiles, BackupMetadata } from './port.js';

/** The memory being backed up: a SQLite file by path (copied by SQLite), or a PostgreSQL store. */
export type LiveMemory =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly store: Store };

/** How far a backup is: bytes copied from SQLite; from PostgreSQL, the snapshot opened, then entries written as they are read. */
export type BackupProgress =
  | { readonly phase: 'copying'; readonly bytes: number; readonly total: number }
  | { readonly phase: 'reading' }
  | { readonly phase: 'writing'; readonly entries: number; readonly total: number };

export interface TakeOptions {
  readonly files: BackupFiles;
  /** The Engram version written into the backup. */
  readonly version: string;
  readonly now: () => number;
  readonly onProgress?: (progress: BackupProgress) => void;
}

/** A backup taken: where, how large, and what it holds. */
export interface TakenBackup {
  readonly path: string;
  readonly bytes: number;
  readonly metadata: BackupMetadata;
}

/**
 * Backs `memory` up to `destination`, in a folder that exists: a path that must not exist
 * (nor appear while the backup is taken), or the free names Engram chooses (names.ts
 * freeBackupNames). The whole backup there, or nothing (a failure removes the temporary copy).
 */
export async function takeBackup(
  memory: LiveMemory,
  destination: Destination,
  options: TakeOptions,
): Promise<TakenBackup> {
  const { files, onProgress } = options;
  const stamp = { takenAt: options.now(), engramVersion: options.version, source: memory.kind };
  let metadata: BackupMetadata | undefined;
  let path: string;
  if (memory.kind === 'sqlite') {
    path = await files.snapshot(memory.path, destination, {
      onProgress: (progress) => onProgress?.({ phase: 'copying', ...progress }),
      beforeRename: async (partial) => {
        metadata = await files.stamp(partial, stamp);
      },
    });
  } else {
    const partial = partialPathFor(pathOf(destination));
    try {
      onProgress?.({ phase: 'reading' });
      const { store } = memory;
      await files.write(
        partial,
        (batches) => dumpInBatchesOf(store, batches),
        (entries, total) => onProgress?.({ phase: 'writing', entries, total }),
      );
      metadata = await files.stamp(partial, stamp);
      path = publishDurably(partial, destination);
    } catch (error) {
      removePartial(partial);
      throw error;
    }
  }
  return { path, bytes: statSync(path).size, metadata: metadata as BackupMetadata };
}
