/**
 * `engram export --format markdown DIR`: the memory as a folder a person can read, diff
 * and keep in git — one file per live entry at DIR/group/slug.md and a README.md index
 * (transfer/bridges/markdown.ts says what they hold). Files are readable by their owner alone.
 *
 * DIR must be empty or new, or hold an earlier markdown export (its record, or its
 * README.md, says so): that one is refreshed — the entries' files rewritten, the files of
 * entries that are gone removed — and anything else in it (.git, notes of the owner's) is
 * left alone. Any other folder is refused: an export never writes over files it did not make.
 * An export made before the record existed (README.md but no record) is trusted once, as
 * exports then trusted it: its README.md and visible group/*.md files are its own, rewritten
 * or removed, and recorded from then on.
 *
 * What lies in DIR may have been put there by someone else, so the export never follows a
 * symbolic link in it (a file, a group's folder, README.md, the record): it refuses, naming
 * the path. It reads with O_NOFOLLOW, writes each file to a new hidden file (O_EXCL, which
 * no link passes) renamed over the old one, and deletes only files it recorded writing
 * (markdown-export-record.ts). Between a check and a write a path is resolved again, so
 * DIR and each group folder must be the exporting user's own and writable by no one else:
 * then no one else can swap a link in meanwhile. A file edited since the last export is
 * neither overwritten nor deleted unless `force`: the refusal names each one and what would
 * happen to it. Everything is checked before anything is written.
 */

import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmdirSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { MARKDOWN_INDEX, MARKDOWN_INDEX_TITLE, type MarkdownFile } from '../transfer/bridges/markdown.js';
import { checkPrivate, kindOf, lstatOf, readNoFollow } from './markdown-export-paths.js';
import {
  EXPORT_RECORD,
  type ExportRecord,
  fingerprint,
  isExportPath,
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

/** The most bytes of the record read: far more than the record of any memory's export. */
const RECORD_READ_CAP = 64 * 1024 * 1024;

/** Whether the file at `path` (a regular file) holds `expected`: compared by size first, read only when that matches. */
function holds(path: string, expected: WrittenFile): boolean {
  if (lstatSync(path).size !== expected.bytes) return false;
  const actual = fingerprint(readNoFollow(path));
  return actual.bytes === expected.bytes && actual.sha256 === expected.sha256;
}

/** What an earlier export in DIR left: its record, and the files trusted as its own without one. */
interface EarlierExport {
  readonly record: ExportRecord;
  /** An export made before the record existed: its README.md and visible group/*.md files, taken as its own once. */
  readonly trusted: ReadonlySet<string>;
}

/** The earlier export in `root`, by its record or, kept by an export made before the record existed, its README.md; undefined if none is there. */
function earlierExport(root: string): EarlierExport | undefined {
  const recordPath = join(root, EXPORT_RECORD);
  const recordKind = kindOf(recordPath);
  if (recordKind === 'folder') {
    throw new UsageError(
      `${recordPath} is a folder where the export keeps its record of what it wrote: move it away; nothing was written`,
    );
  }
  if (recordKind === 'file') {
    const text = readNoFollow(recordPath, { cap: RECORD_READ_CAP }).toString('utf8');
    return { record: parseRecord(text, recordPath), trusted: new Set() };
  }
  const index = join(root, MARKDOWN_INDEX);
  const title = Buffer.from(`${MARKDOWN_INDEX_TITLE}\n`);
  if (kindOf(index) !== 'file' || !readNoFollow(index, { limit: title.length }).equals(title)) return undefined;
  return { record: new Map(), trusted: new Set([MARKDOWN_INDEX, ...visibleEntryFiles(root)]) };
}

/** The group/slug.md files in `root`: regular files in visible folders, as an export writes them (links are not followed). */
function visibleEntryFiles(root: string): string[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((group) => group.isDirectory() && !group.name.startsWith('.'))
    .flatMap((group) =>
      readdirSync(join(root, group.name), { withFileTypes: true })
        .filter((file) => file.isFile())
        .map((file) => `${group.name}/${file.name}`),
    )
    .filter(isExportPath);
}

/** The group folder a file goes in, if it has one, checked: absent, or a folder of the user's alone, never a link. */
function checkFolderOf(root: string, path: string): void {
  if (!path.includes('/')) return;
  const folder = join(root, dirname(path));
  const kind = kindOf(folder);
  if (kind === 'file') {
    throw new UsageError(
      `${folder} is a file where the export puts a group's folder: move it away; nothing was written`,
    );
  }
  if (kind === 'folder') checkPrivate(folder);
}

/** What would be lost: files this export overwrites or deletes that are not what the last export wrote there. */
function findChanges(
  root: string,
  files: readonly MarkdownFile[],
  earlier: EarlierExport,
): { changed: Changed[]; gone: string[] } {
  const { record, trusted } = earlier;
  const changed: Changed[] = [];
  for (const file of files) {
    checkFolderOf(root, file.path);
    const path = join(root, file.path);
    const kind = kindOf(path);
    if (kind === 'absent') continue;
    if (kind === 'folder') throw new UsageError(`${path} is a folder where the export writes a file: move it away`);
    if (trusted.has(file.path) || holds(path, fingerprint(file.text))) continue;
    const written = record.get(file.path);
    if (written === undefined) changed.push({ path: file.path, how: 'not-recorded', action: 'overwrite' });
    else if (!holds(path, written)) changed.push({ path: file.path, how: 'edited', action: 'overwrite' });
  }
  const keep = new Set(files.map((file) => file.path));
  const gone: string[] = [];
  for (const earlierPath of new Set([...record.keys(), ...trusted])) {
    if (keep.has(earlierPath)) continue;
    checkFolderOf(root, earlierPath);
    const path = join(root, earlierPath);
    const kind = kindOf(path);
    if (kind !== 'file') continue;
    gone.push(earlierPath);
    const written = record.get(earlierPath);
    if (written !== undefined && !holds(path, written))
      changed.push({ path: earlierPath, how: 'edited', action: 'delete' });
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

/** The folder to export into, made (0700) if new; its real path, or a refusal of a folder that is not an export's or not the user's alone. */
function openFolder(dir: string): { root: string; earlier: EarlierExport } {
  const none: EarlierExport = { record: new Map(), trusted: new Set() };
  const stats = lstatOf(dir);
  if (stats === undefined) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return { root: realpathSync(dir), earlier: none };
  }
  // DIR itself is the person's to name, a link included; what lies inside it is not.
  const root = realpathSync(dir);
  if (!lstatSync(root).isDirectory()) throw new UsageError(`${dir} is a file: name a folder to export into`);
  if (readdirSync(root).length === 0) {
    checkPrivate(root);
    return { root, earlier: none };
  }
  const earlier = earlierExport(root);
  if (earlier === undefined) {
    throw new UsageError(`${dir} is not empty and holds no earlier markdown export: name a new or empty folder`);
  }
  checkPrivate(root);
  return { root, earlier };
}

/**
 * Writes the export's files into `dir`, removes the files of entries that are gone, and
 * keeps the record of what it wrote. Files changed since the last export are refused
 * unless `force`.
 */
export function writeMarkdownExport(dir: string, files: readonly MarkdownFile[], force: boolean): MarkdownExportResult {
  const { root, earlier } = openFolder(dir);
  const { changed, gone } = findChanges(root, files, earlier);
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
