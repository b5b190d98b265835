/**
 * Wiring for every command: from the common flags (--db, --database-url, --config,
 * --user) to the settings, the store and the Memory service. Commands use the Memory,
 * Access, Accounts and OAuth services only, never the store.
 */

import { readFileSync } from 'node:fs';
import type { PasswordCost } from '../access/accounts/passwords.js';
import type { App } from '../app.js';
import type { Caller } from '../memory/memory.js';
import { EngramError } from '../memory/model/errors.js';
import { normalizeUser, USER_CAP } from '../memory/model/users.js';
import { type Backend, SQLITE_DRIVER_NAMES, type SqliteDriverName } from '../open-store.js';
import { describeBackend } from './backend.js';
import { loadSettings, type Settings } from './config.js';
import type { Environment } from './environment.js';
import { assertMemoryExists, type Opening, prepareFolder, previewBackend } from './existing-memory.js';
import { log, UsageError } from './output.js';

export interface CommonOptions {
  readonly db?: string;
  readonly databaseUrl?: string;
  readonly poolSize?: number;
  readonly statementTimeout?: number;
  /** --sqlite-driver, checked by commander against SQLITE_DRIVER_NAMES. */
  readonly sqliteDriver?: SqliteDriverName;
  readonly config?: string;
  readonly user?: string;
  readonly json?: boolean;
}

/** The services a command uses (app.ts), never the store; with where they come from. */
export interface Context extends App {
  readonly settings: Settings;
  readonly user: string;
  /** The database in use, as a person reads it ("SQLite /path", "PostgreSQL postgres://…"). */
  readonly database: string;
  /** A dry run found no database at `database`, so it previews against an empty memory and creates nothing. */
  readonly absent: boolean;
}

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/**
 * Flags and environment first, then the config file, then the default SQLite path. At
 * each level a SQLite path and a PostgreSQL URL together are ambiguous: refused, not guessed.
 */
export function chooseBackend(options: CommonOptions, settings: Settings, environment: Environment): Backend {
  const levels = [
    {
      where: 'the flags and environment',
      db: options.db ?? environment.db,
      url: options.databaseUrl ?? environment.databaseUrl,
    },
    { where: 'the config file', db: settings.db, url: settings.databaseUrl },
  ];
  for (const { where, db, url } of levels) {
    if (db && url) {
      throw new EngramError(
        'INVALID_CONFIG',
        `${where} name both a SQLite file (--db / ENGRAM_DB / "db") and a PostgreSQL URL ` +
          '(--database-url / ENGRAM_DATABASE_URL / "databaseUrl"): keep only the one to use.',
      );
    }
    if (db) return { kind: 'sqlite', path: db };
    if (url) {
      return {
        kind: 'postgres',
        url,
        poolSize: options.poolSize ?? settings.poolSize,
        statementTimeoutMs: options.statementTimeout ?? settings.statementTimeoutMs,
      };
    }
  }
  return { kind: 'sqlite', path: environment.defaultDatabasePath };
}

/**
 * Which SQLite driver: --sqlite-driver, then ENGRAM_SQLITE_DRIVER, then the config file's
 * "sqliteDriver", else the store's own choice (better-sqlite3 when it loads, else node).
 */
export function chooseSqliteDriver(
  options: CommonOptions,
  settings: Settings,
  environment: Environment,
): SqliteDriverName | undefined {
  const fromEnvironment = environment.sqliteDriver;
  if (fromEnvironment !== undefined && !(SQLITE_DRIVER_NAMES as readonly string[]).includes(fromEnvironment)) {
    throw new UsageError(
      `ENGRAM_SQLITE_DRIVER=${fromEnvironment} names no SQLite driver: set it to ${SQLITE_DRIVER_NAMES.join(' or ')}, or unset it.`,
    );
  }
  return options.sqliteDriver ?? (fromEnvironment as SqliteDriverName | undefined) ?? settings.sqliteDriver;
}

/**
 * Whose memory: --user or ENGRAM_USER, then the config file's "user", then `local`; one
 * rule for every command (memory/model/users.ts), checked before anything is opened, so a typo
 * never opens another memory. The config file's "user" is checked with the file.
 */
