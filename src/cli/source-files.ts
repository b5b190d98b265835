/**
 * Reads what `engram import --from KIND PATH` names — one file, or every file under a
 * folder — into the bytes the bridges parse (core/bridges receive contents, never paths
 * to open). Hidden files and folders (.git, .DS_Store, an editor's temporary files) are
 * not memory and are left out; so are symbolic links, which could lead anywhere.
 */

import { type Dirent, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { SourceFile } from '../core/bridges/plan.js';
import { UsageError } from './output.js';

/** Most bytes and files one import reads: far more than any memory holds, far less than a disk. */
const MAX_SOURCE_BYTES = 256 * 1024 * 1024;
const MAX_SOURCE_FILES = 20_000;

/** A file's bytes; 0 is stdin. */
function read(path: string | 0): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new UsageError(`cannot read ${path === 0 ? 'stdin' : path}: ${(error as Error).message}`);
  }
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
        const content = read(path);
        bytes += content.length;
        if (bytes > MAX_SOURCE_BYTES || files.length >= MAX_SOURCE_FILES) {
          throw new UsageError(`${root} holds more than 256 MB or 20,000 files: that is not a memory to import`);
        }
        files.push({ path: `${prefix}${child.name}`, bytes: content });
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
  if (named === '-' && !folder) return [{ path: 'stdin', bytes: read(0) }];
  if (!existsSync(named)) throw new UsageError(`${named} does not exist`);
  // A folder named by its index file (MEMORY.md): the folder is read.
  const path =
    folder && indexFile && basename(named) === indexFile && !statSync(named).isDirectory() ? dirname(named) : named;
  const isFolder = statSync(path).isDirectory();
  if (folder && !isFolder) throw new UsageError(`${path} is a file; this kind of import reads a folder`);
  if (!folder && isFolder) throw new UsageError(`${path} is a folder; this kind of import reads one file`);
  if (!isFolder) {
    const content = read(path);
    if (content.length > MAX_SOURCE_BYTES)
      throw new UsageError(`${path} is over 256 MB: that is not a memory to import`);
    return [{ path: basename(path), bytes: content }];
  }
  const files = walk(path);
  if (files.length === 0) throw new UsageError(`${path} is empty: there is nothing to import`);
  return files;
}
