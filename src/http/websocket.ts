/**
 * `/ws`: MCP over WebSocket (subprotocol `mcp`) for the llama.cpp WebUI and the MCP SDK's
 * WebSocketClientTransport. Everything is decided before the socket opens, by the rules
 * of HTTP (app.ts), in its order: a Host, Origin or Authorization header sent twice, the
 * Host of a loopback server (DNS rebinding), the Origin (a page you visit must not open a
 * socket into your memory), then the subprotocol and the token. A browser cannot set
 * headers on an upgrade and the SDK's transport sends none, so here, and on no other
 * route, the token may also come as the RFC 6750 `access_token` query parameter; the log
 * never shows the query. A refusal is an HTTP answer, before any upgrade; a missing or
 * refused token gets the same 401 and challenge as /mcp.
 *
 * Sockets are counted so that no one can hold the server's file descriptors: upgrades still
 * being checked at once (beyond the cap, 503 before any upgrade), and open sockets per
 * token, per user and in all (beyond a cap, the socket is closed as soon as it opens, 1008
 * or 1013, with a reason that names the cap and what to do, since a browser shows a
 * refused upgrade to no one; such a socket is no longer counted as being checked, a few
 * per user wait for their client to answer the close, more are cut off at once).
 *
 * An open socket is one MCP connection (mcp/websocket.ts) for the caller its token names.
 * The token is checked again before each message, as HTTP checks it on each request: a
 * revoked or expired one closes the socket (1008); and each message counts against the
 * token's MCP rate limit, with its /mcp requests (a request past it is answered with a
 * JSON-RPC error, the socket kept). Each socket is pinged, closed when it
 * stays silent too long, capped in message size (1009), in requests at once, in messages
 * waiting to be served (it is not read meanwhile; nor is any socket while the bytes waiting
 * over all of them fill the server's budget, waiting-budget.ts) and in what its client
 * leaves unread (1008); close() says goodbye to every socket (1001). One log line when a socket opens,
 * one when it closes.
 */

import { type IncomingMessage, STATUS_CODES } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import type { RateLimits } from '../access/rate-limits/rate-limits.js';
import type { Authenticated } from '../mcp/http.js';
import type { EntryNames } from '../mcp/resources.js';
import { WaitingBudget } from '../mcp/waiting-budget.js';
import type { serveMcpWebSocket } from '../mcp/websocket.js';
import { isEngramError } from '../memory/model/errors.js';
import type { Policy } from '../memory/model/policy.js';
import type { ToolHandler } from '../memory/tools/handler.js';
import { retryAfterHeaders, STATUS_BY_CODE } from './api/errors.js';
import { type AuthSettings, createAuthenticate } from './auth.js';
import { clientAddress } from './client-address.js';
import { humanRequestLog, type RequestLog } from './logging.js';
import type { Metrics } from './metrics/metrics.js';
import { browserGate } from './origins.js';
import { mcpRateLimitedMessage, tokenSubject } from './rate-limit.js';
import { repeatedHeader } from './repeated-header.js';
import { REQUEST_ID_HEADER, requestIdOf } from './request-id.js';
import { labelOf, type RouteLabel } from './route-label.js';
import { type CapRefusal, countOf, SocketCounts } from './socket-caps.js';

/** The path of MCP over WebSocket. */
export const WEBSOCKET_PATH = '/ws';
/** The subprotocol MCP clients ask for (the SDK's WebSocketClientTransport). */
const SUBPROTOCOL = 'mcp';

export interface WebSocketLimits {
  /** How often each socket is pinged; one that has not answered the previous ping by then is cut off. */
  readonly pingIntervalMs: number;
  /** A socket that sends no message for this long is closed (1000). */
  readonly idleMs: number;
  /** Requests served at once on one socket; more are answered with a JSON-RPC error. */
  readonly maxInFlight: number;
  /** Messages received on one socket and not yet served past which it is not read until they are. */
  readonly maxWaiting: number;
  /** Bytes of messages received and not yet served, over every socket, at which no socket is read until half are. */
  readonly waitingBytes: number;
  /** Bytes sent and not yet read by the client past which the socket is closed (1008) rather than written to. */
  readonly maxUnreadBytes: number;
  /** Open sockets one token may hold; one more is closed as it opens (1008). */
  readonly socketsPerToken: number;
  /** Open sockets one user may hold, over all their tokens (the one user without auth); one more is closed as it opens (1008). */
  readonly socketsPerUser: number;
  /** Open sockets in all; one more is closed as it opens (1013, try again later). */
  readonly sockets: number;
  /** Upgrades being checked at once (their token, before the socket opens); one more is refused with 503. */
  readonly handshakes: number;
  /** How long a socket closed as it opened (past a cap) has to answer the close before it is cut off. */
  readonly refusedSocketGraceMs: number;
}

