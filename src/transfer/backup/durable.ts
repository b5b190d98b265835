/**
 * Making a finished file durable at its name: flushed to the disk, renamed from its
 * temporary name in one step, and the folder's entry flushed too. Before the rename the
 * file has a name ending `.partial`, which no one takes for a backup; after it, the whole
 * file. (A SQLite source's copy does the same inside snapshotSqlite; this is for a copy
 * made otherwise, from PostgreSQL.)
 */

import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { PARTIAL_SUFFIX } from './names.js';

/** A hidden temporary name beside `destination`, ending `.partial`, unique to this process and call. */
export function partialPathFor(destination: string): string {
  return join(
    dirname(destination),
    `.${basename(destination)}.${process.pid}-${randomBytes(4).toString('hex')}${PARTIAL_SUFFIX}`,
  );
}

/** Flushes the file at `partial`, renames it to `destination` (which must not exist), flushes the folder. */
export function renameDurably(partial: string, destination: string): void {
  if (existsSync(destination)) {
    throw Object.assign(new Error(`${destination} already exists: a backup never replaces a file`), { code: 'EEXIST' });
  }
  fsync(partial, 'r+');
  renameSync(partial, destination);
  fsync(dirname(destination), 'r');
}

/** Removes a temporary copy and whatever SQLite left beside it. */
export function removePartial(partial: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${partial}${suffix}`, { force: true });
}

function fsync(path: string, flags: 'r' | 'r+'): void {
  const fd = openSync(path, flags);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
