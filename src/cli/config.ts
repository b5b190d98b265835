/**
 * Settings a person chooses: a JSON config file (groups, caps, database path), then
 * environment variables, then command-line flags, each overriding the one before.
 * An invalid file is a clear startup error that names the field and says what fits.
 */

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { z } from 'zod';
import { CLIENT_NAME_CAP, REDIRECT_URIS_CAP } from '../access/oauth/clients.js';
import { redirectUriProblem } from '../access/oauth/redirect-uris.js';
import type { OAuthClient } from '../access/oauth/types.js';
import { parseRateLimits, type RateLimitItem } from '../access/rate-limits/rules.js';
import { MIN_METRICS_TOKEN_LENGTH } from '../http/metrics/access.js';
import { parsePublicUrl } from '../http/origins.js';
import type { WebSocketLimits } from '../http/websocket.js';
import { EngramError } from '../memory/model/errors.js';
import { isValidSegment } from '../memory/model/names.js';
import { DEFAULT_POLICY, type Policy } from '../memory/model/policy.js';
import { foldDescription, withoutByteOrderMark } from '../memory/model/text.js';
import { normalizeUser } from '../memory/model/users.js';
import { SQLITE_DRIVER_NAMES, type SqliteDriverName } from '../open-store.js';
import { readBoundedText } from './bounded-read.js';
import type { Environment } from './environment.js';
import { INTERVAL_SYNTAX, intervalMs } from './interval.js';
import { LOG_FORMATS, type LogFormat } from './log-formats.js';
import {
  isClientName,
  isPublicUrl,
  METRICS_TOKEN_CHARACTERS,
  POSTGRES_URL,
  plainConfig,
  rateLimitProblem,
} from './plain-config.js';

/** Most bytes a config file is read to: some hundred times what a config with many clients holds. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * zod is loaded the first time a config file is parsed that plain-config.ts does not
 * take, not at every start: it costs more start-up time than the rest of the CLI.
 * (require, not import(): parsing stays synchronous.)
 */
const loadZod = (): typeof z => (createRequire(import.meta.url)('zod') as typeof import('zod')).z;

function buildConfigSchema(z: typeof import('zod').z) {
  const WHOLE = { error: 'must be a positive integer' };
  const positiveInteger = z.number(WHOLE).int(WHOLE).positive(WHOLE);
  return z
    .object({
      groups: z
        .record(
          z
            .string()
            .refine(
              isValidSegment,
              'a group name is 1-64 characters of a-z 0-9 - . _, starting and ending with a letter or digit',
            ),
          z.string().trim().min(1, 'say in a few words what the group is for'),
        )
        .refine((groups) => Object.keys(groups).length > 0, 'configure at least one group')
        .optional(),
      entryCap: positiveInteger.optional(),
      userCap: positiveInteger.optional(),
      maxEntries: positiveInteger.optional(),
      historyCap: positiveInteger.optional(),
      descriptionCap: positiveInteger.optional(),
      maxNames: positiveInteger.optional(),
      trashRetentionDays: z.number().int().nonnegative().optional(),
      historyLimit: positiveInteger.optional(),
      proposalRetentionDays: positiveInteger.optional(),
      maxProposals: positiveInteger.optional(),
      groupCommit: z.boolean().optional(),
      sqliteDriver: z.enum(SQLITE_DRIVER_NAMES).optional(),
      db: z.string().min(1).optional(),
      databaseUrl: z.string().regex(POSTGRES_URL, 'a PostgreSQL URL starts with postgres://').optional(),
      poolSize: positiveInteger.optional(),
      statementTimeoutMs: z.number().int().nonnegative().optional(),
      user: z
        .string()
        .refine((user) => normalizeUser(user) !== undefined, 'a user name is 1-64 characters without spaces')
        .optional(),
      publicUrl: z
        .string()
        .refine(
          isPublicUrl,
          'give the origin clients reach Engram by, with no path, query or fragment, for example https://memory.example.com',
        )
        .optional(),
      clients: z
        .array(
          z
            .object({
              id: z.string().trim().min(1, 'give the client_id the app sends'),
              name: z
                .string()
                .refine(
                  isClientName,
                  `the app's name, one line of 1-${CLIENT_NAME_CAP} characters (shown on the consent page and in history)`,
                ),
              redirectUris: z
                .array(
                  z.string().superRefine((uri, context) => {
                    const problem = redirectUriProblem(uri);
                    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
                  }),
                )
                .min(1, 'list where the app may be sent back with its code')
                .max(REDIRECT_URIS_CAP, `at most ${REDIRECT_URIS_CAP} redirect URIs`),
            })
            .strict(),
        )
        .refine((clients) => new Set(clients.map((client) => client.id)).size === clients.length, 'each id once')
        .optional(),
      allowPrivateClientMetadata: z.boolean().optional(),
      rateLimit: z
        .string()
        .superRefine((text, context) => {
          const problem = rateLimitProblem(text);
          if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
        })
        .optional(),
      metrics: z.boolean().optional(),
      logFormat: z.enum(LOG_FORMATS).optional(),
      metricsToken: z
        .string()
        .min(
          MIN_METRICS_TOKEN_LENGTH,
          `a metrics token is at least ${MIN_METRICS_TOKEN_LENGTH} characters (make one with: openssl rand -hex 32)`,
        )
        .regex(
          METRICS_TOKEN_CHARACTERS,
          'a metrics token is printable ASCII without spaces (openssl rand -hex 32 makes one)',
        )
        .optional(),
      backupDir: z.string().min(1).optional(),
      backupEvery: z
        .string()
        .refine((text) => intervalMs(text) !== undefined, INTERVAL_SYNTAX)
        .optional(),
      backupKeep: positiveInteger.optional(),
      webSocket: z
        .object({
          socketsPerToken: positiveInteger.optional(),
          socketsPerUser: positiveInteger.optional(),
          sockets: positiveInteger.optional(),
          handshakes: positiveInteger.optional(),
        })
        .strict()
        .optional(),
    })
    .strict();
}

