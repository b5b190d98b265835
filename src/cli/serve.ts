/**
 * `engram serve`: the memory over HTTP for browser and remote MCP clients (llama.cpp
 * WebUI, Claude Code) and the REST API under /api. Prints where to connect (one JSON line
 * with --json, for a script that started it on --port 0) and the rate limits in force
 * (--rate-limit over the config file's, over the defaults of its auth mode), logs one line
 * per request on stderr (for people, or JSON: server-log.ts), serves /metrics with --metrics,
 * purges expired trash every hour, turns V8's pretenuring off so that each request's
 * objects die young under load (keep-requests-young.ts), and on SIGINT/SIGTERM lets
 * requests in flight finish and closes the store. It writes through the Io it is given,
 * and stops when that Io says (the process's signals by default), so that a test can run
 * it inside its own process.
 */

import { type Command, InvalidArgumentError, Option } from 'commander';
import type { OAuthClients } from '../access/oauth/clients.js';
import type { RateLimits } from '../access/rate-limits/rate-limits.js';
import {
  formatRate,
  parseRateLimits,
  type RateLimitItem,
  type RateLimitRules,
  RateLimitSyntaxError,
  resolveRateLimits,
} from '../access/rate-limits/rules.js';
import type { ServeAuth } from '../http/auth.js';
import { MIN_METRICS_TOKEN_LENGTH } from '../http/metrics/access.js';
import { assertSafeBinding, assertSafePublicUrl, parseAllowedOrigin, parsePublicUrl } from '../http/origins.js';
import type { RunningHttpServer } from '../http/server.js';
import type { BackupSchedule } from '../transfer/backup/schedule.js';
import {
  addBackupScheduleOptions,
  type BackupScheduleFlags,
  checkBackupFlags,
  startBackupSchedule,
} from './backup-schedule.js';
import { loadSettings } from './config.js';
import { type CommonOptions, type Context, openContext, VERSION } from './context.js';
import type { Environment } from './environment.js';
import { keepRequestsYoung } from './keep-requests-young.js';
import { LOG_FORMATS, type LogFormat } from './log-formats.js';
import { EXIT_REFUSED, type Io, processStopRequested, reportFailure, UsageError } from './output.js';
import { createServerLog, type ServerLog } from './server-log.js';
import { readTlsFiles, type TlsFiles } from './tls-files.js';
import { scheduleTrashPurge, type TrashPurge } from './trash-purge.js';

interface ServeOptions extends CommonOptions, BackupScheduleFlags {
  readonly host: string;
  readonly port: number;
  readonly auth: 'none' | 'token' | 'oauth';
  readonly allowOrigin: string[];
  readonly publicUrl?: URL;
  readonly trustProxy?: boolean;
  readonly rateLimit?: RateLimitItem[];
  readonly tlsCert?: string;
  readonly tlsKey?: string;
  readonly metrics?: boolean;
  readonly logFormat?: LogFormat;
}

const DEFAULT_PORT = 8787;
const AUTH_MODES = ['none', 'token', 'oauth'] as const;

/** The flags a variable may stand in for, and the variable's name. */
const SERVE_VARIABLES = {
  host: 'ENGRAM_HOST',
  port: 'ENGRAM_PORT',
  auth: 'ENGRAM_AUTH',
  publicUrl: 'ENGRAM_PUBLIC_URL',
  trustProxy: 'ENGRAM_TRUST_PROXY',
  rateLimit: 'ENGRAM_RATE_LIMIT',
  metrics: 'ENGRAM_METRICS',
  logFormat: 'ENGRAM_LOG_FORMAT',
} as const;
type ServeVariable = keyof typeof SERVE_VARIABLES;

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) throw new InvalidArgumentError('give a port number from 0 to 65535.');
  return port;
}

