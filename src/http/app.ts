/**
 * The HTTP app behind `engram serve`: routes `/mcp`, `/api` (api/router.ts), `/healthz`, `/readyz` (readiness.ts), the web UI at `/` (web.ts) and,
 * with `--auth oauth`, the OAuth endpoints (oauth/router.ts, before the Origin check: any
 * page may call them), and puts the checks in front of them in the order that keeps memory safe — Host (DNS
 * rebinding), Origin (web pages), CORS preflight, method, token, the token's rate limit
 * (rate-limit.ts), body size, JSON and its nesting — then logs one line; a Host, Origin or Authorization header sent twice is
 * refused before anything else.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { createOAuthRoutes } from '../access/oauth/http/router.js';
import { rateLimitHeaders } from '../access/rate-limits/answers.js';
import type { RateLimits } from '../access/rate-limits/rate-limits.js';
import type { App } from '../app.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json/json-nesting.js';
import type { McpHttpEndpoint } from '../mcp/http.js';
import { isEngramError } from '../memory/model/errors.js';
import type { ToolHandler } from '../memory/tools/handler.js';
import { applyAnswerHeaders } from './answer-headers.js';
import { createApiAuthenticate } from './api/browser-auth.js';
import { type ApiErrorCode, retryAfterHeaders, STATUS_BY_CODE, sendApiError } from './api/errors.js';
import { type ApiExchange, createApi, isApiPath, MAX_IMPORT_BODY_BYTES } from './api/router.js';
import { createSessionRoutes } from './api/session.js';
import { type AuthSettings, createAuthenticate } from './auth.js';
import { clientAddress } from './client-address.js';
import { answerOptions, corsHeaders } from './cors.js';
import { answerInternalError } from './internal-error.js';
import { bufferedBody, MAX_BODY_BYTES, readBody } from './limits.js';
import { humanRequestLog, type RequestLog, type RpcSummary, summarizeRpc } from './logging.js';
import { metricsAccess } from './metrics/access.js';
import type { Metrics } from './metrics/metrics.js';
import { isStoreError } from './metrics/store-errors.js';
import { browserGate } from './origins.js';
import { mcpRateLimitedMessage, tokenSubject } from './rate-limit.js';
import { createReadiness } from './readiness.js';
import { repeatedHeader } from './repeated-header.js';
import { REQUEST_ID_HEADER, requestIdOf } from './request-id.js';
import { labelOf, type RouteLabel, webLabel } from './route-label.js';
import { createWebRoutes } from './web.js';

export interface HttpAppOptions {
  /** The services it serves, built by the composition root (app.ts): `/api` calls the memory; sign-in uses the accounts. */
  readonly app: HttpServices;
  /** The MCP tool handler over that memory. */
  readonly handler: ToolHandler;
  /** Where unexpected failures outside the tool handler (an MCP name completion's) are reported. */
  readonly onUnexpectedError?: (error: unknown) => void;
  readonly version: string;
  /** Who may call, with the services that check (authSettings); with a token or OAuth, the web UI's password sign-in too. */
  readonly auth: AuthSettings;
  /** The built web UI (default dist/web, see web.ts). */
  readonly webRoot?: string;
  /** Origins allowed besides the defaults (see originPolicy), as parseAllowedOrigin returns them. */
  readonly allowOrigins?: readonly string[];
  /** The server listens on loopback only: refuse requests addressed to any other name (but publicUrl's). */
  readonly loopbackOnly: boolean;
  /**
   * The origin clients reach the server by (--public-url, parsePublicUrl): OAuth's issuer and
   * metadata URLs are built from it, never from request headers. Default: the listening origin.
   */
  readonly publicUrl?: URL;
  /** Where the server listens, e.g. `http://127.0.0.1:8787`: the public URL when none is given. */
  readonly listeningOrigin: string;
  /** Believe a reverse proxy's X-Forwarded-For, for the log, sign-in throttling and rate limits (see client-address.ts). */
  readonly trustProxy?: boolean;
  /** The rate limits in force (access/rate-limits, docs/http.md); none when undefined. */
  readonly rateLimits?: RateLimits | undefined;
  readonly maxBodyBytes?: number;
  /** Cap on the body of `POST /api/import` (default MAX_IMPORT_BODY_BYTES). */
  readonly maxImportBytes?: number;
  /** Receives reports of failures and events, and one line per request unless requestLog takes them. */
  readonly log: (line: string) => void;
  /** Where each request's record goes (the JSON log); by default a human line to `log`. */
  readonly requestLog?: RequestLog;
  /**
   * `/metrics` (a 404 without): what the server counts, and the token that lets it be read
   * from elsewhere than this machine (metrics/access.ts).
   */
  readonly metrics?: { readonly recorder: Metrics; readonly token?: string | undefined };
  /** The MCP fast path (mcp/fast-path.ts), on by default: false leaves every MCP request to the SDK. */
  readonly mcpFastPath?: boolean;
  /** How long `/readyz` waits for the store before answering 503 (READY_TIMEOUT_MS by default). */
  readonly readyTimeoutMs?: number;
}