let configSchema: ReturnType<typeof buildConfigSchema> | undefined;

/** What the schema gives for a valid config file: its fields, checked, before they become Settings. */
export type ConfigData = z.infer<ReturnType<typeof buildConfigSchema>>;

export interface Settings {
  readonly policy: Policy;
  /** SQLite database path, when the config file names one. */
  readonly db?: string | undefined;
  /** PostgreSQL URL; when set, it is used instead of SQLite. */
  readonly databaseUrl?: string | undefined;
  readonly poolSize?: number | undefined;
  readonly statementTimeoutMs?: number | undefined;
  readonly user?: string | undefined;
  /** SQLite: let concurrent writes share one commit (default true). */
  readonly groupCommit?: boolean | undefined;
  /** SQLite: the driver, `better-sqlite3` or `node` (node:sqlite); else better-sqlite3 when it loads, else node. */
  readonly sqliteDriver?: SqliteDriverName | undefined;
  /** `engram serve`'s public URL (--public-url overrides it), as parsePublicUrl returns it. */
  readonly publicUrl?: URL | undefined;
  /** OAuth clients the operator lists, known without registering (`--auth oauth`). */
  readonly clients?: readonly OAuthClient[] | undefined;
  /**
   * Let Client ID Metadata Documents be fetched from loopback and private addresses (apps
   * on the operator's own network); refused by default, since any caller picks the URL.
   */
  readonly allowPrivateClientMetadata?: boolean | undefined;
  /** `engram serve` serves /metrics (--metrics overrides it). */
  readonly metrics?: boolean | undefined;
  /** `engram serve`'s log format (--log-format overrides it). */
  readonly logFormat?: LogFormat | undefined;
  /** The bearer token that may read /metrics from elsewhere than this machine (ENGRAM_METRICS_TOKEN overrides it). */
  readonly metricsToken?: string | undefined;
  /** `engram serve`'s caps on WebSocket sockets at /ws (per token, per user, in all, being opened), over the defaults. */
  readonly webSocket?: Partial<Pick<WebSocketLimits, 'socketsPerToken' | 'socketsPerUser' | 'sockets' | 'handshakes'>>;
  /** `engram serve`'s rate limits over the defaults ("rateLimit", as --rate-limit writes them); the flag goes over them. */
  readonly rateLimit?: readonly RateLimitItem[] | undefined;
  /** `engram serve`'s scheduled backups: their folder (--backup-dir overrides it). */
  readonly backupDir?: string | undefined;
  /** The time between two scheduled backups, in ms ("backupEvery": "6h"). */
  readonly backupEveryMs?: number | undefined;
  /** How many good scheduled backups are kept. */
  readonly backupKeep?: number | undefined;
}

