/**
 * Makes durable, outside the timed window, what a server's last call left in the page
 * cache: every file under its folder, and the folders. The peers never fsync, and on ext4
 * (data=ordered) the next fsync on the filesystem, Engram's, flushed their writes too:
 * Engram's durable append took 3.8 ms right after an unsynced 5 MB rewrite of another
 * file, as the official memory server makes on each write at 5,000 entries, and 0.72 ms
 * without (measured side by side here). Settling every server after each of its calls
 * leaves each call paying for its own writes alone; a peer's call still returns before
 * its writes reach the disk, as it does without the benchmark.
 *
 * Synced is not yet settled where the filesystem trims freed blocks (ext4 mounted with
 * `discard`, as here): a rewrite frees the file's old blocks, which are trimmed after the
 * commit that freed them, and the next commit waits for that. Engram's append right after
 * a synced 5 MB rewrite of another file took 6.4–7.1 ms; with one more commit between,
 * 4.5 ms, as after settling a folder where nothing was rewritten (4.4 ms; interleaved in one
 * process, on a loaded machine). So settling ends with one more commit of its own, a small
 * file rewritten in place (which frees no block).
 */

import { closeSync, fsyncSync, openSync, readdirSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function settleWrites(folder: string): void {
  syncTree(folder);
  commitOnce(join(dirname(folder), '.settled'));
}

function syncTree(folder: string): void {
  for (const item of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, item.name);
    if (item.isDirectory()) syncTree(path);
    else if (item.isFile()) fsyncPath(path);
  }
  fsyncPath(folder);
}

/** One journal commit: the same byte count rewritten in place and synced, so no block is freed. */
function commitOnce(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'r+');
  } catch {
    fd = openSync(path, 'w');
  }
  try {
    writeSync(fd, String(Date.now() % 10), 0);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function fsyncPath(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return; // Gone since it was listed (a SQLite journal, a temporary file).
  }
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
