/**
 * Restoring a backup into a memory (SQLite or PostgreSQL): checked first (verify.ts), then
 * copied in through copyStore, a batch of entries at a time (a backup of some gigabytes is
 * never held whole) into the target's one transaction, so a process killed at any moment
 * leaves the memory as it was or as the backup, whole. A memory that holds anything
 * is refused unless the caller forces it, and then a backup of what it held is taken first
 * and named. A backup is never changed: it is copied to a temporary file, and that copy is
 * opened (and upgraded, when an older Engram wrote it) and read.
 *
 * The temporary copy is as large as the backup. It goes beside the target when that is a
 * SQLite file (the memory's own disk, which must hold the restored memory anyway; a small
 * tmpfs at /tmp may not hold the copy), else in the system's temporary folder (TMPDIR).
 * Its name (`.engram-restore-<pid>-<random>.db`) says whose it is: a restore removes those
 * of restores killed half-way. A step that fails is said in words naming it (the temporary
 * copy, or the copy kept of what the target held) and what to do; the target's own
 * failures come worded by its store.
 */

import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { EngramError, isEngramError } from '../../memory/model/errors.js';
import type { Store } from '../../memory/port.js';
import { type CopySummary, copyStore } from '../migration.js';
import { type Destination, removeDeadLeftovers, removePartial } from './durable.js';
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
  const kept = empty ? undefined : await keepWhatItHolds(target, options);
  const besideTarget = target.memory.kind === 'sqlite';
  const folder = target.memory.kind === 'sqlite' ? dirname(target.memory.path) : tmpdir();
  removeDeadLeftovers(folder, LEFTOVER);
  const copy = join(folder, `.engram-restore-${process.pid}-${randomBytes(4).toString('hex')}.db`);
  try {
    let source: Store;
    try {
      await files.snapshot(file, copy);
      source = files.open(copy);
    } catch (error) {
      throw copyFailed(error, { folder, besideTarget, target: target.name, bytes: backup.bytes });
    }
    try {
      const copied = await copyStore(source, target.store, {
        // Replace only what a copy was kept of: a memory found empty and written meanwhile is refused, not wiped.
        force: kept !== undefined,
        target: target.name,
        onProgress: ({ entriesWritten, entriesTotal }) => options.onProgress?.(entriesWritten, entriesTotal),
      });
      return { backup, copied, kept };
    } finally {
      await source.close();
    }
  } finally {
    // The copy and what SQLite kept beside it (a snapshot that fails removes its own partial).
    removePartial(copy);
  }
}

/**
 * A restore's temporary copy, and what is left beside it: the copy's `-wal`, `-shm` or
 * `-journal`, and the `.partial` of the snapshot that writes it (snapshot.ts). The first
 * group is the restore's process.
 */
const LEFTOVER = /^\.{1,2}engram-restore-(\d+)-[0-9a-f]+\.db(\.\d+-[0-9a-f]+\.partial)?(-journal|-wal|-shm)?$/;

/** Backs up what the target holds before it is replaced; a failure says that this step failed. */
async function keepWhatItHolds(target: RestoreTarget, options: RestoreOptions): Promise<TakenBackup> {
  try {
    return await takeBackup(target.memory, options.keepPath(), {
      files: options.files,
      version: options.version,
      now: options.now,
    });
  } catch (error) {
    const kind = fileFailure(error);
    if (kind === undefined) throw error;
    const reason = reasonOf(error);
    throw new EngramError(
      kind,
      kind === 'STORE_FULL'
        ? `No room to keep a copy of what ${target.name} holds before replacing it (${reason}), so nothing was ` +
            'restored and it is as it was. Free space on the disk of the backups folder (where engram backup writes ' +
            'by default), or restore into an empty memory (--to), then try again.'
        : `Cannot keep a copy of what ${target.name} holds before replacing it (${reason}), so nothing was restored ` +
            'and it is as it was. Let the user running Engram write the backups folder (where engram backup writes ' +
            'by default), or restore into an empty memory (--to), then try again.',
    );
  }
}

interface CopyPlace {
  readonly folder: string;
  /** The folder is the SQLite target's own. */
  readonly besideTarget: boolean;
  readonly target: string;
  /** The backup's size: about what the copy needs. */
  readonly bytes: number;
}

/** The temporary copy's failure in words: where, why, and what to do; other failures as they came. */
function copyFailed(error: unknown, place: CopyPlace): unknown {
  const kind = fileFailure(error);
  if (kind === undefined) return error;
  const { folder, besideTarget, target } = place;
  const reason = reasonOf(error);
  if (kind === 'STORE_FULL') {
    const megabytes = Math.max(1, Math.ceil(place.bytes / 1_000_000));
    return new EngramError(
      'STORE_FULL',
      `No room for the temporary copy of the backup in ${folder} (it needs about ${megabytes} MB: ${reason}), so ` +
        `nothing was restored and ${target} is as it was. ` +
        (besideTarget
          ? 'Free that much space on the disk of the memory, which the restored memory needs as well, then try again.'
          : 'Free that much space there, or set TMPDIR to a folder on a disk with room, then try again.'),
    );
  }
  return new EngramError(
    'STORE_READ_ONLY',
    `Cannot write the temporary copy of the backup in ${folder} (${reason}), so nothing was restored and ${target} ` +
      'is as it was. ' +
      (besideTarget
        ? `The copy is made beside the memory, on its disk: let the user running Engram write ${folder}, which the ` +
          'restore needs too, then try again.'
        : `Let the user running Engram write ${folder}, or set TMPDIR to a folder it may write, then try again.`),
  );
}

/** Codes of a folder or file that cannot be written. */
const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOENT', 'ENOTDIR', 'SQLITE_CANTOPEN', 'SQLITE_READONLY']);

/** Whether `error` (not one already worded) is a file that cannot be written, or a disk without room. */
function fileFailure(error: unknown): 'STORE_READ_ONLY' | 'STORE_FULL' | undefined {
  if (isEngramError(error)) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  if (code === 'ENOSPC' || code === 'SQLITE_FULL' || /database or disk is full/.test(text)) return 'STORE_FULL';
  if (NOT_WRITABLE.has(String(code)) || /unable to open database file|readonly database/.test(text)) {
    return 'STORE_READ_ONLY';
  }
  return undefined;
}

function reasonOf(error: unknown): string {
  const { message } = error as { message?: unknown };
  return typeof message === 'string' ? message : String(error);
}