function describeIssues(path: string, error: z.ZodError): string {
  const issues = error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join('.') : '(top level)';
    // A bad record key carries its own messages inside; zod's outer one says only "Invalid key".
    const message =
      issue.code === 'invalid_key' ? issue.issues.map((inner) => inner.message).join('; ') : issue.message;
    return `${where}: ${message}`;
  });
  return `invalid config file ${path}:\n  ${issues.join('\n  ')}`;
}

/**
 * The schema's data for `json`, or the refusal that words what is wrong with it (exported
 * for test/cli/plain-config.test.ts, which holds plain-config.ts to it).
 */
export function checkedBySchema(json: unknown, path: string): ConfigData {
  configSchema ??= buildConfigSchema(loadZod());
  const parsed = configSchema.safeParse(json);
  if (!parsed.success) throw new EngramError('INVALID_CONFIG', describeIssues(path, parsed.error));
  return parsed.data;
}

/** Parses config text (plain-config.ts, else the schema); `path` is only for messages. */
export function parseConfig(text: string, path: string): Settings {
  let json: unknown;
  try {
    json = JSON.parse(withoutByteOrderMark(text));
  } catch (error) {
    throw new EngramError('INVALID_CONFIG', `config file ${path} is not valid JSON: ${(error as Error).message}`);
  }
  const {
    db,
    user,
    databaseUrl,
    poolSize,
    statementTimeoutMs,
    groupCommit,
    sqliteDriver,
    publicUrl,
    clients,
    allowPrivateClientMetadata,
    backupDir,
    backupEvery,
    backupKeep,
    webSocket,
    rateLimit,
    metrics,
    metricsToken,
    logFormat,
    ...caps
  } = plainConfig(json) ?? checkedBySchema(json, path);
  return {
    policy: { ...DEFAULT_POLICY, ...caps },
    db,
    user,
    databaseUrl,
    poolSize,
    statementTimeoutMs,
    groupCommit,
    sqliteDriver,
    publicUrl: publicUrl === undefined ? undefined : parsePublicUrl(publicUrl),
    clients: clients?.map(
      (client): OAuthClient => ({
        id: client.id,
        kind: 'configured',
        name: foldDescription(client.name),
        redirectUris: client.redirectUris,
      }),
    ),
    allowPrivateClientMetadata,
    backupDir,
    backupEveryMs: backupEvery === undefined ? undefined : intervalMs(backupEvery),
    backupKeep,
    webSocket,
    rateLimit: rateLimit === undefined ? undefined : parseRateLimits(rateLimit),
    metrics,
    metricsToken,
    logFormat,
  };
}

/**
 * Reads the config file: `flag` (--config), else ENGRAM_CONFIG, each of which must exist,
 * else the default path, which may be absent and then means the defaults.
 */
export function loadSettings(
  flag: string | undefined,
  environment: Pick<Environment, 'config' | 'defaultConfigPath'>,
): Settings {
  const explicitPath = flag ?? environment.config;
  const path = explicitPath ?? environment.defaultConfigPath;
  if (explicitPath === undefined && !existsSync(path)) return { policy: DEFAULT_POLICY };
  const text = readBoundedText(path, {
    bytes: MAX_CONFIG_BYTES,
    what: 'a config file may hold',
    instead: 'a config file is a few kilobytes of JSON; check that --config or ENGRAM_CONFIG names it',
    name: `config file ${path}`,
    refuse: (message) => new EngramError('INVALID_CONFIG', message),
  });
  return parseConfig(text, path);
}
