/**
 * Everything the `engram` command takes from its environment, read here and only here,
 * once per run (by main): ENGRAM_DB, ENGRAM_DATABASE_URL, ENGRAM_CONFIG, ENGRAM_USER, the
 * accelerators' switches (ENGRAM_ACCEL_*, docs/accelerators.md), ENGRAM_SQLITE_DRIVER, `engram
 * serve`'s settings (ENGRAM_HOST, ENGRAM_PORT, ENGRAM_AUTH, ENGRAM_PUBLIC_URL,
 * ENGRAM_TRUST_PROXY, ENGRAM_RATE_LIMIT, ENGRAM_METRICS, ENGRAM_METRICS_TOKEN, ENGRAM_LOG_FORMAT: what a
 * container is configured by), the default paths of the
 * database and the config file, and a variable a flag names. Nothing outside src/cli
 * reads the environment: the library's stores are configured by their options alone.
 */

import { homedir } from 'node:os';
import { join } from 'node:path';
import { ACCELERATOR_NAMES, type AcceleratorName, type Accelerators } from '../open-store.js';

export interface Environment {
  /** ENGRAM_DB: the SQLite file, below --db and above the config file. */
  readonly db: string | undefined;
  /** ENGRAM_DATABASE_URL: a PostgreSQL URL, below --database-url and above the config file. */
  readonly databaseUrl: string | undefined;
  /** ENGRAM_CONFIG: the config file, below --config; unlike the default path, it must exist. */
  readonly config: string | undefined;
  /** ENGRAM_USER: whose memory, below --user and above the config file. */
  readonly user: string | undefined;
  /** ENGRAM_ACCEL_HTTP_FAST_PATH and ENGRAM_ACCEL_STDIO_FAST_PATH: each on unless set to 0. */
  readonly accelerators: { readonly httpFastPath: boolean; readonly stdioFastPath: boolean };
  /**
   * The storage accelerators switched off: ENGRAM_ACCEL_<NAME>=0, the name in capitals
   * with underscores (ENGRAM_ACCEL_INDEX_CACHE=0 for indexCache); the others keep their defaults.
   */
  readonly storageAccelerators: Accelerators;
  /** ENGRAM_SQLITE_DRIVER, as given (checked where it is used): below --sqlite-driver, above the config file. */
  readonly sqliteDriver: string | undefined;
  /**
   * `engram serve`'s settings, as given (checked where they are used, serve.ts): each below
   * its flag (--host, --port, --auth, --public-url, --trust-proxy, --rate-limit, --metrics, --log-format) and above the
   * config file; the metrics token has no flag (a secret on the command line is seen by every user of `ps`).
   */
  readonly serve: {
    readonly host: string | undefined;
    readonly port: string | undefined;
    readonly auth: string | undefined;
    readonly publicUrl: string | undefined;
    readonly trustProxy: string | undefined;
    readonly rateLimit: string | undefined;
    readonly metrics: string | undefined;
    readonly metricsToken: string | undefined;
    readonly logFormat: string | undefined;
  };
  /** `${XDG_DATA_HOME:-~/.local/share}/engram/memory.db`: the database when nothing names one. */
  readonly defaultDatabasePath: string;
  /** `${XDG_CONFIG_HOME:-~/.config}/engram/config.json`: the config file when nothing names one; may be absent. */
  readonly defaultConfigPath: string;
  /** A variable the person named on the command line (`engram chat --api-key-env NAME`); empty counts as unset. */
  variable(name: string): string | undefined;
}

/** Reads the environment once. Empty variables count as unset, but for ENGRAM_USER, which is checked as given. */
export function readEnvironment(env: NodeJS.ProcessEnv = process.env): Environment {
  const set = (value: string | undefined) => (value ? value : undefined);
  const home = () => homedir();
  return {
    db: set(env.ENGRAM_DB),
    databaseUrl: set(env.ENGRAM_DATABASE_URL),
    config: set(env.ENGRAM_CONFIG),
    user: env.ENGRAM_USER,
    accelerators: {
      httpFastPath: env.ENGRAM_ACCEL_HTTP_FAST_PATH !== '0',
      stdioFastPath: env.ENGRAM_ACCEL_STDIO_FAST_PATH !== '0',
    },
    storageAccelerators: Object.fromEntries(
      ACCELERATOR_NAMES.filter((name) => env[acceleratorVariable(name)] === '0').map((name) => [name, false]),
    ),
    sqliteDriver: set(env.ENGRAM_SQLITE_DRIVER),
    serve: {
      host: set(env.ENGRAM_HOST),
      port: set(env.ENGRAM_PORT),
      auth: set(env.ENGRAM_AUTH),
      publicUrl: set(env.ENGRAM_PUBLIC_URL),
      trustProxy: set(env.ENGRAM_TRUST_PROXY),
      rateLimit: set(env.ENGRAM_RATE_LIMIT),
      metrics: set(env.ENGRAM_METRICS),
      metricsToken: set(env.ENGRAM_METRICS_TOKEN),
      logFormat: set(env.ENGRAM_LOG_FORMAT),
    },
    defaultDatabasePath: join(env.XDG_DATA_HOME || join(home(), '.local', 'share'), 'engram', 'memory.db'),
    defaultConfigPath: join(env.XDG_CONFIG_HOME || join(home(), '.config'), 'engram', 'config.json'),
    variable: (name) => set(env[name]),
  };
}

/** The variable that switches a storage accelerator off: indexCache's is ENGRAM_ACCEL_INDEX_CACHE. */
export function acceleratorVariable(name: AcceleratorName): string {
  return `ENGRAM_ACCEL_${name.replace(/[A-Z]/g, (capital) => `_${capital}`).toUpperCase()}`;
}
