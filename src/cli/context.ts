/**
 * Wiring for every command: from the common flags (--db, --database-url, --config,
 * --user) to the settings, the store and the Memory service. Commands use the Memory
 * and Access services only, never the store.
 */

import { readFileSync } from 'node:fs';
import { type Access, createAccess } from '../core/access.js';
import type { Caller } from '../core/memory.js';
import { createMemory, type Memory } from '../core/memory.js';
import { type Backend, defaultDatabasePath, describeBackend, openBackend } from './backend.js';
import { loadSettings, type Settings } from './config.js';

export interface CommonOptions {
  readonly db?: string;
  readonly databaseUrl?: string;
  readonly poolSize?: number;
  readonly statementTimeout?: number;
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
  /** The database in use, as a person reads it ("SQLite /path", "PostgreSQL postgres://…"). */
  readonly database: string;
  close(): Promise<void>;
}

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** Flag, then environment, then config file, then the built-in default. */
export function chooseBackend(options: CommonOptions, settings: Settings, env: NodeJS.ProcessEnv): Backend {
  const url = options.databaseUrl ?? env.ENGRAM_DATABASE_URL ?? settings.databaseUrl;
  if (url) {
    const poolSize = options.poolSize ?? settings.poolSize;
    const statementTimeoutMs = options.statementTimeout ?? settings.statementTimeoutMs;
    return {
      kind: 'postgres',
      url,
      ...(poolSize === undefined ? {} : { poolSize }),
      ...(statementTimeoutMs === undefined ? {} : { statementTimeoutMs }),
    };
  }
  return { kind: 'sqlite', path: options.db ?? env.ENGRAM_DB ?? settings.db ?? defaultDatabasePath(env) };
}

/**
 * Opens the configured store and the services over it, and purges trash past its
 * retention period (at every start, so expired entries never linger).
 */
export async function openContext(options: CommonOptions, env: NodeJS.ProcessEnv = process.env): Promise<Context> {
  const settings = loadSettings(options.config, env);
  const backend = chooseBackend(options, settings, env);
  const store = await openBackend(backend, { historyLimit: settings.policy.historyLimit });
  const memory = createMemory({ store, policy: settings.policy });
  try {
    await memory.recovery.purgeExpired();
  } catch (error) {
    await store.close();
    throw error;
  }
  return {
    settings,
    memory,
    access: createAccess(store.tokens),
    database: describeBackend(backend),
    user: options.user ?? env.ENGRAM_USER ?? settings.user ?? 'local',
    close: () => store.close(),
  };
}

/** The CLI acts as the local user, recorded in history as `cli`. */
export function cliCaller(context: Context): Caller {
  return { user: context.user, label: 'cli' };
}
