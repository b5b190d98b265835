/**
 * One `npm run build` at a time in a checkout: build.mjs builds into one fixed folder
 * (dist.building/, so that chunk names come out the same) and moves it into dist/ file by
 * file, so two builds at once would write into each other's folder and could leave dist/
 * half of one and half of the other. A build first creates dist.building.lock, which only
 * one process can create (a link, which fails if the file is there; the file already
 * holds its process id), and removes it when it ends, failed or not. A second build finds
 * the lock and stops, saying which process holds it. A build stopped by a signal (Ctrl-C,
 * kill) leaves its lock behind: its process gone, the next build takes the lock over.
 */

import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The lock's name, in the checkout's folder beside dist/. */
export const LOCK = 'dist.building.lock';

/** Thrown when another build holds the lock; its message says what to do. */
export class BuildRunning extends Error {}

/** Whether process `pid` is running (one we may not signal is running too). */
function running(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** The holder a lock file names ({ pid, since }), or undefined if there is no such file. */
function holderOf(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The error for a lock held by the running process `holder`. */
function buildRunning(holder, lock) {
  return new BuildRunning(
    `npm run build: another build is running in this checkout (process ${holder.pid}, since ${holder.since}); ` +
      `wait for it to end, then run it again. If no build is running, remove ${lock}.`,
  );
}

/**
 * Takes the build lock of the checkout at `root` for this process, to be given back with
 * the function it returns. Throws BuildRunning when a running process holds it.
 */
export function takeBuildLock(root) {
  const lock = join(root, LOCK);
  const mine = `${lock}.${process.pid}`;
  writeFileSync(mine, JSON.stringify({ pid: process.pid, since: new Date().toISOString() }));
  try {
    for (;;) {
      try {
        linkSync(mine, lock);
        return () => {
          if (holderOf(lock)?.pid === process.pid) rmSync(lock, { force: true });
        };
      } catch (error) {
        if (error.code !== 'EEXIST') throw error;
      }
      const holder = holderOf(lock);
      if (holder === undefined) continue;
      if (running(holder.pid)) throw buildRunning(holder, lock);
      // Left by a killed build. Moved aside under a name of this process before it is removed,
      // so that of two builds finding it at once only one removes it, never the other's new lock.
      const aside = `${lock}.stale.${process.pid}`;
      try {
        renameSync(lock, aside);
      } catch (error) {
        if (error.code === 'ENOENT') continue;
        throw error;
      }
      const moved = holderOf(aside);
      if (moved.pid !== holder.pid) {
        // Another build took the lock in between: put it back.
        try {
          linkSync(aside, lock);
        } catch (error) {
          if (error.code !== 'EEXIST') throw error;
        }
      }
      rmSync(aside);
    }
  } finally {
    rmSync(mine, { force: true });
  }
}
