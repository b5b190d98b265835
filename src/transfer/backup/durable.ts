/**
 * Making a finished file durable at its name: flushed to the disk, then published in one
 * step, and the folder's entry flushed too. Before that the file has a name ending
 * `.partial`, which no one takes for a backup; after it, the whole file.
 *
 * A backup never replaces a file, and checking the name before a copy of minutes proves
 * nothing about the moment it is published: a scheduled backup and a cron `engram backup
 * DIR` may pick the same `engram-<second>.db`. So the file is published by a hard link of
 * the partial to its name (link(2) fails with EEXIST when the name exists, in one step: no
 * file is replaced), then the partial is unlinked; both names are in one folder, so on one
 * file system. A name Engram chose is then chosen again (`-2`, `-3` …); a path the person
 * named is refused. A file system without hard links (FAT, exFAT, some network shares)
 * falls back to a rename after a last check of the name, whose window is that of a
 * system call rather than a copy's.
 *
 * Used by SQLite's copy (storage/sqlite/snapshot.ts) and by a copy made from a dump
 * (PostgreSQL's way, take.ts).
 */

import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  unlinkSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { PARTIAL_SUFFIX } from './names.js';

/**
 * Where a finished file goes: a path the person named, refused should a file be there when
 * it is published; or `next`, which names a free path and is asked again for each name
 * found taken (Engram's own names: names.ts freeBackupNames).
 */
export type Destination = string | { readonly next: () => string };

/** A hidden temporary name beside `destination`, ending `.partial`, unique to this process and call. */
export function partialPathFor(destination: string): string {
  return join(
    dirname(destination),
    `.${basename(destination)}.${process.pid}-${randomBytes(4).toString('hex')}${PARTIAL_SUFFIX}`,
  );
}

/** The path `destination` names now: the one named, or the first free one. */
export function pathOf(destination: Destination): string {
  return typeof destination === 'string' ? destination : destination.next();
}

/** Codes of a file system that has no hard links. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Flushes the file at `partial`, publishes it at `destination` without ever replacing a
 * file, and flushes the folder. Returns where it is; throws EEXIST, the partial left for
 * the caller to remove, when a named path is taken.
 */
export function publishDurably(partial: string, destination: Destination): string {
  fsync(partial, 'r+');
  for (;;) {
    const target = pathOf(destination);
    try {
      linkOrRename(partial, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (typeof destination !== 'string') continue;
      throw Object.assign(
        new Error(
          `${target} already exists: a file appeared there while the copy was made, and a backup never replaces a file`,
        ),
        { code: 'EEXIST' },
      );
    }
    fsync(dirname(target), 'r');
    return target;
  }
}

function linkOrRename(partial: string, target: string): void {
  try {
    linkSync(partial, target);
  } catch (error) {
    if (!NO_LINKS.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
    if (existsSync(target)) throw Object.assign(new Error(`${target} exists`), { code: 'EEXIST' });
    renameSync(partial, target);
    return;
  }
  unlinkSync(partial);
}

/**
 * Removes the files in `folder` that `leftover` names (its first group the id of the process
 * that made them) whose process is gone: temporary copies of a command killed half-way.
 * Best effort: a folder that cannot be read is left as it is (what comes next says why).
 */
export function removeDeadLeftovers(folder: string, leftover: RegExp): void {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(leftover.exec(name)?.[1]);
    if (Number.isInteger(pid) && !alive(pid)) rmSync(join(folder, name), { force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
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
