/**
 * Reading a file the user names (or stdin) under a size limit, without loading more than
 * the limit: a regular file's size is checked before it is read, and anything else (stdin,
 * a pipe, a device) is read in chunks that stop as soon as they pass the limit. A file past
 * it is refused with its name, its size and the limit, and what to do instead — never read
 * whole first (a 10 GB file named by mistake would take the process's memory before the check).
 */

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { formatCount } from '../memory/model/text.js';
import { UsageError } from './output.js';

export interface ReadLimit {
  /** Most bytes read. */
  readonly bytes: number;
  /** What the limit is, after "over the N bytes": "an import reads". */
  readonly what: string;
  /** What to do instead, after the refusal. */
  readonly instead: string;
  /** How the file is named to the reader: "config file x.json", "--new-file x.txt" (default: the path, or stdin). */
  readonly name?: string;
  /** The error a refusal is (default: a usage error). */
  readonly refuse?: (message: string) => Error;
}

/** Bytes asked of each read: a chunk, as readFileSync reads. */
const CHUNK_BYTES = 64 * 1024;

/** How long to wait for a non-blocking stdin that has nothing yet, before asking again (not spinning a core). */
const EMPTY_WAIT_MS = 10;

const waitCell = new Int32Array(new SharedArrayBuffer(4));

/**
 * Reads `fd` into one buffer that doubles as it fills, never past the limit and a byte,
 * refusing as soon as more than the limit has come: `null` once past it. However small
 * the reads (a pipe handing over a few bytes at a time), it holds at most twice what came.
 */
function readChunks(fd: number, limit: ReadLimit): Buffer | null {
  const most = limit.bytes + 1;
  let buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, most));
  let total = 0;
  for (;;) {
    if (total === buffer.length) {
      const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, most));
      buffer.copy(grown, 0, 0, total);
      buffer = grown;
    }
    let read: number;
    try {
      read = readSync(fd, buffer, total, Math.min(CHUNK_BYTES, buffer.length - total), null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A non-blocking stdin with nothing yet: wait for it, as readFileSync does, a few milliseconds at a time.
      if (code === 'EAGAIN') {
        Atomics.wait(waitCell, 0, 0, EMPTY_WAIT_MS);
        continue;
      }
      // Windows' end of a pipe.
      if (code === 'EOF') break;
      throw error;
    }
    if (read === 0) break;
    total += read;
    if (total > limit.bytes) return null;
  }
  return buffer.subarray(0, total);
}

/** The bytes of `path` ("-" is stdin), at most `limit.bytes` of them, or a refusal saying so. */
export function readBounded(path: string, limit: ReadLimit): Buffer {
  const stdin = path === '-';
  const name = limit.name ?? (stdin ? 'stdin' : path);
  const refuse = limit.refuse ?? ((message: string) => new UsageError(message));
  const most = `${formatCount(limit.bytes)} bytes ${limit.what}`;
  let fd: number;
  try {
    fd = stdin ? 0 : openSync(path, 'r');
  } catch (error) {
    throw refuse(`cannot read ${name}: ${(error as Error).message}`);
  }
  try {
    const stats = fstatSync(fd);
    if (stats.isDirectory()) throw refuse(`cannot read ${name}: it is a folder, not a file`);
    if (stats.isFile() && stats.size > limit.bytes) {
      throw refuse(`${name} is ${formatCount(stats.size)} bytes, over the ${most}: ${limit.instead}`);
    }
    const bytes = readChunks(fd, limit);
    if (bytes === null) throw refuse(`${name} holds more than the ${most}: ${limit.instead}`);
    return bytes;
  } catch (error) {
    // What the system said (EIO, …), not a refusal of ours.
    if (error instanceof Error && 'syscall' in error) throw refuse(`cannot read ${name}: ${error.message}`);
    throw error;
  } finally {
    if (!stdin) closeSync(fd);
  }
}

/** The same, as UTF-8 text. */
export function readBoundedText(path: string, limit: ReadLimit): string {
  return readBounded(path, limit).toString('utf8');
}