export const DEFAULT_WEBSOCKET_LIMITS: WebSocketLimits = {
  pingIntervalMs: 30_000,
  idleMs: 10 * 60_000,
  maxInFlight: 16,
  maxWaiting: 8,
  waitingBytes: 32 * 1024 * 1024,
  maxUnreadBytes: 4 * 1024 * 1024,
  socketsPerToken: 32,
  socketsPerUser: 64,
  sockets: 1024,
  handshakes: 64,
  refusedSocketGraceMs: 2_000,
};

/**
 * Sockets of one user closed as they opened that may wait for their client to answer the
 * close; one more is cut off at once (its client sees the connection drop, the log says why).
 */
const REFUSED_SOCKETS_WAITING_PER_USER = 4;

export interface WebSocketOptions {
  readonly handler: ToolHandler;
  /** Where unexpected failures outside the tool handler (an MCP name completion's) are reported. */
  readonly onUnexpectedError?: (error: unknown) => void;
  /** Where completion takes entry names from (the Memory service the handler calls). */
  readonly memory: EntryNames;
  readonly policy: Pick<Policy, 'groups'>;
  readonly version: string;
  readonly auth: AuthSettings;
  /** Origins allowed besides the defaults, as for HTTP (originPolicy). */
  readonly allowOrigins?: readonly string[];
  /** The server listens on loopback only: refuse upgrades addressed to any other name (but publicUrl's). */
  readonly loopbackOnly: boolean;
  /** The origin clients reach the server by (--public-url), whose host a loopback server answers to as well. */
  readonly publicUrl?: URL;
  /** Believe a reverse proxy's X-Forwarded-For in the log and rate limits (see client-address.ts). */
  readonly trustProxy?: boolean;
  /** The `mcp` limit, counted per message with /mcp's requests of the same token (rate-limit.ts); none when undefined. */
  readonly rateLimits?: RateLimits | undefined;
  /** Largest message, in bytes; a larger one closes the socket with 1009. */
  readonly maxPayloadBytes: number;
  readonly limits?: Partial<WebSocketLimits>;
  /** Receives reports of failures and events, and the lines of upgrades and closes unless requestLog takes them. */
  readonly log: (line: string) => void;
  /** Where the record of each upgrade and each socket's close goes; by default a human line to `log`. */
  readonly requestLog?: RequestLog;
  /** Counts upgrades and open sockets, when metrics are on. */
  readonly metrics?: Metrics;
}

export interface WebSocketEndpoint {
  /** The HTTP server's `upgrade` listener. */
  readonly upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Refuses new upgrades, closes every socket (1001), and cuts off those still open after `graceMs`. */
  close(graceMs: number): Promise<void>;
}

/** An upgrade asked of any other path than /ws: counted under one route, whatever the path. */
const WS_UNMATCHED: RouteLabel = { door: 'ws', route: 'unmatched' };

/** JSON-RPC's "server error" code: refusals are JSON-RPC error objects, as on /mcp. */
const REFUSED = -32000;

const INTERNAL_ERROR_MESSAGE =
  'Internal error: the server failed to answer. Try again; if it fails again, tell its owner.';
/** At most 123 bytes, as a close reason must be. */
const TOKEN_REFUSED_REASON = 'The token is no longer accepted: it was revoked or has expired.';
const SHUTTING_DOWN_REASON = 'The server is shutting down.';

/**
 * What a socket is counted under for the per-token cap: the token presented, however its
 * scheme is spelled (`Bearer`, `bearer`), so that no spelling opens more; none without a token.
 */
function countedToken(who: Authenticated, authorization: string | undefined): string | undefined {
  return who.anonymous ? undefined : authorization?.replace(/^\s*bearer\s+/i, '').trim();
}

