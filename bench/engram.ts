/**
 * The built `engram` command as benchmarks run it, as a user would: a database seeded
 * with `engram import` of a generated export document, and a config that lifts the
 * per-user cap (4 MiB by default) so that 100,000 entries of 1 KiB fit.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exportDocument, type Subject } from './content.js';

/** dist-bench/bench/ -> the repository's dist/cli/main.js. */
export const ENGRAM_CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface EngramFiles {
  /** The SQLite file, used unless `databaseUrl` names a PostgreSQL database. */
  readonly db: string;
  readonly databaseUrl?: string | undefined;
  readonly config: string;
  /** The environment for every `engram` child: no ENGRAM_* variable, no personal config. */
  readonly env: NodeJS.ProcessEnv;
}

/** The per-user, entry and history caps lifted, in every Engram the benchmarks run (and the SDK peer's). */
export const BENCH_CAPS = { userCap: 2 ** 40, maxEntries: 2 ** 30, historyCap: 2 ** 40 } as const;

export function engramFiles(folder: string, databaseUrl?: string, settings: Record<string, unknown> = {}): EngramFiles {
  if (!existsSync(ENGRAM_CLI)) throw new Error(`${ENGRAM_CLI} is missing: build first (npm run build)`);
  const config = join(folder, 'config.json');
  writeFileSync(config, JSON.stringify({ ...BENCH_CAPS, ...settings }));
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('ENGRAM_')));
  return { db: join(folder, 'engram.db'), databaseUrl, config, env: { ...env, XDG_CONFIG_HOME: folder } };
}

/** The common flags of every `engram` command. */
export function engramFlags(files: EngramFiles): string[] {
  const store = files.databaseUrl ? ['--database-url', files.databaseUrl] : ['--db', files.db];
  return [...store, '--config', files.config];
}

/** Seeds the database with `engram import` of an export document holding the subjects. */
export function seedEngram(files: EngramFiles, list: readonly Subject[]): void {
  const document = join(dirname(files.config), 'seed.json');
  writeFileSync(document, JSON.stringify(exportDocument(list)));
  execFileSync(process.execPath, [ENGRAM_CLI, 'import', document, ...engramFlags(files)], {
    env: files.env,
    stdio: ['ignore', 'ignore', 'inherit'],
    maxBuffer: 1 << 30,
  });
}

/**
 * `engram serve` with token auth as benchmarks run it: the per-token rate limit counted as
 * by default (so its cost is measured) but never reached: a benchmark sends each token
 * thousands of calls a second, far past the 1,200 a minute a person's assistant is allowed.
 */
export const TOKEN_AUTH_FLAGS: readonly string[] = ['--auth', 'token', '--rate-limit', 'mcp=1000000/s'];
