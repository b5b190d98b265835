/**
 * The record a Markdown export keeps of what it wrote (DIR/.engram-export.json: each
 * file's size and SHA-256), so that the next export into the same folder can tell a file
 * edited since from one it wrote itself, and removes only files it wrote. The record lies
 * in a folder others may write, so it is read as untrusted: a path in it that is not one
 * an export writes (README.md, group/slug.md) makes it refused, never followed.
 */

import { createHash } from 'node:crypto';
import { MARKDOWN_INDEX } from '../transfer/bridges/markdown.js';
import { UsageError } from './output.js';

export const EXPORT_RECORD = '.engram-export.json';
const RECORD_FORMAT = 'engram-markdown-export';

/** What an export wrote at one path. */
export interface WrittenFile {
  readonly bytes: number;
  readonly sha256: string;
}

/** What the last export wrote, by path below DIR. */
export type ExportRecord = ReadonlyMap<string, WrittenFile>;

/** The size and hash of a file's content. */
export function fingerprint(content: string | Buffer): WrittenFile {
  const buffer = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return { bytes: buffer.length, sha256: createHash('sha256').update(buffer).digest('hex') };
}

/** Whether `path` is one an export writes: README.md, or group/slug.md with neither part hidden. */
export function isExportPath(path: string): boolean {
  return path === MARKDOWN_INDEX || /^[^./][^/]*\/[^./][^/]*\.md$/.test(path);
}

/** The record's text: the format, then each file written, in path order. */
export function recordText(files: ExportRecord): string {
  const sorted = [...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${JSON.stringify({ format: RECORD_FORMAT, version: 1, files: Object.fromEntries(sorted) }, null, 2)}\n`;
}

/** Reads a record's text; `where` names it in a refusal. */
export function parseRecord(text: string, where: string): ExportRecord {
  const refuse = (why: string) =>
    new UsageError(
      `${where} is not a record Engram's Markdown export wrote (${why}): remove it and export again ` +
        '(files of entries no longer in memory are then left in place), or name another folder; nothing was written',
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw refuse('not JSON');
  }
  const { format, files } = (parsed ?? {}) as { format?: unknown; files?: unknown };
  if (format !== RECORD_FORMAT || typeof files !== 'object' || files === null || Array.isArray(files)) {
    throw refuse(`no "format": "${RECORD_FORMAT}" with its "files"`);
  }
  const record = new Map<string, WrittenFile>();
  for (const [path, written] of Object.entries(files)) {
    const { bytes, sha256 } = (written ?? {}) as { bytes?: unknown; sha256?: unknown };
    if (!isExportPath(path)) throw refuse(`${JSON.stringify(path)} is not a path an export writes`);
    if (!Number.isSafeInteger(bytes) || typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256)) {
      throw refuse(`the size or hash of ${path} is not one Engram writes`);
    }
    record.set(path, { bytes: bytes as number, sha256 });
  }
  return record;
}
