/**
 * `engram export --format markdown DIR`: the memory as a folder a person can read, diff
 * and keep in git — one file per live entry at DIR/group/slug.md and a README.md index
 * (core/bridges/markdown.ts says what they hold). Files are readable by their owner alone.
 *
 * DIR must be empty or new, or hold an earlier markdown export (its record, or its
 * README.md, says so): that one is refreshed — the entries' files rewritten, the files of
 * entries that are gone removed — and anything else in it (.git, notes of the owner's) is
 * left alone. Any other folder is refused: an export never writes over files it did not make.
 *
 * What lies in DIR may have been put there by someone else, so the export never follows a
 * symbolic link in it (a file, a group's folder, README.md, the record): it refuses, naming
 * the path. It reads with O_NOFOLLOW, writes each file to a new hidden file (O_EXCL, which
 * no link passes) renamed over the old one, and deletes only files it recorded writing
 * (markdown-export-record.ts). A file edited since the last export is neither overwritten
 * nor deleted unless `force`: the refusal names each one and what would happen to it.
 * Everything is checked before anything is written.
 */

import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  renameSync,
  rmdirSync,
  type Stats,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { MARKDOWN_INDEX, MARKDOWN_INDEX_TITLE, type MarkdownFile } from '../core/bridges/markdown.js';
import {
  EXPORT_RECORD,
  type ExportRecord,
  fingerprint,
  parseRecord,
  recordText,
  type WrittenFile,
} from './markdown-export-record.js';
import { UsageError } from './output.js';

/** What an export did besides writing the entries' files. */
export interface MarkdownExportResult {
  /** How many files of entries no longer in memory were removed. */
  readonly removed: number;
  /** The files edited since the last export that `force` overwrote or removed. */
  readonly overwritten: readonly string[];
}

/** A file the export would overwrite or delete although it is not what the last export wrote there. */
interface Changed {
  readonly path: string;
  readonly how: 'edited' | 'not-recorded';
  readonly action: 'overwrite' | 'delete';
}

/** The most changed files a refusal lists one by one. */
const LISTED_CHANGES = 20;

