/**
 * The paths of a Markdown export's folder (markdown-export.ts), which someone else may have
 * written in: inspected and read without following a symbolic link (a link is refused,
 * naming it), and the folders written in checked to be the exporting user's alone.
 */

import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readSync, type Stats } from 'node:fs';
import { shellWord } from '../memory/model/shell-word.js';
import { UsageError } from './output.js';

/** A path's stats without following a link; undefined when nothing is there. */
export function lstatOf(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function refuseLink(path: string): never {
  throw new UsageError(
    `${path} is a symbolic link: an export never follows one, since it could lead anywhere. ` +
      'Remove the link (or name another folder) and export again; nothing was written',
  );
}

/** A path's kind without following a link: absent, a folder or a file; a link or anything else is refused. */
export function kindOf(path: string): 'absent' | 'folder' | 'file' {
  const stats = lstatOf(path);
  if (stats === undefined) return 'absent';
  if (stats.isSymbolicLink()) refuseLink(path);
  if (stats.isDirectory()) return 'folder';
  if (stats.isFile()) return 'file';
  throw new UsageError(`${path} is neither a file nor a folder: remove it or name another folder; nothing was written`);
}

/**
 * A regular file's bytes, read without following a link (O_NOFOLLOW): the first `limit`
 * of them when given, else all, unless there are more than `cap` (refused, unread).
 */
export function readNoFollow(path: string, bounds: { limit?: number; cap?: number } = {}): Buffer {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') refuseLink(path);
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new UsageError(`${path} is not a file: remove it or name another folder`);
    if (bounds.cap !== undefined && stats.size > bounds.cap) {
      throw new UsageError(
        `${path} holds ${stats.size} bytes, more than any export writes: remove it or name another folder`,
      );
    }
    if (bounds.limit === undefined) return readFileSync(fd);
    const buffer = Buffer.alloc(Math.min(bounds.limit, stats.size));
    return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0));
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether `gid` is the user's own private group: their primary group, numbered as they
 * are (how Debian, Ubuntu and Fedora make one per user, with a umask of 002 that leaves
 * every folder they make writable by it). Writable by that group is writable by them alone.
 */
function ownPrivateGroup(gid: number, uid: number): boolean {
  return gid === uid && gid === process.getgid?.();
}

/**
 * Refuses a folder the export writes in (DIR, a group's folder) that is not the exporting
 * user's alone: owned by someone else, or writable by others or by a group other than
 * their own private one, who could then swap a file or folder in it for a link between
 * the export's check and its write.
 */
export function checkPrivate(folder: string): void {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  const stats = lstatSync(folder);
  if (stats.uid !== uid) {
    throw new UsageError(
      `${folder} belongs to another user (uid ${stats.uid}): they could put a link in it while the export writes. ` +
        'Export into a folder of your own; nothing was written',
    );
  }
  if ((stats.mode & 0o002) !== 0 || ((stats.mode & 0o020) !== 0 && !ownPrivateGroup(stats.gid, uid))) {
    throw new UsageError(
      `${folder} can be written by ${(stats.mode & 0o002) !== 0 ? 'everyone' : 'its group'}, who could put a link in ` +
        `it while the export writes. Make it yours alone (chmod go-w ${shellWord(folder)}), or name another folder; ` +
        'nothing was written',
    );
  }
}
