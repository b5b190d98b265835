/**
 * What end-to-end tests share: the built `engram` executable and a way to run it, a
 * fresh temporary folder per test (temp-dir.ts), and a direct look into a database file.
 */

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sqliteDriver } from '../../src/storage/sqlite/drivers.js';

// The temporary folders most end-to-end tests take from here (temp-dir.ts needs no build).
export { type Cleanup, type TempDir, tempDir } from './temp-dir.js';

/** The built CLI; end-to-end tests run it as a child process, as a user would. */
export const ENGRAM_CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

if (!existsSync(ENGRAM_CLI)) {
  throw new Error(`${ENGRAM_CLI} is missing: build first with npm run build`);
}

/**
 * The environment for a child `engram`: this one without any ENGRAM_* variable but the
 * accelerators' switches (ENGRAM_ACCEL_*, docs/accelerators.md: the suites run with them
 * off as well as on), with XDG_CONFIG_HOME pointing at `configHome` so no personal config
 * file is read.
 */
export function childEnv(configHome: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('ENGRAM_') || key.startsWith('ENGRAM_ACCEL_')),
  );
  return { ...env, XDG_CONFIG_HOME: configHome, ...extra };
}

export interface EngramRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `engram ARGS` to completion, feeding `input` (default: nothing) to its stdin. */
export function runEngram(args: readonly string[], env: NodeJS.ProcessEnv, input = ''): Promise<EngramRun> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [ENGRAM_CLI, ...args], { env }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') reject(error);
      else resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
    });
    child.stdin?.end(input);
  });
}

/**
 * Runs a read-only query on a database file directly, behind every front door, through the
 * SQLite driver a store here would choose (so that it runs where only node:sqlite does).
 */
export function queryDatabase<Row>(path: string, sql: string, ...params: unknown[]): Row[] {
  const db = new (sqliteDriver().Database)(path, { fileMustExist: true });
  try {
    db.pragma('query_only = ON');
    return db.prepare(sql).all(...params) as Row[];
  } finally {
    db.close();
  }
}

/** Marks and revisions the SQLite file's search index has not caught up with (search-backlog.ts), read directly. */
export function searchBacklogIn(path: string): number {
  const [row] = queryDatabase<{ pending: number }>(
    path,
    `SELECT (SELECT count(*) FROM search_pending)
       + (SELECT count(*) FROM revisions WHERE rowid > (SELECT revision FROM search_watermark)) AS pending`,
  );
  return row?.pending ?? 0;
}
