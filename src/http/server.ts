/**
 * Starting and stopping the HTTP server: refuse an unsafe binding or public URL, listen
 * (https with a certificate, http without), cut off slow clients, hand WebSocket upgrades to /ws (websocket.ts), and on close stop accepting,
 * end the event streams of /api/events, let the requests in flight finish, say goodbye to open sockets, then stop.
 */

import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { App } from '../app.js';
import { createToolHandler, type ToolHandler } from '../memory/tools/handler.js';
import { answerClientError } from './answer-headers.js';
import { createHttpApp, type HttpAppOptions } from './app.js';
import { authSettings, type ServeAuth } from './auth.js';
import { createDrain } from './drain.js';
import { DEFAULT_TIMEOUTS, declaredTooLarge, MAX_BODY_BYTES, type Timeouts } from './limits.js';
import type { BackupStatus, Metrics } from './metrics/metrics.js';
import { assertSafeBinding, assertSafePublicUrl, isLoopbackHostname } from './origins.js';
import { createWebSocketEndpoint, type WebSocketLimits } from './websocket.js';

export interface HttpServerOptions
  extends Omit<HttpAppOptions, 'app' | 'auth' | 'handler' | 'loopbackOnly' | 'listeningOrigin' | 'metrics'> {
  /** The services to serve, built by the composition root (app.ts). */
  readonly app: Pick<App, 'memory' | 'transfer' | 'access' | 'accounts' | 'oauth' | 'health'>;
  readonly auth: ServeAuth;
  /** What answers MCP tool calls: the memory's tool handler unless a test stands one in. */
  readonly handler?: ToolHandler;
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly timeouts?: Partial<Timeouts>;
  /** How long close() waits for requests in flight before cutting them off. */
  readonly closeGraceMs?: number;
  /** The limits of each socket at /ws (ping, idle, requests at once, unread) and the caps on how many may be open. */
  readonly webSocketLimits?: Partial<WebSocketLimits>;
  /**
   * Serve `/metrics` (`engram serve --metrics`), to this machine and to requests carrying
   * `token` (metrics/access.ts); without it, `/metrics` is a 404 and nothing is counted.
   */
  readonly metrics?: { readonly token?: string | undefined };
  /** The scheduled backups, whose last good one /metrics tells (engram_backup_last_success_timestamp_seconds). */
  readonly backupStatus?: BackupStatus;
  /** Serve https with this PEM certificate chain and key (the same app, limits and timeouts). */
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer };
}

export interface RunningHttpServer {
  /** Where the server listens, e.g. `http://127.0.0.1:8787` (`https://` with tls). */
  readonly origin: string;
  readonly port: number;
  /** Stops accepting, waits for requests in flight (up to the grace period), then stops. */
  close(): Promise<void>;
}

function listen(server: Server | HttpsServer, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  assertSafeBinding(options.host, options.auth.mode);
  assertSafePublicUrl(options.host, options.auth.mode, options.publicUrl);
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const loopbackOnly = isLoopbackHostname(options.host);
  const serverOptions = {
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    connectionsCheckingInterval: timeouts.checkIntervalMs,
  };
  // prom-client loads only when metrics are on.
  const metrics: Metrics | undefined =
    options.metrics === undefined
      ? undefined
      : (await import('./metrics/metrics.js')).createMetrics({ backupStatus: options.backupStatus });
  const server = options.tls
    ? // A TLS handshake gets no longer than the request's headers would (Node's default is 120 s).
      createHttpsServer({ ...serverOptions, handshakeTimeout: timeouts.headersMs, ...options.tls })
    : createServer(serverOptions);
  server.on('clientError', answerClientError);
  await listen(server, options.host, options.port);
  const { port } = server.address() as AddressInfo;
  const origin = `${options.tls ? 'https' : 'http'}://${urlHost(options.host)}:${port}`;
  // The app is made once the port is known, which the public URL defaults to; no request
  // is read before the handlers below are in place (they are added in this same turn).
  const auth = authSettings(options.app, options.auth);
  const memoryHandler =
    options.handler ?? createToolHandler(options.app.memory, { onUnexpectedError: options.onUnexpectedError });
  const handler = metrics?.observeToolCalls(memoryHandler) ?? memoryHandler;
  const app = createHttpApp({
    ...options,
    auth,
    handler,
    loopbackOnly,
    listeningOrigin: origin,
    metrics: metrics && { recorder: metrics, token: options.metrics?.token },
  });
  if (metrics !== undefined) options.app.health.observeCommitBatches?.((writes) => metrics.commitBatch(writes));
  const webSockets = createWebSocketEndpoint({
    ...options,
    metrics,
    auth,
    handler,
    memory: options.app.memory,
    policy: options.app.memory.policy,
    publicUrl: options.publicUrl ?? new URL(origin),
    loopbackOnly,
    maxPayloadBytes: options.maxBodyBytes ?? MAX_BODY_BYTES,
    limits: options.webSocketLimits,
  });
  const drain = createDrain(server);
  server.on('request', (req, res) => {
    drain.follow(res);
    app.listener(req, res);
  });
  server.on('upgrade', webSockets.upgrade);
  // A client that asks before sending its body (Expect: 100-continue) is refused before it sends a too-large one.
  server.on('checkContinue', (req, res) => {
    drain.follow(res);
    if (!declaredTooLarge(req, app.maxBodyBytesFor(req))) res.writeContinue();
    app.listener(req, res);
  });
  let closing: Promise<void> | undefined;
  const close = async () => {
    const graceMs = options.closeGraceMs ?? 10_000;
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    drain.begin();
    app.endStreams();
    const socketsClosed = webSockets.close(graceMs);
    const cutOff = setTimeout(() => server.closeAllConnections(), graceMs);
    cutOff.unref();
    await Promise.all([stopped, socketsClosed]);
    clearTimeout(cutOff);
    if (metrics !== undefined) options.app.health.observeCommitBatches?.(undefined);
    await app.close();
  };
  return {
    origin,
    port,
    close: () => {
      closing ??= close();
      return closing;
    },
  };
}