/** What the app serves of the services app.ts built: the memory and its transfer, the accounts of the web UI's sign-in, the store's health. */
export type HttpServices = Pick<App, 'memory' | 'transfer' | 'accounts' | 'health'>;

export interface HttpApp {
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** The body cap for this request, known from its path before the body is sent. */
  maxBodyBytesFor(req: IncomingMessage): number;
  /** Ends the long-lived answers (the streams of /api/events), which would otherwise hold a closing server open. */
  endStreams(): void;
  /** Aborts MCP exchanges still in flight. */
  close(): Promise<void>;
}

/** Logged when the client went away before its answer was complete (as nginx does). */
const CLIENT_CLOSED = 499;

/** What the request log learns as the request is served: who called, the API route, the JSON-RPC method and tool, its door. */
type Exchange = ApiExchange & Partial<RpcSummary> & { label?: RouteLabel };

/** JSON-RPC's "server error" code, for refusals that are not about the JSON-RPC message. */
const REFUSED = -32000;
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INTERNAL_ERROR = -32603;

const TOO_DEEP = `Invalid request: the JSON is nested more than ${MAX_JSON_DEPTH} levels deep.`;

/** Every refusal is a JSON-RPC error object, which MCP clients show to their user. */
function sendError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** Refusals made before routing, in the shape the caller reads: the API's error, or JSON-RPC's. */
function sendRefusal(res: ServerResponse, path: string, status: number, code: ApiErrorCode, message: string) {
  if (isApiPath(path)) sendApiError(res, status, code, message);
  else sendError(res, status, REFUSED, message);
}

/**
 * A request target that is a plain path (letters, digits, `_`, `-`, `/`, not `//` first:
 * no dot segment, escape or authority for the URL parser to rewrite), with an optional
 * query: its path is itself, as `new URL` would find it at a tenth of the cost.
 */
const PLAIN_TARGET = /^(\/(?!\/)[\w/-]*)(?:\?.*)?$/s;

/** The request's path without its query; `?` when it cannot be parsed. */
function pathOf(req: IncomingMessage): string {
  const plain = PLAIN_TARGET.exec(req.url ?? '/');
  if (plain !== null) return plain[1]!;
  try {
    return new URL(req.url ?? '/', 'http://engram').pathname;
  } catch {
    return '?';
  }
}

