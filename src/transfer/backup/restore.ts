/**
 * Restoring a backup into a memory (SQLite or PostgreSQL): checked first (verify.ts), then
 * copied in through copyStore, whose load is one transaction, so a process killed at any
 * moment leaves the memory as it was or as the backup, whole. A memory that holds anything
 * is refused unless the caller forces it, and then a backup of what it held is taken first
 * and named. A backup is never changed: it is copied to a temporary file, and that copy is
 * opened (and upgraded, when an older Engram wrote it) and read.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngramError } from '../../memory/model/errors.js';
import type { Store } from '../../memory/port.js';
import { type CopySummary, copyStore } from '../migration.js';
import type { Destination } from './durable.js';
import type { BackupFiles } from './port.js';
import { type LiveMemory, type TakenBackup, takeBackup } from './take.js';
import { type VerifiedBackup, verifyBackup } from './verify.js';

/** The memory a backup is restored into. */
export interface RestoreTarget {
  /** How the target is backed up before it is replaced. */
  readonly memory: LiveMemory;
  /** The target, open. */
  readonly store: Store;
  /** How to name it in messages, e.g. "SQLite /home/me/.local/share/engram/memory.db". */
  readonly name: string;
}

export interface RestoreOptions {
  readonly files: BackupFiles;
  /** Replace a memory that holds something (after backing it up); without it, one is refused. */
  readonly force: boolean;
  /** Where the copy of a replaced memory goes: a path or free names for it, chosen when it is needed. */
  readonly keepPath: () => Destination;
  readonly version: string;
  readonly now: () => number;
  /** Told as the backup's entries are written into the target. */
  readonly onProgress?: (written: number, total: number) => void;
}

export interface Restored {
  readonly backup: VerifiedBackup;
  readonly copied: CopySummary;
  /** The backup of what the target held, taken before it was replaced. */
  readonly kept: TakenBackup | undefined;
}

/** Restores `file` into the memory `openTarget` opens, once the backup is found good (a bad one opens, or creates, nothing). */
export async function restoreBackup(
  file: string,
  openTarget: () => Promise<RestoreTarget>,
  options: RestoreOptions,
): Promise<Restored> {
  const { files } = options;
  const backup = await verifyBackup(file, files, options.now);
  if (!backup.restorable) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `${file} was written by Engram ${backup.metadata.engramVersion} (schema version ${backup.metadata.schemaVersion}), ` +
        `newer than this Engram (schema version ${files.schemaVersion}): upgrade Engram, then restore it.`,
    );
  }
  const target = await openTarget();
  const empty = await target.store.isEmpty();
  if (!empty && !options.force) {
    throw new EngramError(
      'CONFLICT',
      `${target.name} is not empty: it holds entries, trash, tokens, accounts or connected apps, so nothing was restored. ` +
        'Pass --force to replace all of it with the backup (a backup of it is taken first), or restore into an empty memory (--to).',
    );
  }
  const kept = empty
    ? undefined
    : await takeBackup(target.memory, options.keepPath(), { files, version: options.version, now: options.now });
  const folder = mkdtempSync(join(tmpdir(), 'engram-restore-'));
  try {
    const copy = join(folder, 'backup.db');
    await files.snapshot(file, copy);
    const source = files.open(copy);
    try {
      const copied = await copyStore(source, target.store, {
        force: options.force,
        target: target.name,
        onProgress: ({ entriesWritten, entriesTotal }) => options.onProgress?.(entriesWritten, entriesTotal),
      });
      return { backup, copied, kept };
    } finally {
      await source.close();
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