export function chooseUser(options: CommonOptions, settings: Settings, environment: Environment): string {
  const raw = options.user ?? environment.user ?? settings.user ?? 'local';
  const user = normalizeUser(raw);
  if (user === undefined) {
    throw new UsageError(
      `${JSON.stringify(raw)} is not a valid user name (--user or ENGRAM_USER): use 1-${USER_CAP} characters ` +
        'without spaces, for example --user alice.',
    );
  }
  return user;
}

/**
 * What a command opens, worked out before anything is opened: the settings, the user, the
 * store (checked: for a command that only `reads`, a database that exists; for one that
 * creates, a folder that exists, or the default one made). Everything a person may have
 * got wrong in the flags, environment or config file is refused here.
 */
export interface ContextPlan {
  readonly settings: Settings;
  readonly user: string;
  readonly backend: Backend;
  readonly sqliteDriver: SqliteDriverName | undefined;
  readonly database: string;
  readonly absent: boolean;
  readonly opening: Opening;
}

/**
 * The plan for openContext: synchronous, so that `engram stdio` can answer a client's
 * opening, which needs the settings and the user but no store, before the store opens.
 * A command that only `reads` is refused when there is no database, rather than creating
 * one; one that `previews` (a dry run) then runs on an empty memory created nowhere; one
 * that creates does so in a folder that exists, or at the default path (existing-memory.ts).
 */
export function planContext(options: CommonOptions, environment: Environment, opening: Opening): ContextPlan {
  const settings = loadSettings(options.config, environment);
  const user = chooseUser(options, settings, environment);
  const chosen = chooseBackend(options, settings, environment);
  const sqliteDriver = chooseSqliteDriver(options, settings, environment);
  if (opening === 'reads') assertMemoryExists(chosen, environment.defaultDatabasePath);
  if (opening === 'creates' || opening === 'serves') prepareFolder(chosen, environment.defaultDatabasePath);
  const { backend, absent } = opening === 'previews' ? previewBackend(chosen) : { backend: chosen, absent: false };
  return { settings, user, backend, sqliteDriver, database: describeBackend(chosen), absent, opening };
}

/**
 * Opens the planned store and the services over it (app.ts), and purges trash past its
 * retention period (at every start, so expired entries never linger). `passwordCost` is
 * Io.passwordCost, a test's: the accounts hash new passwords with production's otherwise.
 */
export async function openPlannedContext(
  plan: ContextPlan,
  environment: Environment,
  passwordCost?: PasswordCost,
  /** Where the services report (refused sign-ins…): `engram serve`'s log, in its format; stderr otherwise. */
  report: (line: string) => void = log,
): Promise<Context> {
  const { settings, user, backend, sqliteDriver, database, absent, opening } = plan;
  // Loaded here, not with the settings: planContext's callers (engram stdio) answer before the store's code is needed.
  const { openApp } = await import('../app.js');
  const app = await openApp({
    backend,
    open: {
      accelerators: {
        groupCommit: settings.groupCommit,
        searchWorker: opening === 'serves',
        ...environment.storageAccelerators,
      },
      sqliteDriver,
    },
    policy: settings.policy,
    version: VERSION,
    access: { clients: settings.clients, passwordCost },
    log: report,
  });
  try {
    await app.memory.recovery.purgeExpired();
    await app.memory.review.expire();
  } catch (error) {
    // Expired trash and proposals wait for the next start; the command itself can still run.
    report(`expired trash not purged this time: ${(error as Error).message}`);
  }
  return { ...app, settings, database, absent, user };
}

/** Plans (planContext) and opens (openPlannedContext) at once: what every command but stdio does. */
export async function openContext(
  options: CommonOptions,
  environment: Environment,
  opening: Opening = 'creates',
  passwordCost?: PasswordCost,
  report: (line: string) => void = log,
): Promise<Context> {
  return openPlannedContext(planContext(options, environment, opening), environment, passwordCost, report);
}

/** The CLI acts as the local user, recorded in history as `cli`. */
export function cliCaller(context: Context): Caller {
  return { user: context.user, label: 'cli' };
}
