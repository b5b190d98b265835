/**
 * The files of another memory, read in the browser for the import page: a folder picked
 * with `webkitdirectory` (paths below the folder picked, `/`-separated, in name order, as
 * `engram import --from` reads a folder) or one file. Hidden files (.git, .DS_Store) are
 * not memory and binary files are not text: both are left out, and named, so the page can
 * say so. Nothing read here is ever run or rendered as HTML.
 */

import type { SourceText } from './api/transfer';

export interface PickedSource {
  readonly files: SourceText[];
  /** Files left out: hidden ones, and ones that are not UTF-8 text. */
  readonly hidden: string[];
  readonly binary: string[];
}

/** The path of a picked file below the folder picked (webkitRelativePath starts with the folder's own name). */
function pathOf(file: File, folder: boolean): string {
  const relative = file.webkitRelativePath;
  if (!folder || relative === '') return file.name;
  return relative.split('/').slice(1).join('/');
}

/** The text of a file, or undefined when it is not UTF-8 text (the server's own rule: no NUL either). */
async function textOf(file: File): Promise<string | undefined> {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(await file.arrayBuffer());
    return text.includes('\u0000') ? undefined : text;
  } catch {
    return undefined;
  }
}

export async function readPicked(list: FileList | null, folder: boolean): Promise<PickedSource> {
  const picked: PickedSource = { files: [], hidden: [], binary: [] };
  for (const file of list ?? []) {
    const path = pathOf(file, folder);
    if (path.split('/').some((part) => part.startsWith('.'))) {
      picked.hidden.push(path);
      continue;
    }
    const text = await textOf(file);
    if (text === undefined) picked.binary.push(path);
    else picked.files.push({ path, text });
  }
  picked.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return picked;
}

/** `person=people, project=areas` as a table, or the first pair that is not TYPE=GROUP. */
export function readMap(text: string): Record<string, string> | { readonly wrong: string } {
  const table: Record<string, string> = {};
  for (const pair of text.split(/[,\n]/)) {
    if (pair.trim() === '') continue;
    const equals = pair.indexOf('=');
    const type = pair.slice(0, equals).trim();
    const group = pair.slice(equals + 1).trim();
    if (equals < 0 || type === '' || group === '') return { wrong: pair.trim() };
    table[type] = group;
  }
  return table;
}