/** Writes an HTTP refusal on a socket not yet upgraded, then closes it. */
function writeRefusal(socket: Duplex, status: number, message: string, headers: Record<string, string>): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code: REFUSED, message }, id: null });
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    'Connection: close',
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'X-Content-Type-Options: nosniff',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ].join('\r\n');
  socket.once('finish', () => socket.destroy());
  socket.end(`${head}\r\n\r\n${body}`);
}

/** The subprotocols an upgrade asks for. */
function subprotocols(req: IncomingMessage): string[] {
  return (req.headers['sec-websocket-protocol'] ?? '').split(',').map((name) => name.trim());
}

/** The Authorization value to check: the header, or the `access_token` parameter as a bearer token. */
function presentedCredentials(
  req: IncomingMessage,
  url: URL,
): { readonly authorization: string | undefined } | { readonly refusal: string } {
  const fromQuery = url.searchParams.getAll('access_token');
  if (fromQuery.length > 1) return { refusal: 'Bad request: the access_token parameter is sent more than once.' };
  if (fromQuery.length === 0) return { authorization: req.headers.authorization };
  if (req.headers.authorization !== undefined) {
    return {
      refusal:
        'Bad request: the token is sent twice, in the Authorization header and the access_token parameter; send it once.',
    };
  }
  return { authorization: `Bearer ${fromQuery[0]}` };
}