function lstatOf(path: string): Stats | undefined {
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
function kindOf(path: string): 'absent' | 'folder' | 'file' {
  const stats = lstatOf(path);
  if (stats === undefined) return 'absent';
  if (stats.isSymbolicLink()) refuseLink(path);
  if (stats.isDirectory()) return 'folder';
  if (stats.isFile()) return 'file';
  throw new UsageError(`${path} is neither a file nor a folder: remove it or name another folder; nothing was written`);
}

/** The most bytes of the record read: far more than the record of any memory's export. */
const RECORD_READ_CAP = 64 * 1024 * 1024;

/**
 * A regular file's bytes, read without following a link (O_NOFOLLOW): the first `limit`
 * of them when given, else all, unless there are more than `cap` (refused, unread).
 */
function readNoFollow(path: string, bounds: { limit?: number; cap?: number } = {}): Buffer {
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

/** Whether the file at `path` (a regular file) holds `expected`: compared by size first, read only when that matches. */
function holds(path: string, expected: WrittenFile): boolean {
  if (lstatSync(path).size !== expected.bytes) return false;
  const actual = fingerprint(readNoFollow(path));
  return actual.bytes === expected.bytes && actual.sha256 === expected.sha256;
}

/** The record of the export in `root`: its record file, or an empty one for an export that kept none; undefined if none is there. */
function earlierExport(root: string): ExportRecord | undefined {
  const recordPath = join(root, EXPORT_RECORD);
  if (kindOf(recordPath) === 'file') {
    return parseRecord(readNoFollow(recordPath, { cap: RECORD_READ_CAP }).toString('utf8'), recordPath);
  }
  const index = join(root, MARKDOWN_INDEX);
  const title = Buffer.from(`${MARKDOWN_INDEX_TITLE}\n`);
  if (kindOf(index) === 'file' && readNoFollow(index, { limit: title.length }).equals(title)) return new Map();
  return undefined;
}

/** The group folder a file goes in, if it has one, checked: a folder or absent, never a link. */
function checkFolderOf(root: string, path: string): void {
  if (!path.includes('/')) return;
  const folder = join(root, dirname(path));
  if (kindOf(folder) === 'file') {
    throw new UsageError(
      `${folder} is a file where the export puts a group's folder: move it away; nothing was written`,
    );
  }
}

/** What would be lost: files this export overwrites or deletes that are not what the last export wrote there. */
function findChanges(
  root: string,
  files: readonly MarkdownFile[],
  record: ExportRecord,
): { changed: Changed[]; gone: string[] } {
  const changed: Changed[] = [];
  for (const file of files) {
    checkFolderOf(root, file.path);
    const path = join(root, file.path);
    const kind = kindOf(path);
    if (kind === 'absent') continue;
    if (kind === 'folder') throw new UsageError(`${path} is a folder where the export writes a file: move it away`);
    if (holds(path, fingerprint(file.text))) continue;
    const written = record.get(file.path);
    if (written === undefined) changed.push({ path: file.path, how: 'not-recorded', action: 'overwrite' });
    else if (!holds(path, written)) changed.push({ path: file.path, how: 'edited', action: 'overwrite' });
  }
  const keep = new Set(files.map((file) => file.path));
  const gone: string[] = [];
  for (const [recorded, written] of record) {
    if (keep.has(recorded)) continue;
    checkFolderOf(root, recorded);
    const path = join(root, recorded);
    const kind = kindOf(path);
    if (kind !== 'file') continue;
    gone.push(recorded);
    if (!holds(path, written)) changed.push({ path: recorded, how: 'edited', action: 'delete' });
  }
  return { changed, gone };
}

function describeChange(change: Changed): string {
  const how =
    change.how === 'edited' ? 'edited since the last export' : 'not written by an earlier export (a file of yours?)';
  const action =
    change.action === 'overwrite'
      ? 'this export would overwrite it'
      : 'its entry is no longer in memory, so this export would delete it';
  return `  ${change.path}: ${how}; ${action}`;
}

function refuseChanges(dir: string, changed: readonly Changed[]): never {
  const listed = changed.slice(0, LISTED_CHANGES).map(describeChange);
  if (changed.length > LISTED_CHANGES) listed.push(`  and ${changed.length - LISTED_CHANGES} more`);
  throw new UsageError(
    `${changed.length} file(s) in ${dir} differ from what the last export wrote; nothing was written:\n` +
      `${listed.join('\n')}\n` +
      'Keep what you want of them first (copy it elsewhere, or into memory with engram write), then export again ' +
      'with --force to overwrite them.',
  );
}

/** Makes the group folder of `path` (0700) unless it is there, and checks it is a folder and no link. */
function makeFolderOf(root: string, path: string): void {
  if (!path.includes('/')) return;
  const folder = join(root, dirname(path));
  if (kindOf(folder) === 'absent') mkdirSync(folder, { mode: 0o700 });
  if (kindOf(folder) !== 'folder') throw new UsageError(`${folder} is not a folder: move it away`);
}

/**
 * Writes `text` at `path` below `root` (0600): into a new hidden file beside it, which
 * O_EXCL opens only if nothing, not even a link, is there, then renamed over the old file,
 * which replaces a link rather than writing through it.
 */
function writeNoFollow(root: string, path: string, text: string): void {
  makeFolderOf(root, path);
  const target = join(root, path);
  const temporary = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(
    temporary,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    writeFileSync(fd, text);
    fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
  try {
    if (kindOf(target) === 'folder') throw new UsageError(`${target} is a folder where the export writes a file`);
    renameSync(temporary, target);
  } catch (error) {
    unlinkSync(temporary);
    throw error;
  }
}

/** Deletes a file the last export wrote, and its group folder once empty; a link met on the way is refused. */
function removeNoFollow(root: string, path: string): void {
  checkFolderOf(root, path);
  const target = join(root, path);
  if (kindOf(target) !== 'file') return;
  unlinkSync(target);
  const folder = dirname(target);
  if (readdirSync(folder).length === 0) rmdirSync(folder);
}

/** The folder to export into, made (0700) if new; its real path, or a refusal of a folder that is not an export's. */
function openFolder(dir: string): { root: string; record: ExportRecord } {
  const stats = lstatOf(dir);
  if (stats === undefined) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return { root: realpathSync(dir), record: new Map() };
  }
  // DIR itself is the person's to name, a link included; what lies inside it is not.
  const root = realpathSync(dir);
  if (!lstatSync(root).isDirectory()) throw new UsageError(`${dir} is a file: name a folder to export into`);
  if (readdirSync(root).length === 0) return { root, record: new Map() };
  const record = earlierExport(root);
  if (record === undefined) {
    throw new UsageError(`${dir} is not empty and holds no earlier markdown export: name a new or empty folder`);
  }
  return { root, record };
}

/**
 * Writes the export's files into `dir`, removes the files of entries that are gone, and
 * keeps the record of what it wrote. Files changed since the last export are refused
 * unless `force`.
 */
export function writeMarkdownExport(dir: string, files: readonly MarkdownFile[], force: boolean): MarkdownExportResult {
  const { root, record } = openFolder(dir);
  const { changed, gone } = findChanges(root, files, record);
  if (changed.length > 0 && !force) refuseChanges(dir, changed);
  for (const path of gone) removeNoFollow(root, path);
  const written = new Map<string, WrittenFile>();
  for (const file of files) {
    writeNoFollow(root, file.path, file.text);
    written.set(file.path, fingerprint(file.text));
  }
  writeNoFollow(root, EXPORT_RECORD, recordText(written));
  return { removed: gone.length, overwritten: changed.map((change) => change.path) };
}