/** --public-url, checked as it is parsed: a bad one is a usage error (exit 2). */
function publicUrlOption(value: string): URL {
  try {
    return parsePublicUrl(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

/** --rate-limit, checked as it is parsed: a bad one is a usage error (exit 2) that says how to write it. */
function rateLimitOption(value: string): RateLimitItem[] {
  try {
    return parseRateLimits(value);
  } catch (error) {
    if (error instanceof RateLimitSyntaxError) throw new InvalidArgumentError(error.message);
    throw error;
  }
}

/** The rate limits in force, as the start-up message lists them: only those a door of this server counts. */
function describeRateLimits(rules: RateLimitRules, auth: ServeOptions['auth']): string {
  const per = { auth: 'per address', 'sign-in': 'per user', mcp: 'per token', api: 'per token' } as const;
  const names = auth === 'none' ? (['mcp', 'api'] as const) : (['auth', 'sign-in', 'mcp', 'api'] as const);
  const on = names.flatMap((name) => {
    const rate = rules[name];
    return rate === undefined ? [] : [`${name} ${formatRate(rate)} ${per[name]}`];
  });
  return on.length === 0 ? 'none (--rate-limit on turns them on)' : on.join(', ');
}

/** Each --allow-origin, checked as it is parsed: a bad one is a usage error (exit 2), like a bad --port. */
function collectOrigin(value: string, previous: string[]): string[] {
  try {
    return [...previous, parseAllowedOrigin(value)];
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

function connectHelp(
  server: RunningHttpServer,
  options: ServeOptions,
  context: Context,
  publicUrl: URL | undefined,
  rateLimits: RateLimitRules,
  metrics: { readonly token?: string | undefined } | undefined,
): string {
  const url = `${server.origin}/mcp`;
  const tokens = options.auth !== 'none';
  const header = options.auth === 'token' ? ' --header "Authorization: Bearer <token>"' : '';
  const who = {
    token: 'each token acts for its own user; create one with: engram token create --user NAME',
    oauth:
      'apps connect with OAuth and sign in as a user with a password (engram user add NAME); ' +
      'tokens of engram token create work too',
    none: `no auth: pages and programs on this computer act as user ${JSON.stringify(context.user)}`,
  }[options.auth];
  return [
    `Engram is serving MCP at ${url}`,
    `  (${who}; database ${context.database})`,
    ...(publicUrl === undefined
      ? []
      : [`  Public URL:      ${publicUrl.origin}/mcp (give this one to ChatGPT and Claude)`]),
    `  llama.cpp WebUI: add the MCP server ${url}${tokens ? ' with the header Authorization: Bearer <token>' : ''}`,
    `  Claude Code:     claude mcp add --transport http engram ${url}${header}`,
    `  WebSocket:       ${server.origin.replace(/^http/, 'ws')}/ws${tokens ? '?access_token=<token>' : ''}`,
    `  Web UI:          ${server.origin}/ (see and fix what your assistants remember)`,
    `  Rate limits:     ${describeRateLimits(rateLimits, options.auth)}`,
    ...(metrics === undefined
      ? []
      : [
          `  Metrics:         ${server.origin}/metrics (Prometheus; from this machine${metrics.token === undefined ? '' : ', or with the metrics token'})`,
        ]),
    '  Stop with Ctrl-C.',
    '',
  ].join('\n');
}

/** With --json, where to connect as one JSON line, for a script that started the server (say on --port 0). */
function connectJson(
  server: RunningHttpServer,
  options: ServeOptions,
  context: Context,
  publicUrl: URL | undefined,
): string {
  const url = `${server.origin}/mcp`;
  const who = options.auth === 'none' ? { user: context.user } : {};
  const reached = publicUrl === undefined ? {} : { publicUrl: `${publicUrl.origin}/mcp` };
  return `${JSON.stringify({ url, ...reached, auth: options.auth, ...who, database: context.database })}\n`;
}

/** A variable's value read as its flag's would be; a value the flag would refuse is a usage error naming the variable. */
function fromVariable(name: ServeVariable, value: string): ServeOptions[ServeVariable] {
  const refuse = (why: string) => new UsageError(`${SERVE_VARIABLES[name]}=${value}: ${why} Or unset it.`);
  switch (name) {
    case 'host':
      return value;
    case 'port':
      try {
        return parsePort(value);
      } catch (error) {
        throw refuse((error as Error).message);
      }
    case 'auth':
      if (!(AUTH_MODES as readonly string[]).includes(value)) throw refuse(`give ${AUTH_MODES.join(', ')}.`);
      return value as ServeOptions['auth'];
    case 'publicUrl':
      try {
        return parsePublicUrl(value);
      } catch (error) {
        throw refuse((error as Error).message);
      }
    case 'logFormat':
      if (!(LOG_FORMATS as readonly string[]).includes(value)) throw refuse(`give ${LOG_FORMATS.join(' or ')}.`);
      return value as LogFormat;
    case 'trustProxy':
    case 'metrics':
      if (value !== '1' && value !== '0' && value !== 'true' && value !== 'false')
        throw refuse('give 1 or 0 (or true or false).');
      return value === '1' || value === 'true';
    case 'rateLimit':
      try {
        return parseRateLimits(value);
      } catch (error) {
        if (error instanceof RateLimitSyntaxError) throw refuse(error.message);
        throw error;
      }
  }
}

/**
 * The options with ENGRAM_HOST, ENGRAM_PORT, ENGRAM_AUTH, ENGRAM_PUBLIC_URL,
 * ENGRAM_TRUST_PROXY, ENGRAM_RATE_LIMIT, ENGRAM_METRICS and ENGRAM_LOG_FORMAT put in for the flags not given: a
 * flag wins over its variable, a
 * variable over the config file and the defaults.
 */
function withVariables(options: ServeOptions, command: Command, environment: Environment): ServeOptions {
  const resolved: Record<string, unknown> = { ...options };
  for (const name of Object.keys(SERVE_VARIABLES) as ServeVariable[]) {
    const value = environment.serve[name];
    const source = command.getOptionValueSource(name);
    if (value !== undefined && (source === undefined || source === 'default'))
      resolved[name] = fromVariable(name, value);
  }
  return resolved as unknown as ServeOptions;
}

/** /metrics when on, with its token: ENGRAM_METRICS_TOKEN over the config file's; a short token is refused. */
function metricsSettings(
  on: boolean,
  environment: Environment,
  configured: string | undefined,
): { readonly token?: string | undefined } | undefined {
  if (!on) return undefined;
  const token = environment.serve.metricsToken;
  if (token !== undefined && (token.length < MIN_METRICS_TOKEN_LENGTH || !/^[\x21-\x7e]+$/.test(token)))
    throw new UsageError(
      `ENGRAM_METRICS_TOKEN: a metrics token is at least ${MIN_METRICS_TOKEN_LENGTH} printable characters without ` +
        'spaces (make one with: openssl rand -hex 32). Or unset it.',
    );
  return { token: token ?? configured };
}

async function serve(
  given: ServeOptions,
  command: Command,
  environment: Environment,
  io: Io,
  finish: (exitCode: number) => void,
): Promise<void> {
  let context: Context | undefined;
  let publicUrl: URL | undefined;
  let tls: TlsFiles | undefined;
  let rateLimitRules: RateLimitRules;
  let rateLimits: RateLimits;
  let metrics: { readonly token?: string | undefined } | undefined;
  let serverLog: ServerLog | undefined;
  let options = given;
  try {
    options = withVariables(given, command, environment);
    // Every refusal of the setup comes before the store is opened (or created).
    assertSafeBinding(options.host, options.auth);
    const settings = loadSettings(options.config, environment);
    publicUrl = options.publicUrl ?? settings.publicUrl;
    metrics = metricsSettings(options.metrics ?? settings.metrics ?? false, environment, settings.metricsToken);
    checkBackupFlags(options, settings);
    assertSafePublicUrl(options.host, options.auth, publicUrl);
    tls = readTlsFiles(options.tlsCert, options.tlsKey);
    serverLog = await createServerLog(options.logFormat ?? settings.logFormat ?? 'human', (text) => io.stderr(text));
    context = await openContext(options, environment, 'serves', undefined, serverLog.log);
    // The config file's setting, then the flag's (or its variable's), over the defaults for this auth mode.
    rateLimitRules = resolveRateLimits(options.auth, [context.settings.rateLimit ?? [], options.rateLimit ?? []]);
    rateLimits = await context.rateLimits(rateLimitRules);
  } catch (error) {
    await context?.close();
    serverLog?.log.close();
    finish(reportFailure(error, false, io));
    return;
  }
  const { log } = serverLog;
  let clients: OAuthClients | undefined;
  let server: RunningHttpServer;
  let backupSchedule: BackupSchedule | undefined;
  try {
    backupSchedule = await startBackupSchedule(context, options, context.settings, log);
  } catch (error) {
    await context.close();
    log.close();
    finish(reportFailure(error, false, io));
    return;
  }
  try {
    // Loaded only for OAuth: the guarded fetch of client metadata documents (an SSRF door).
    clients =
      options.auth === 'oauth'
        ? context.oauth.clients(
            (await import('../access/oauth/http/client-metadata.js')).createClientMetadataFetcher({
              allowPrivateAddresses: context.settings.allowPrivateClientMetadata ?? false,
              log,
            }),
          )
        : undefined;
    const auth: ServeAuth =
      clients !== undefined
        ? { mode: 'oauth', clients }
        : options.auth === 'token'
          ? { mode: 'token' }
          : { mode: 'none', user: context.user };
    // Many requests at once: every request's objects should die young (keep-requests-young.ts).
    keepRequestsYoung();
    // The HTTP stack and the MCP SDK load only when serving, to keep the CLI quick to start.
    const { startHttpServer } = await import('../http/server.js');
    server = await startHttpServer({
      app: context,
      onUnexpectedError: serverLog.internalError,
      version: VERSION,
      auth,
      allowOrigins: options.allowOrigin,
      publicUrl,
      trustProxy: options.trustProxy ?? false,
      rateLimits,
      tls,
      webSocketLimits: context.settings.webSocket,
      host: options.host,
      port: options.port,
      log,
      mcpFastPath: environment.accelerators.httpFastPath,
      metrics,
      backupStatus: backupSchedule,
      requestLog: serverLog.requestLog,
    });
  } catch (error) {
    await backupSchedule?.stop();
    await context.close();
    log.close();
    const inUse = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
    io.stderr(
      inUse
        ? `engram: port ${options.port} on ${options.host} is already in use; choose another with --port.\n`
        : `engram: cannot listen on ${options.host}:${options.port}: ${(error as Error).message}\n`,
    );
    finish(EXIT_REFUSED);
    return;
  }
  let trashPurge: TrashPurge | undefined;
  try {
    if (options.auth === 'token' && (await context.access.list()).length === 0) {
      log('no tokens exist yet, so every request will be refused: create one with engram token create --user NAME');
    }
    const stopped = (io.stopRequested ?? processStopRequested)();
    trashPurge = scheduleTrashPurge(context.memory, {
      log,
      ...(clients === undefined
        ? {}
        : {
            purgeOAuth: async () => ({
              ...(await context.oauth.tokens.purgeExpired()),
              clients: await clients.removeUnused(),
            }),
          }),
    });
    io.stdout(
      options.json
        ? connectJson(server, options, context, publicUrl)
        : connectHelp(server, options, context, publicUrl, rateLimitRules, metrics),
    );
    serverLog.started({
      url: `${server.origin}/mcp`,
      ...(publicUrl === undefined ? {} : { publicUrl: `${publicUrl.origin}/mcp` }),
      auth: options.auth,
      metrics: metrics !== undefined,
      version: VERSION,
    });
    const signal = await stopped;
    serverLog.stopping(signal);
  } finally {
    // Also when start-up failed after listening (the store refusing its first read): nothing is left open.
    try {
      await server.close();
      await trashPurge?.stop();
      await backupSchedule?.stop();
      await context.close();
      serverLog.stopped();
    } finally {
      log.close();
    }
  }
}

export function registerServeCommand(
  program: Command,
  common: (command: Command) => Command,
  environment: Environment,
  io: Io,
  finish: (exitCode: number) => void,
): void {
  const serveCommand = common(program.command('serve'))
    .description('Serve MCP over HTTP (Streamable HTTP at /mcp) for the llama.cpp WebUI, Claude Code and others')
    .addOption(new Option('--host <address>', 'address to listen on (else $ENGRAM_HOST)').default('127.0.0.1'))
    .addOption(
      new Option('--port <number>', 'port to listen on, 0 picks a free one (else $ENGRAM_PORT)')
        .default(DEFAULT_PORT)
        .argParser(parsePort),
    )
    .addOption(
      new Option(
        '--auth <mode>',
        'none: loopback only, as the local user; token: bearer tokens, one user each; ' +
          'oauth: apps connect with OAuth 2.1 (ChatGPT, Claude), and bearer tokens too (else $ENGRAM_AUTH)',
      )
        .choices(AUTH_MODES)
        .default('none'),
    )
    .option('--allow-origin <origin>', 'also let web pages from this origin call (repeatable)', collectOrigin, [])
    .addOption(
      new Option(
        '--public-url <url>',
        'the https origin clients reach this server by, e.g. behind a reverse proxy (OAuth issuer and metadata ' +
          'URLs are built from it, never from request headers; http:// only for localhost on loopback); else ' +
          '$ENGRAM_PUBLIC_URL, else the config\'s "publicUrl"',
      ).argParser(publicUrlOption),
    )
    .option(
      '--trust-proxy',
      'a reverse proxy is in front: take the client address from X-Forwarded-For ' +
        '(its rightmost entry), for the log, sign-in throttling and rate limits (else $ENGRAM_TRUST_PROXY=1)',
    )
    .addOption(
      new Option(
        '--rate-limit <setting>',
        'on, off, or limits to change, e.g. mcp=600/min,api=off: auth (sign-in, token and registration ' +
          'requests per client address, default 60/min), sign-in (per user named, 20/min), mcp and api (per token, ' +
          '1200/min each, on with --auth token or oauth, off without auth); over the config\'s "rateLimit" ' +
          '(else $ENGRAM_RATE_LIMIT; docs/http.md)',
      ).argParser(rateLimitOption),
    )
    .option(
      '--metrics',
      'serve Prometheus metrics at /metrics, to this machine, or elsewhere with the bearer token in ' +
        '$ENGRAM_METRICS_TOKEN (else $ENGRAM_METRICS=1, else the config\'s "metrics": true; docs/monitoring.md)',
    )
    .addOption(
      new Option(
        '--log-format <format>',
        'human: one line per request for people (the default); json: one JSON object per line for a log ' +
          'shipper, with a request id (else $ENGRAM_LOG_FORMAT, else the config\'s "logFormat")',
      ).choices(LOG_FORMATS),
    )
    .option('--tls-cert <file>', 'serve https with this PEM certificate chain (with --tls-key)')
    .option('--tls-key <file>', 'the PEM private key of --tls-cert');
  addBackupScheduleOptions(serveCommand).action((options: ServeOptions, command: Command) =>
    serve(options, command, environment, io, finish),
  );
}