export function createWebSocketEndpoint(options: WebSocketOptions): WebSocketEndpoint {
  const { log, metrics } = options;
  const requestLog = options.requestLog ?? humanRequestLog(log);
  const limits = { ...DEFAULT_WEBSOCKET_LIMITS, ...options.limits };
  const authenticate = createAuthenticate(options.auth, options.publicUrl);
  const gate = browserGate({ ...options, auth: options.auth.mode });
  const mcpLimits = options.rateLimits?.has('mcp') ? options.rateLimits : undefined;
  const sockets = new Set<WebSocket>();
  const counts = new SocketCounts(limits);
  const budget = new WaitingBudget(limits.waitingBytes);
  /** Upgrades whose token is being checked. */
  let handshakes = 0;
  /** Sockets closed as they opened (past a cap) waiting for their client to answer, per user. */
  const refusedWaiting = new Map<string, number>();
  /** How to refuse each upgrade in progress, for the refusals ws makes itself (a bad key or version). */
  const refusers = new WeakMap<IncomingMessage, (status: number, message: string) => void>();
  let closing = false;

  const server = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    maxPayload: options.maxPayloadBytes,
    handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
  });
  /** Each upgrade's request id, sent back in the 101 answer as in every other (request-id.ts). */
  const requestIds = new WeakMap<IncomingMessage, string>();
  server.on('headers', (headers: string[], req: IncomingMessage) => {
    const id = requestIds.get(req);
    if (id !== undefined) headers.push(`${REQUEST_ID_HEADER}: ${id}`);
  });
  server.on('wsClientError', (error: Error, socket: Duplex, req: IncomingMessage) => {
    const refuse = refusers.get(req);
    if (refuse) refuse(400, `Bad request: ${error.message}.`);
    else socket.destroy();
  });

  /**
   * Closes a socket as it opens, saying which cap it met; cut off if the client does not
   * answer the close. It holds no place among the upgrades being checked (a token at its cap
   * that never answers must not block everyone's upgrades), and a user may have only a few
   * waiting for their answer: past them, a socket is cut off at once.
   */
  function refuseOpen(socket: WebSocket, refusal: CapRefusal, user: string): void {
    socket.on('error', () => {});
    const waiting = refusedWaiting.get(user) ?? 0;
    if (waiting >= REFUSED_SOCKETS_WAITING_PER_USER) {
      log(
        `ws: cut off a new socket of user ${user} at once (${refusal.code}, ` +
          `${countOf(waiting, 'socket')} already closing): ${refusal.reason}`,
      );
      socket.terminate();
      return;
    }
    log(`ws: closed a new socket of user ${user} at once (${refusal.code}): ${refusal.reason}`);
    refusedWaiting.set(user, waiting + 1);
    const cutOff = setTimeout(() => socket.terminate(), limits.refusedSocketGraceMs);
    socket.once('close', () => {
      clearTimeout(cutOff);
      const left = (refusedWaiting.get(user) ?? 1) - 1;
      if (left === 0) refusedWaiting.delete(user);
      else refusedWaiting.set(user, left);
    });
    socket.close(refusal.code, refusal.reason);
  }

  function open(
    serve: typeof serveMcpWebSocket,
    socket: WebSocket,
    first: Authenticated,
    authorization: string | undefined,
    client: string,
    subject: string,
    requestId: string,
  ): void {
    const opened = performance.now();
    const uncountOpen = metrics?.webSocketOpened();
    let who = first;
    let messages = 0;
    let answeredPing = true;
    sockets.add(socket);
    const uncount = counts.add(first.caller.user, countedToken(first, authorization));
    const ping = setInterval(() => {
      if (!answeredPing) {
        socket.terminate();
        return;
      }
      answeredPing = false;
      socket.ping();
    }, limits.pingIntervalMs);
    const idle = setTimeout(() => {
      socket.close(1000, `Closed after ${Math.round(limits.idleMs / 1000)} s without a message; connect again.`);
    }, limits.idleMs);
    socket.on('pong', () => {
      answeredPing = true;
    });
    socket.on('message', () => {
      messages++;
      idle.refresh();
    });
    socket.on('error', (error) => log(`ws: ${error.message}`));
    socket.once('close', (code) => {
      clearInterval(ping);
      clearTimeout(idle);
      sockets.delete(socket);
      uncount();
      uncountOpen?.();
      requestLog.socketClose({
        time: new Date(),
        requestId,
        client,
        user: who.caller.user,
        actor: who.caller.label,
        path: WEBSOCKET_PATH,
        code,
        messages,
        durationMs: performance.now() - opened,
      });
    });
    serve(socket, {
      handler: options.handler,
      memory: options.memory,
      policy: options.policy,
      version: options.version,
      onUnexpectedError: options.onUnexpectedError,
      maxInFlight: limits.maxInFlight,
      maxWaiting: limits.maxWaiting,
      budget,
      maxUnreadBytes: limits.maxUnreadBytes,
      who: () => who,
      admit: async () => {
        const outcome = await authenticate(authorization);
        if (outcome.ok) {
          who = outcome;
          const refused = await mcpLimits?.refusal([['mcp', subject]]);
          return refused === undefined ? true : { refused: mcpRateLimitedMessage(refused) };
        }
        socket.close(1008, TOKEN_REFUSED_REASON);
        return false;
      },
      report: log,
      onerror: (error) => log(`mcp: ${error.message}`),
    });
  }

  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const started = performance.now();
    const client = clientAddress(req, options.trustProxy ?? false);
    const requestId = requestIdOf(req);
    requestIds.set(req, requestId);
    let user: string | undefined;
    let actor: string | undefined;
    let path = '?';
    const logLine = (status: number) => {
      const durationMs = performance.now() - started;
      const label = path === WEBSOCKET_PATH ? labelOf(path) : WS_UNMATCHED;
      metrics?.request(label, status, durationMs / 1000);
      requestLog.request({
        time: new Date(),
        requestId,
        label,
        client,
        user,
        actor,
        httpMethod: req.method ?? '-',
        path,
        rpcMethod: undefined,
        tool: undefined,
        status,
        durationMs,
      });
    };
    const refuse = (status: number, message: string, headers: Record<string, string> = {}) => {
      logLine(status);
      writeRefusal(socket, status, message, { ...headers, [REQUEST_ID_HEADER]: requestId });
    };
    // Node no longer watches an upgraded socket: a client that resets it must not take the server down.
    const onEarlyError = () => socket.destroy();
    socket.on('error', onEarlyError);

    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://engram');
    } catch {
      refuse(400, 'Bad request: the request target cannot be read.');
      return;
    }
    path = url.pathname;
    if (closing) {
      refuse(503, 'Service unavailable: the server is shutting down.');
      return;
    }
    const repeated = repeatedHeader(req);
    if (repeated !== undefined) {
      refuse(400, `Bad request: the ${repeated} header is sent more than once; send it once.`);
      return;
    }
    const refused = gate.host(req.headers.host) ?? gate.origin(req.headers.origin);
    if (refused !== undefined) {
      refuse(refused.status, refused.message);
      return;
    }
    if (req.headers.upgrade?.toLowerCase() !== 'websocket') {
      // Node 20 hands every request that asks to upgrade here, its parser already detached: one that
      // asks for anything but WebSocket (curl --http2 asking for h2c) cannot be served as plain
      // HTTP/1.1 any more, so it is told plainly to ask again without Upgrade (docs/websocket.md).
      refuse(
        400,
        `Bad request: Engram does not switch protocols (Upgrade: ${req.headers.upgrade ?? ''}); send the request ` +
          'again without Upgrade (with curl, --http1.1 instead of --http2). MCP over WebSocket is at ' +
          `${WEBSOCKET_PATH} (Upgrade: websocket).`,
      );
      return;
    }
    if (path !== WEBSOCKET_PATH) {
      refuse(
        404,
        `Not found: ${path} takes no protocol upgrade (Upgrade: ${req.headers.upgrade}); send the request ` +
          `without asking to upgrade. Engram serves MCP over WebSocket at ${WEBSOCKET_PATH}.`,
      );
      return;
    }
    if (req.method !== 'GET') {
      refuse(400, `Bad request: ${WEBSOCKET_PATH} takes a WebSocket upgrade (GET with Upgrade: websocket).`);
      return;
    }
    if (!subprotocols(req).includes(SUBPROTOCOL)) {
      refuse(
        400,
        `Bad request: ask for the WebSocket subprotocol "${SUBPROTOCOL}" (Sec-WebSocket-Protocol: ${SUBPROTOCOL}), as MCP clients do.`,
      );
      return;
    }
    const credentials = presentedCredentials(req, url);
    if ('refusal' in credentials) {
      refuse(400, credentials.refusal);
      return;
    }
    if (handshakes >= limits.handshakes) {
      refuse(
        503,
        `Service unavailable: ${countOf(limits.handshakes, 'WebSocket connection')} being opened at once is the ` +
          'most the server checks at a time. Try again in a moment.',
        { 'Retry-After': '1' },
      );
      return;
    }
    handshakes++;
    let checking = true;
    const checked = () => {
      if (!checking) return;
      checking = false;
      handshakes--;
    };
    socket.once('close', checked);
    // The MCP SDK loads with the first upgrade (see app.ts), beside the token check.
    Promise.all([authenticate(credentials.authorization), import('../mcp/websocket.js')])
      .then(([outcome, mcp]) => {
        if (!outcome.ok) {
          refuse(401, outcome.message, { 'WWW-Authenticate': outcome.challenge });
          return;
        }
        user = outcome.caller.user;
        actor = outcome.caller.label;
        if (closing) {
          refuse(503, 'Service unavailable: the server is shutting down.');
          return;
        }
        if (socket.destroyed) {
          checked();
          return;
        }
        refusers.set(req, refuse);
        server.handleUpgrade(req, socket, head, (webSocket) => {
          socket.off('error', onEarlyError);
          logLine(101);
          checked();
          const refusal = counts.refusal(outcome.caller.user, countedToken(outcome, credentials.authorization));
          if (refusal !== undefined) {
            refuseOpen(webSocket, refusal, outcome.caller.user);
            return;
          }
          const subject = tokenSubject(req, credentials.authorization, options.trustProxy ?? false);
          open(mcp.serveMcpWebSocket, webSocket, outcome, credentials.authorization, client, subject, requestId);
        });
      })
      .catch((error: unknown) => {
        // A store failing while the token is checked keeps its status and words, as on /mcp.
        if (isEngramError(error)) {
          refuse(STATUS_BY_CODE[error.code], error.message, retryAfterHeaders(error.code));
          return;
        }
        log(`internal error: ${error instanceof Error ? error.stack : String(error)}`);
        refuse(500, INTERNAL_ERROR_MESSAGE);
      });
  };

  return {
    upgrade,
    async close(graceMs) {
      closing = true;
      const open = [...sockets];
      if (open.length === 0) return;
      const closed = open.map((socket) => new Promise<void>((resolve) => socket.once('close', () => resolve())));
      const cutOff = setTimeout(() => {
        for (const socket of open) socket.terminate();
      }, graceMs);
      for (const socket of open) socket.close(1001, SHUTTING_DOWN_REASON);
      await Promise.all(closed);
      clearTimeout(cutOff);
    },
  };
}
