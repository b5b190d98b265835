/**
 * The built CLI run as a user who may not write what root may, for the tests of files and
 * folders Engram cannot write: `nobody` when the tests run as root (who may write anything),
 * else the user running them. Root can only do that when every folder above the built CLI
 * is searchable by others (a checkout cloned into `mktemp -d`, mode 0700, is not).
 */

import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { childEnv, ENGRAM_CLI, type EngramRun } from './engram.js';

const NOBODY = 65_534;

/** Whether another user may run the built CLI: every folder above it searchable by others. */
function othersMayRun(path: string): boolean {
  for (let at = dirname(path); ; at = dirname(at)) {
    if ((statSync(at).mode & 0o001) === 0) return false;
    if (at === dirname(at)) return true;
  }
}

/** Whether engramUnprivileged can run here; a test that needs it is skipped, with a notice, when not. */
export function unprivilegedRunnable(test: string): boolean {
  const runnable = process.getuid?.() !== 0 || othersMayRun(ENGRAM_CLI);
  if (!runnable) process.stderr.write(`${test}: skipped: user nobody cannot reach ${ENGRAM_CLI}\n`);
  return runnable;
}

/** The built CLI as a user who may not write what root may: `nobody` under root, else this user. */
export function engramUnprivileged(configHome: string, ...args: string[]): Promise<EngramRun> {
  const asNobody = process.getuid?.() === 0 ? { uid: NOBODY, gid: NOBODY } : {};
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [ENGRAM_CLI, ...args],
      { env: childEnv(configHome), ...asNobody },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') reject(error);
        else resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
      },
    );
  });
}
