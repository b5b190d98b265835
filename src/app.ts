/**
 * The composition root: from a config (a store, or which database to open; the memory's
 * policy; the clock; the sign-in settings) to every service over that one store, each with
 * the same clock and log. The CLI, `engram serve`, the library and the tests build their
 * services here and nowhere else (docs/architecture.md, import rules). It loads no door:
 * the HTTP stack, the MCP SDK and PostgreSQL's driver load only where they are used.
 */

import { type Accounts, type AccountsOptions, createAccounts } from './access/accounts/accounts.js';
import type { PasswordCost } from './access/accounts/passwords.js';
import { Authorization, type AuthorizationOptions } from './access/oauth/authorization.js';
import { OAuthClients } from './access/oauth/clients.js';
import { OAuthTokens } from './access/oauth/tokens.js';
import type { OAuthClient } from './access/oauth/types.js';
import { RateLimits } from './access/rate-limits/rate-limits.js';
import type { RateLimitRules } from './access/rate-limits/rules.js';
import { type Access, createAccess } from './access/tokens/access.js';
import { createMemory, type Memory } from './memory/memory.js';
import type { Policy } from './memory/model/policy.js';
import { type Backend, type OpenOptions, openBackend } from './open-store.js';
import type { StorageBackend, StoreHealth } from './storage/backend.js';
import { sqliteBackupFiles } from './storage/sqlite/backup-files.js';
import type { SqliteDriverName } from './storage/sqlite/drivers.js';
import { Backups } from './transfer/backup/backups.js';
import { createTransfer, type Transfer } from './transfer/transfer.js';

export type { Backups };

/** How the services of sign-in behave: who may sign in how often, and the clients known without registering. */
export interface AccessConfig {
  /** OAuth clients the operator lists (the config file's "clients"), known without registering. */
  readonly clients?: readonly OAuthClient[] | undefined;
  /** Most clients that may register themselves (OAuthClients' default otherwise). */
  readonly maxRegistrations?: number | undefined;
  /** A test's cheaper scrypt parameters; production's otherwise (see AccountsOptions). */
  readonly passwordCost?: PasswordCost | undefined;
  /** When sign-ins are slowed down, over the defaults. */
  readonly throttle?: AccountsOptions['throttle'];
}

export interface AppConfig {
  /** The store every service shares; the app closes it. */
  readonly store: StorageBackend;
  /** The rules the memory enforces; what is left out is DEFAULT_POLICY's. */
  readonly policy?: Partial<Policy> | undefined;
  /** The one clock, in milliseconds, of the memory and of every sign-in service (Date.now unless told). */
  readonly now?: (() => number) | undefined;
  readonly access?: AccessConfig | undefined;
  /** Told of refused sign-ins and of "last used" times that could not be recorded (nothing by default). */
  readonly log?: ((line: string) => void) | undefined;
  /** How backups of the store are made (the `backups` service). */
  readonly backup?: BackupConfig | undefined;
}

/** How backups are made: the memory's SQLite file, if it is one, the driver that writes backup files, the version they record. */
export interface BackupConfig {
  /** The Engram version each backup records. */
  readonly version: string;
  /** The store's SQLite file, copied by SQLite itself; otherwise the store is read in one snapshot (PostgreSQL). */
  readonly sqlitePath?: string | undefined;
  /** The SQLite driver that writes and reads backup files (drivers.ts chooses by default). */
  readonly sqliteDriver?: SqliteDriverName | undefined;
}

/** Where an app opens its store: a backend as open-store.ts names it, opened with these options. */
export interface OpenAppConfig extends Omit<AppConfig, 'store' | 'backup'> {
  /** The version backups record; the backend and driver come from the rest of this config. */
  readonly version?: string | undefined;
  readonly backend: Backend;
  readonly open?: Omit<OpenOptions, 'onWarning'> | undefined;
}

/** OAuth (`engram serve --auth oauth`): the token service, and the client and consent services the server completes. */
export interface OAuthServices {
  /** Issues, refreshes, checks and revokes tokens; also lists and revokes connected apps. */
  readonly tokens: OAuthTokens;
  /** A client service over the registered and configured clients (each call builds one); serve gives it the metadata document fetcher. */
  clients(fetchDocument?: (url: URL) => Promise<unknown>): OAuthClients;
  /** The consent step over those clients, for the server's issuer and resource. */
  authorization(clients: OAuthClients, server: Pick<AuthorizationOptions, 'issuer' | 'resource'>): Authorization;
}

