/**
 * Reads what `engram import --from KIND PATH` names — one file, or every file under a
 * folder — into the bytes the bridges parse (transfer/bridges receive contents, never paths
 * to open). Hidden files and folders (.git, .DS_Store, an editor's temporary files) are
 * not memory and are left out; so are symbolic links, which could lead anywhere. Sizes
 * are checked before anything is read: a file or folder past the limit is refused unread.
 */

import { type Dirent, existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { formatCount } from '../memory/model/text.js';
import type { SourceFile } from '../transfer/bridges/plan.js';
import { readBounded } from './bounded-read.js';
import { UsageError } from './output.js';

/** Most bytes and files one import reads: far more than any memory holds, far less than a disk. */
export const MAX_SOURCE_BYTES = 256 * 1024 * 1024;
const MAX_SOURCE_FILES = 20_000;

/** A file's bytes ("-" is stdin), within the most one import reads. */
function read(path: string): Buffer {
  return readBounded(path, {
    bytes: MAX_SOURCE_BYTES,
    what: 'one import reads (256 MB)',
    instead: 'that is not a memory to import; name the memory file itself, or import its parts one at a time',
  });
}

/** Every regular, non-hidden file under `root`, by its `/`-separated path below it, in name order. */
function walk(root: string): SourceFile[] {
  const files: SourceFile[] = [];
  let bytes = 0;
  const visit = (folder: string, prefix: string) => {
    let children: Dirent[];
    try {
      children = readdirSync(folder, { withFileTypes: true });
    } catch (error) {
      throw new UsageError(`cannot read the folder ${folder}: ${(error as Error).message}`);
    }
    children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const child of children) {
      if (child.name.startsWith('.')) continue;
      const path = join(folder, child.name);
      if (child.isDirectory()) visit(path, `${prefix}${child.name}/`);
      else if (child.isFile()) {
        // Counted by the sizes the folder lists, before any file is read.
        bytes += statSync(path).size;
        if (bytes > MAX_SOURCE_BYTES || files.length >= MAX_SOURCE_FILES) {
          throw new UsageError(
            `${root} holds more than ${formatCount(MAX_SOURCE_BYTES)} bytes (256 MB) or ${formatCount(MAX_SOURCE_FILES)} files: ` +
              'that is not a memory to import; name the memory folder itself (for markdown, the folder an export wrote)',
          );
        }
        files.push({ path: `${prefix}${child.name}`, bytes: read(path) });
      }
    }
  };
  visit(root, '');
  return files;
}

/**
 * The files of PATH for a bridge: a folder's files (folder bridges), or one file
 * (named by its base name; "-" is stdin); a folder may be named by its index file. A missing path, the wrong kind of path, and an empty folder
 * are refused here, before anything is parsed.
 */
export function readSource(named: string, folder: boolean, indexFile?: string): SourceFile[] {
  if (named === '-' && !folder) return [{ path: 'stdin', bytes: read('-') }];
  if (!existsSync(named)) throw new UsageError(`${named} does not exist`);
  // A folder named by its index file (MEMORY.md): the folder is read.
  const path =
    folder && indexFile && basename(named) === indexFile && !statSync(named).isDirectory() ? dirname(named) : named;
  const isFolder = statSync(path).isDirectory();
  if (folder && !isFolder) throw new UsageError(`${path} is a file; this kind of import reads a folder`);
  if (!folder && isFolder) throw new UsageError(`${path} is a folder; this kind of import reads one file`);
  if (!isFolder) return [{ path: basename(path), bytes: read(path) }];
  const files = walk(path);
  if (files.length === 0) throw new UsageError(`${path} is empty: there is nothing to import`);
  return files;
}