export function createHttpApp(options: HttpAppOptions): HttpApp {
  const { log } = options;
  const requestLog = options.requestLog ?? humanRequestLog(log);
  const metrics = options.metrics?.recorder;
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const publicUrl = options.publicUrl ?? new URL(options.listeningOrigin);
  const authenticate = createAuthenticate(options.auth, publicUrl);
  const oauth =
    options.auth.mode === 'oauth'
      ? createOAuthRoutes({
          ...options.auth,
          publicUrl,
          trustProxy: options.trustProxy ?? false,
          rateLimits: options.rateLimits,
        })
      : undefined;
  const gate = browserGate({ ...options, auth: options.auth.mode });
  // Undefined when /mcp is not limited: no request then pays for finding whom it counts against.
  const mcpLimits = options.rateLimits?.has('mcp') ? options.rateLimits : undefined;
  // The MCP SDK (a third of a start's CPU) loads with the first request to /mcp: a server
  // used only through /api and the web UI never needs it. A load that fails (EMFILE on a
  // busy server) fails that request alone: the next one loads it again, as import() allows.
  let endpoint: Promise<McpHttpEndpoint> | undefined;
  // The endpoint once loaded, for the requests after to use without awaiting it.
  let loadedEndpoint: McpHttpEndpoint | undefined;
  const mcpEndpoint = (): Promise<McpHttpEndpoint> => {
    endpoint ??= import('../mcp/http.js').then(
      async ({ createMcpHttpEndpoint }) =>
        (loadedEndpoint = await createMcpHttpEndpoint({
          handler: options.handler,
          memory: options.app.memory,
          policy: options.app.memory.policy,
          version: options.version,
          onUnexpectedError: options.onUnexpectedError,
          onerror: (error) => log(`mcp: ${error.message}`),
          ...(options.mcpFastPath === undefined ? {} : { fastPath: options.mcpFastPath }),
        })),
      (error: unknown) => {
        endpoint = undefined;
        throw error;
      },
    );
    return endpoint;
  };
  // The web UI's cookie and CSRF rules (api/browser-auth.ts); nobody signs in without auth.
  const accounts = options.auth.mode === 'none' ? undefined : options.app.accounts;
  const ownOrigins = new Set([publicUrl.origin, new URL(options.listeningOrigin).origin]);
  const apiAuthenticate = createApiAuthenticate({
    // OAuth tokens are bound to /mcp (RFC 8707): the REST API takes static tokens only.
    authenticate:
      options.auth.mode === 'oauth'
        ? createAuthenticate({ mode: 'token', access: options.auth.access }, publicUrl)
        : authenticate,
    accounts,
    origins: ownOrigins,
  });
  const web = createWebRoutes(options.webRoot);
  const readiness = createReadiness({
    probe: () => options.app.health.ready(),
    timeoutMs: options.readyTimeoutMs,
    log,
  });
  const api = createApi({
    memory: options.app.memory,
    transfer: options.app.transfer,
    authenticate: apiAuthenticate,
    sessions: createSessionRoutes({
      mode: options.auth.mode,
      authenticate: apiAuthenticate,
      accounts,
      origins: ownOrigins,
      secure: publicUrl.protocol === 'https:',
      trustProxy: options.trustProxy ?? false,
      rateLimits: options.rateLimits,
    }),
    access: options.auth.mode === 'none' ? undefined : options.auth.access,
    apps: options.auth.mode === 'oauth' ? options.auth.tokens : undefined,
    maxBodyBytes,
    maxImportBytes: options.maxImportBytes ?? MAX_IMPORT_BODY_BYTES,
    rateLimits: options.rateLimits,
    trustProxy: options.trustProxy ?? false,
    log,
    eventStreamOpened: metrics?.eventStreamOpened,
  });

  async function serveMcp(req: IncomingMessage, res: ServerResponse, exchange: Exchange): Promise<void> {
    if (req.method !== 'POST') {
      sendError(res, 405, REFUSED, 'Method not allowed: this server is stateless, send each MCP request as a POST.', {
        Allow: 'POST, OPTIONS',
      });
      return;
    }
    const auth = await authenticate(req.headers.authorization);
    if (!auth.ok) {
      sendError(res, 401, REFUSED, auth.message, { 'WWW-Authenticate': auth.challenge });
      return;
    }
    exchange.user = auth.caller.user;
    exchange.actor = auth.caller.label;
    // Each await below is taken only when its value is not yet known: one costs a turn of the microtask queue.
    if (mcpLimits !== undefined) {
      const refused = await mcpLimits.refusal([
        ['mcp', tokenSubject(req, req.headers.authorization, options.trustProxy ?? false)],
      ]);
      if (refused !== undefined) {
        sendError(res, 429, REFUSED, mcpRateLimitedMessage(refused), rateLimitHeaders(refused));
        return;
      }
    }
    const body = bufferedBody(req, maxBodyBytes) ?? (await readBody(req, maxBodyBytes));
    if (body.kind === 'too-large') {
      sendError(
        res,
        413,
        REFUSED,
        `Request body too large: the limit is ${maxBodyBytes} bytes. Send smaller writes; an entry holds at most a few KiB.`,
        { Connection: 'close' },
      );
      return;
    }
    if (nestsDeeperThan(body.text, MAX_JSON_DEPTH)) {
      sendError(res, 400, INVALID_REQUEST, TOO_DEEP);
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(body.text);
    } catch {
      sendError(res, 400, PARSE_ERROR, 'Parse error: the request body is not valid JSON.');
      return;
    }
    Object.assign(exchange, summarizeRpc(message));
    await (loadedEndpoint ?? (await mcpEndpoint())).handle(req, res, message, auth.caller, auth.anonymous);
  }

  /** Liveness: the process answers; nothing is asked of the store. */
  function answerHealth(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(req.method === 'GET' ? '{"status":"ok"}' : undefined);
  }

  /** Readiness: 200 when the store answers with a current schema, else 503 and what kind of failure. */
  async function answerReady(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const answer = await readiness();
    const body = JSON.stringify(
      answer.ready ? { status: 'ready' } : { status: 'unavailable', code: answer.code, reason: answer.reason },
    );
    res.writeHead(answer.ready ? 200 : 503, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
      ...(answer.ready ? {} : { 'Retry-After': '5' }),
    });
    res.end(req.method === 'GET' ? body : undefined);
  }

  /** /metrics, to whom may read it (metrics/access.ts). */
  async function serveMetrics(
    req: IncomingMessage,
    res: ServerResponse,
    { recorder, token }: NonNullable<HttpAppOptions['metrics']>,
  ): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendError(res, 405, REFUSED, 'Method not allowed: use GET /metrics.', { Allow: 'GET, HEAD' });
      return;
    }
    const access = metricsAccess(req, token, options.trustProxy ?? false);
    if (access === 'forbidden') {
      sendError(
        res,
        403,
        REFUSED,
        `Forbidden: /metrics is served to this machine only${options.trustProxy ? ', and with --trust-proxy to no one without the metrics token' : ''}. To let Prometheus read it from elsewhere, ` +
          'set a metrics token (ENGRAM_METRICS_TOKEN, or "metricsToken" in the config file) and send it as a bearer token.',
      );
      return;
    }
    if (access === 'unauthorized') {
      sendError(
        res,
        401,
        REFUSED,
        'Unauthorized: /metrics takes the metrics token (ENGRAM_METRICS_TOKEN) as a bearer token, ' +
          'not a memory token; send Authorization: Bearer <metrics token>.',
        { 'WWW-Authenticate': 'Bearer realm="engram-metrics"' },
      );
      return;
    }
    const text = await recorder.render();
    res.writeHead(200, {
      'Content-Type': recorder.contentType,
      'Content-Length': Buffer.byteLength(text),
      'Cache-Control': 'no-store',
    });
    res.end(req.method === 'GET' ? text : undefined);
  }

  async function route(req: IncomingMessage, res: ServerResponse, path: string, exchange: Exchange): Promise<void> {
    const repeated = repeatedHeader(req);
    if (repeated !== undefined) {
      sendRefusal(
        res,
        path,
        400,
        'INVALID_ARGUMENT',
        `Bad request: the ${repeated} header is sent more than once; send it once.`,
      );
      return;
    }
    const wrongHost = gate.host(req.headers.host);
    if (wrongHost !== undefined) {
      sendRefusal(res, path, wrongHost.status, wrongHost.code, wrongHost.message);
      return;
    }
    if (oauth !== undefined && (await oauth(req, res, path))) {
      // Only its own endpoints' paths are answered here: a fixed set.
      exchange.label = { door: 'oauth', route: path };
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined) {
      const foreign = gate.origin(origin);
      if (foreign !== undefined) {
        sendRefusal(res, path, foreign.status, foreign.code, foreign.message);
        return;
      }
      for (const [name, value] of Object.entries(corsHeaders(origin))) res.setHeader(name, value);
    }
    if (isApiPath(path)) return api.serve(req, res, path, exchange);
    if (path === '/mcp' && req.method === 'OPTIONS') {
      answerOptions(req, res, 'POST, OPTIONS');
      return;
    }
    if (path === '/mcp') return serveMcp(req, res, exchange);
    if (path === '/healthz' || path === '/readyz') {
      if (req.method === 'GET' || req.method === 'HEAD')
        return path === '/healthz' ? answerHealth(req, res) : answerReady(req, res);
      sendError(res, 405, REFUSED, `Method not allowed: use GET ${path}.`, { Allow: 'GET, HEAD' });
      return;
    }
    if (path === '/metrics' && options.metrics !== undefined) return serveMetrics(req, res, options.metrics);
    if (web(req, res, path)) {
      exchange.label = webLabel(path);
      return;
    }
    sendError(
      res,
      404,
      REFUSED,
      `Not found: ${path}. Engram serves MCP at /mcp, its REST API under /api and its health at /healthz and /readyz.`,
    );
  }

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    applyAnswerHeaders(req, res);
    const requestId = requestIdOf(req);
    res.setHeader(REQUEST_ID_HEADER, requestId);
    const path = pathOf(req);
    const exchange: Exchange = {};
    // Read now: once the client has hung up, its socket no longer knows the address.
    const client = clientAddress(req, options.trustProxy ?? false);
    // `on`, not `once`: Node emits a response's close once, and once's wrapper is an object
    // literal that long-lived listeners share; once V8 allocates that literal in the old
    // generation, each one keeps its request's objects through two scavenges (see
    // cli/keep-requests-young.ts).
    res.on('close', () => {
      const status = res.writableFinished ? res.statusCode : CLIENT_CLOSED;
      const durationMs = performance.now() - started;
      const label =
        exchange.label ?? (exchange.route === undefined ? labelOf(path) : { door: 'api', route: exchange.route });
      metrics?.request(label, status, durationMs / 1000);
      if (isStoreError(exchange.failure)) metrics?.storeError(exchange.failure);
      requestLog.request({
        time: new Date(),
        requestId,
        label,
        client,
        user: exchange.user,
        actor: exchange.actor,
        httpMethod: req.method ?? '-',
        // An /api path may name an entry: unmatched ones are logged without it.
        path: exchange.route ?? (isApiPath(path) ? '/api/?' : path),
        rpcMethod: exchange.rpcMethod,
        tool: exchange.tool,
        status,
        durationMs,
      });
    });
    route(req, res, path, exchange).catch((error: unknown) => {
      if (isEngramError(error)) exchange.failure = error.code;
      // A refusal that reaches here (a store failing while a token is checked for /mcp) keeps its status and words.
      if (isEngramError(error) && !res.headersSent && !res.destroyed) {
        sendError(
          res,
          STATUS_BY_CODE[error.code],
          INTERNAL_ERROR,
          error.message,
          retryAfterHeaders(error.code, error.detail),
        );
        return;
      }
      answerInternalError(res, error, log, (message) => sendError(res, 500, INTERNAL_ERROR, message));
    });
  };

  return {
    listener,
    maxBodyBytesFor: (req) => {
      const path = pathOf(req);
      return isApiPath(path) ? api.maxBodyBytesFor(path) : maxBodyBytes;
    },
    endStreams: () => api.closeStreams(),
    // Nothing to close when the SDK never loaded, or failed to.
    close: async () => (await endpoint?.catch(() => undefined))?.close(),
  };
}
