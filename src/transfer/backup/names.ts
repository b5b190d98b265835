/**
 * What backup files are called: `engram-2026-12-06T13-45-00Z.db`, the UTC time it was taken
 * (colons left out, which some file systems refuse), so that names sort as times and a
 * folder of backups reads as a history; a second backup in the same second gets `-2`, `-3`.
 * A copy still being written has a hidden name ending `.partial` beside it, and only
 * becomes a backup by being renamed whole.
 */

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const NAME = /^engram-(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})Z(?:-(\d+))?\.db$/;

/** Ends the name of a copy that is not finished (snapshot.ts and durable.ts write them). */
export const PARTIAL_SUFFIX = '.partial';

/** The backup name for `at`, without the `-N` of a second backup in the same second. */
export function backupName(at: number, prefix = 'engram'): string {
  const iso = new Date(at).toISOString(); // 2026-12-06T13:45:00.123Z
  return `${prefix}-${iso.slice(0, 10)}T${iso.slice(11, 19).replaceAll(':', '-')}Z.db`;
}

/** A path in `folder` for a backup taken at `at` that no file has yet. */
export function freeBackupPath(folder: string, at: number, prefix = 'engram'): string {
  const name = backupName(at, prefix);
  let path = join(folder, name);
  for (let n = 2; existsSync(path); n += 1) path = join(folder, name.replace(/\.db$/, `-${n}.db`));
  return path;
}

/**
 * Free names in `folder` for a backup taken at `at`: the first when the backup is published,
 * or the next should another backup have taken it meanwhile (durable.ts).
 */
export function freeBackupNames(folder: string, at: number, prefix = 'engram'): { readonly next: () => string } {
  return { next: () => freeBackupPath(folder, at, prefix) };
}

/** Whether `name` is a backup's name as the schedule writes them. */
export function isBackupName(name: string): boolean {
  return NAME.test(name);
}

/** The backups in `folder` by name, newest first (names sort as times). */
export function backupsIn(folder: string): string[] {
  return readdirSync(folder)
    .filter(isBackupName)
    .sort((a, b) => sortKey(b).localeCompare(sortKey(a)))
    .map((name) => join(folder, name));
}

/** A name's time, then its `-N` as a number of fixed width, so `-10` sorts after `-9`. */
function sortKey(name: string): string {
  const match = NAME.exec(name);
  if (match === null) return name;
  return `${match[1]}T${match[2]}${match[3]}${match[4]}-${(match[5] ?? '1').padStart(6, '0')}`;
}

/** Whether `name` is an unfinished copy's, or a file SQLite keeps beside one while writing it (`-journal`, `-wal`, `-shm`). */
export function isPartialName(name: string): boolean {
  return /\.partial(-journal|-wal|-shm)?$/.test(name);
}
