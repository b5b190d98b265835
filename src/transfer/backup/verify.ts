/**
 * Checking a backup before it is trusted: every page read (PRAGMA integrity_check: the
 * quick check skips the indexes' agreement with their tables), its stamp present, and the
 * counts it records equal to the rows it holds. A half-written copy (`.partial`), a
 * truncated or damaged file, a file that is no SQLite database and a memory that is no
 * backup are each refused, saying which, so nothing doubtful is ever restored or kept as
 * the last good one.
 */

import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { EngramError } from '../../memory/model/errors.js';
import { formatCount } from '../../memory/model/text.js';
import { isPartialName } from './names.js';
import { type BackupFiles, type BackupMetadata, COUNT_NAMES } from './port.js';

/** A backup found sound. */
export interface VerifiedBackup {
  readonly path: string;
  readonly bytes: number;
  readonly metadata: BackupMetadata;
  /** How long before the check it was taken, in ms. */
  readonly ageMs: number;
  /** False when it was written by a newer Engram (a later schema) than this one, which cannot restore it. */
  readonly restorable: boolean;
}

/** Checks the backup at `path`; throws an EngramError saying what is wrong with it. */
export async function verifyBackup(path: string, files: BackupFiles, now: () => number): Promise<VerifiedBackup> {
  if (isPartialName(basename(path))) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `${path} is an unfinished backup (a .partial file): its copy was interrupted, or is still being written, ` +
        'so it is not a backup. Use a finished one (engram-….db), or take a new one with engram backup.',
    );
  }
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) {
    throw new EngramError('NOT_FOUND', `There is no file at ${path}: give the path of a backup file (engram-….db).`);
  }
  if (!stat.isFile()) {
    throw new EngramError('INVALID_ARGUMENT', `${path} is not a file: give the path of a backup file (engram-….db).`);
  }
  let inspection: Awaited<ReturnType<BackupFiles['inspect']>>;
  try {
    inspection = await files.inspect(path);
  } catch (error) {
    throw unreadable(path, error);
  }
  if (inspection.problems.length > 0) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `${path} is damaged: SQLite's integrity check found ${formatCount(inspection.problems.length)} problem(s), ` +
        `first ${JSON.stringify(inspection.problems[0])}. Do not restore it: use another backup.`,
    );
  }
  const { metadata } = inspection;
  if (metadata === undefined) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      inspection.schemaVersion === undefined
        ? `${path} is a SQLite database but not an Engram backup: it has no Engram tables.`
        : `${path} is an Engram memory but not a backup (it has no engram_backup stamp). ` +
            'To back it up: engram backup --db FILE; to copy it whole into another database: engram migrate.',
    );
  }
  const differing = COUNT_NAMES.filter((name) => metadata.counts[name] !== inspection.counts[name]);
  if (differing.length > 0 || metadata.schemaVersion !== inspection.schemaVersion) {
    const what = differing
      .map(
        (name) =>
          `${formatCount(metadata.counts[name])} ${name} recorded, ${formatCount(inspection.counts[name])} held`,
      )
      .join('; ');
    throw new EngramError(
      'INVALID_ARGUMENT',
      `${path} does not hold what its stamp says (${what || 'its schema version differs'}): it was changed after it ` +
        'was taken, or is damaged. Do not restore it: use another backup.',
    );
  }
  return {
    path,
    bytes: stat.size,
    metadata,
    ageMs: Math.max(0, now() - metadata.takenAt),
    restorable: metadata.schemaVersion <= files.schemaVersion,
  };
}

/** SQLite could not read the file at all: its code says whether it is damaged or no database. */
function unreadable(path: string, error: unknown): EngramError {
  const { code, message } = error as { code?: string; message?: string };
  if (code === 'SQLITE_NOTADB') {
    return new EngramError('INVALID_ARGUMENT', `${path} is not an Engram backup: it is not a SQLite database.`);
  }
  if (code === 'SQLITE_CORRUPT' || code?.startsWith('SQLITE_CORRUPT_')) {
    return new EngramError(
      'INVALID_ARGUMENT',
      `${path} is damaged (truncated or overwritten): SQLite cannot read it (${message}). Do not restore it: use another backup.`,
    );
  }
  return new EngramError('INVALID_ARGUMENT', `${path} cannot be read as a backup: ${message ?? String(error)}.`);
}
