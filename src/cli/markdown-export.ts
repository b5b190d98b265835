/**
 * `engram export --format markdown DIR`: the memory as a folder a person can read, diff
 * and keep in git — one file per live entry at DIR/group/slug.md and a README.md index
 * (core/bridges/markdown.ts says what they hold). Files are readable by their owner alone.
 *
 * DIR must be empty or new, or hold an earlier markdown export (its README.md says so):
 * that one is refreshed — the entries' files rewritten, the files of entries that are
 * gone removed — and anything else in it (.git, notes of the owner's) is left alone.
 * Any other folder is refused: an export never writes over files it did not make.
 */

import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { MARKDOWN_INDEX, MARKDOWN_INDEX_TITLE, type MarkdownFile } from '../core/bridges/markdown.js';
import { UsageError } from './output.js';

/** True when `dir`'s README.md is the index of a markdown export. */
function isEarlierExport(dir: string): boolean {
  const index = join(dir, MARKDOWN_INDEX);
  return existsSync(index) && readFileSync(index, 'utf8').startsWith(`${MARKDOWN_INDEX_TITLE}\n`);
}

/** The group/slug.md files of an earlier export in `dir` (visible folders, .md files only). */
function earlierEntryFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((child) => child.isDirectory() && !child.name.startsWith('.'))
    .flatMap((group) =>
      readdirSync(join(dir, group.name), { withFileTypes: true })
        .filter((child) => child.isFile() && child.name.endsWith('.md'))
        .map((child) => `${group.name}/${child.name}`),
    );
}

/** Writes the export's files into `dir`; returns how many files of gone entries were removed. */
export function writeMarkdownExport(dir: string, files: readonly MarkdownFile[]): number {
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new UsageError(`${dir} is a file: name a folder to export into`);
    if (readdirSync(dir).length > 0 && !isEarlierExport(dir)) {
      throw new UsageError(`${dir} is not empty and holds no earlier markdown export: name a new or empty folder`);
    }
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const keep = new Set(files.map((file) => file.path));
  let removed = 0;
  for (const path of earlierEntryFiles(dir)) {
    if (keep.has(path)) continue;
    unlinkSync(join(dir, path));
    removed++;
    const group = dirname(join(dir, path));
    if (readdirSync(group).length === 0) rmdirSync(group);
  }
  for (const file of files) {
    const path = join(dir, file.path);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, file.text, { mode: 0o600 });
    // The mode given applies only to a new file.
    chmodSync(path, 0o600);
  }
  return removed;
}
