/**
 * Wiring for every command: from the common flags (--db, --config, --user) to the
 * settings, the store and the Memory service. Commands use the Memory service only.
 */

import { readFileSync } from 'node:fs';
import { type Access, createAccess } from '../core/access.js';
import type { Caller } from '../core/memory.js';
import { createMemory, type Memory } from '../core/memory.js';
import { openSqliteStore } from '../store/sqlite/index.js';
import { loadSettings, type Settings } from './config.js';

export interface CommonOptions {
  readonly db?: string;
  readonly config?: string;
  readonly user?: string;
  readonly json?: boolean;
}

export interface Context {
  readonly settings: Settings;
  readonly memory: Memory;
  /** The bearer tokens of `engram serve --auth token`. */
  readonly access: Access;
  readonly user: string;
  /** The database path in use. */
  readonly db: string | undefined;
  close(): Promise<void>;
}

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** Flag, then environment, then config file, then the built-in default. */
export function openContext(options: CommonOptions, env: NodeJS.ProcessEnv = process.env): Context {
  const settings = loadSettings(options.config, env);
  const db = options.db ?? env.ENGRAM_DB ?? settings.db;
  const historyLimit = settings.policy.historyLimit;
  const store = openSqliteStore(db === undefined ? { historyLimit } : { path: db, historyLimit });
  const memory = createMemory({ store, policy: settings.policy });
  return {
    settings,
    memory,
    access: createAccess(store.tokens),
    db,
    user: options.user ?? env.ENGRAM_USER ?? settings.user ?? 'local',
    close: () => store.close(),
  };
}

/** The CLI acts as the local user, recorded in history as `cli`. */
export function cliCaller(context: Context): Caller {
  return { user: context.user, label: 'cli' };
}