/** Every service, over one store. */
export interface App {
  readonly memory: Memory;
  /** Export, import (documents and other memory systems' files) and wipe, over the memory. */
  readonly transfer: Transfer;
  /** The bearer tokens of `engram serve --auth token`. */
  readonly access: Access;
  /** Users, their passwords, sign-in and browser sessions. */
  readonly accounts: Accounts;
  readonly oauth: OAuthServices;
  /**
   * The rate limits `rules` set (`engram serve`), counted in the store when it is shared
   * by several servers (PostgreSQL), else in this process's memory.
   */
  rateLimits(rules: RateLimitRules): Promise<RateLimits>;
  /** Whether the store answers with the schema this Engram writes (/readyz), and its group commits (/metrics). */
  readonly health: StoreHealth;
  /** Backups of the store: take, verify, restore into it, and the schedule of `engram serve`. */
  readonly backups: Backups;
  /** Closes the store. */
  close(): Promise<void>;
}

/** The sign-in services over the store: static tokens, accounts and OAuth, on the memory's clock. */
function accessServices(
  store: StorageBackend,
  config: AccessConfig,
  now: () => number,
  log: (line: string) => void,
): Pick<App, 'access' | 'accounts' | 'oauth'> {
  const touchFailed = (what: string) => (error: unknown) =>
    log(`could not record when ${what} was last used: ${(error as Error).message}`);
  const clients = (fetchDocument?: (url: URL) => Promise<unknown>) =>
    new OAuthClients(store.oauth, {
      now,
      configured: config.clients ?? [],
      maxRegistrations: config.maxRegistrations,
      fetchDocument,
    });
  // Which client ids the token endpoint still knows; telling fetches nothing.
  const knownClients = clients();
  return {
    access: createAccess(store.tokens, { now, onTouchError: touchFailed('a token') }),
    accounts: createAccounts(store, {
      now,
      log,
      passwordCost: config.passwordCost,
      throttle: config.throttle,
      onTouchError: touchFailed('a session'),
    }),
    oauth: {
      tokens: new OAuthTokens(store.oauth, {
        now,
        onTouchError: touchFailed('an app'),
        isKnownClient: (clientId) => knownClients.isKnown(clientId),
      }),
      clients,
      authorization: (clients, server) => new Authorization(store.oauth, clients, { now, ...server }),
    },
  };
}

/** The services over a store already open. */
export function createApp(config: AppConfig): App {
  const { store } = config;
  const log = config.log ?? (() => {});
  const memory = createMemory({
    store,
    proposals: store.proposals,
    policy: config.policy,
    now: config.now,
    openedLog: {
      onError: (error) =>
        log(
          `could not record when entries were last opened: ${error instanceof Error ? error.message : String(error)}`,
        ),
    },
  });
  const backup = config.backup ?? { version: 'unknown' };
  return {
    memory,
    transfer: createTransfer(memory),
    ...accessServices(store, config.access ?? {}, memory.rules.now, log),
    // The in-process counters (rate-limiter-flexible, some 200 KB) load only for `engram serve`, not at every start.
    rateLimits: async (rules) =>
      RateLimits.create(
        store.rateCounters ?? new (await import('./access/rate-limits/memory-counters.js')).MemoryRateCounters(),
        rules,
      ),
    health: {
      ready: () => store.ready(),
      observeCommitBatches: (observer) => store.observeCommitBatches?.(observer),
    },
    backups: new Backups({
      files: sqliteBackupFiles(backup.sqliteDriver),
      version: backup.version,
      now: memory.rules.now,
      sqlitePath: backup.sqlitePath,
      store: async () => store,
      // The store is the app's: it closes it.
      close: async () => {},
    }),
    // The openings noted and not yet written go to the store before it closes.
    close: async () => {
      try {
        await memory.close();
      } finally {
        await store.close();
      }
    },
  };
}

/**
 * The backups of the memory at `backend`, without the other services: a SQLite file is
 * copied by SQLite and never opened as a store (`engram backup` neither upgrades nor purges
 * it); the store is opened only when needed (PostgreSQL's snapshot, a restore's target),
 * and closed by the services' close().
 */
export function openBackups(backend: Backend, config: BackupConfig & { readonly open?: OpenOptions }): Backups {
  let opened: Promise<StorageBackend> | undefined;
  return new Backups({
    files: sqliteBackupFiles(config.sqliteDriver),
    version: config.version,
    now: Date.now,
    sqlitePath: backend.kind === 'sqlite' ? backend.path : undefined,
    store: () => {
      opened ??= openBackend(backend, { ...config.open, sqliteDriver: config.sqliteDriver });
      return opened;
    },
    close: async () => {
      if (opened !== undefined) await (await opened).close();
    },
  });
}

/** Opens the configured store, then the services over it. */
export async function openApp(config: OpenAppConfig): Promise<App> {
  const store = await openBackend(config.backend, { ...config.open, onWarning: config.log });
  try {
    const backup: BackupConfig = {
      version: config.version ?? 'unknown',
      sqlitePath: config.backend.kind === 'sqlite' ? config.backend.path : undefined,
      sqliteDriver: config.open?.sqliteDriver,
    };
    return createApp({ ...config, store, backup });
  } catch (error) {
    await store.close();
    throw error;
  }
}
