/**
 * What the HTTP tests share: an `engram serve` app started in-process on a free port over
 * a fresh SQLite file (closed and removed when the test ends), with its log lines
 * captured; and a raw HTTP client that sets any header, as browsers and attackers do.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import type { Accounts } from '../../src/access/accounts/accounts.js';
import { parseRateLimits, resolveRateLimits } from '../../src/access/rate-limits/rules.js';
import type { Access } from '../../src/access/tokens/access.js';
import { createApp } from '../../src/app.js';
import type { Timeouts } from '../../src/http/limits.js';
import { type HttpServerOptions, startHttpServer } from '../../src/http/server.js';
import type { WebSocketLimits } from '../../src/http/websocket.js';
import type { Memory } from '../../src/memory/memory.js';
import type { Policy } from '../../src/memory/model/policy.js';
import { openSqliteStore, type SqliteStore } from '../../src/storage/sqlite/index.js';
import type { Transfer } from '../../src/transfer/transfer.js';
import { TEST_PASSWORD_COST } from '../helpers/password-cost.js';

export interface TestServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:40123/mcp. */
  readonly url: string;
  readonly port: number;
  readonly memory: Memory;
  /** Export, import and wipe, the very service the server's /api calls. */
  readonly transfer: Transfer;
  readonly access: Access;
  /** Accounts and browser sessions: the web UI's sign-in (with --auth token). */
  readonly accounts: Accounts;
  readonly store: SqliteStore;
  readonly db: string;
  /** Every line the server logged, in order. */
  readonly logs: string[];
  close(): Promise<void>;
}

export interface TestServerOptions {
  readonly auth?: 'none' | 'token';
  readonly allowOrigins?: readonly string[];
  readonly host?: string;
  /** --public-url. */
  readonly publicUrl?: URL;
  /** How long close() lets requests in flight run before cutting them off (10 s by default). */
  readonly closeGraceMs?: number;
  readonly timeouts?: Partial<Timeouts>;
  readonly maxBodyBytes?: number;
  readonly maxImportBytes?: number;
  readonly webSocketLimits?: Partial<WebSocketLimits>;
  /** Reuse the database file of an earlier server. */
  readonly db?: string;
  /** The memory's policy, over the defaults (caps, trash retention). */
  readonly policy?: Partial<Policy>;
  /** The memory's clock (Date.now by default): the time its changes are recorded at. */
  readonly now?: () => number;
  /** The folder the web UI is served from, in place of the built one. */
  readonly webRoot?: string;
  /**
   * The MCP fast path (docs/accelerators.md); by default as ENGRAM_ACCEL_HTTP_FAST_PATH
   * says, as `engram serve` reads it, so that the suites run with it off as well as on.
   */
  readonly mcpFastPath?: boolean;
  /** Rate limits as --rate-limit writes them, over the defaults of the auth mode; none when absent. */
  readonly rateLimit?: string;
  /** Honour X-Forwarded-For, as behind a proxy (--trust-proxy). */
  readonly trustProxy?: boolean;
  /** `engram serve --metrics`, with its token. */
  readonly metrics?: { readonly token?: string };
  /** What /metrics tells of the last good backup. */
  readonly backupStatus?: HttpServerOptions['backupStatus'];
}

/** A fresh folder removed when the current test finishes. */
export function testFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'engram-http-'));
  onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
  return folder;
}

/** Starts the app on a free port; it is stopped and its store closed when the test ends. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const db = options.db ?? join(testFolder(), 'memory.db');
  const store = openSqliteStore({ path: db });
  const app = createApp({
    store,
    policy: options.policy,
    now: options.now,
    access: { passwordCost: TEST_PASSWORD_COST },
  });
  const logs: string[] = [];
  const host = options.host ?? '127.0.0.1';
  const auth = options.auth ?? 'none';
  const rateLimits =
    options.rateLimit === undefined
      ? undefined
      : await app.rateLimits(resolveRateLimits(auth, [parseRateLimits(options.rateLimit)]));
  const server = await startHttpServer({
    app,
    version: '0.0.0-test',
    auth: auth === 'token' ? { mode: 'token' } : { mode: 'none', user: 'local' },
    allowOrigins: options.allowOrigins ?? [],
    host,
    port: 0,
    log: (line) => logs.push(line),
    publicUrl: options.publicUrl,
    timeouts: options.timeouts,
    closeGraceMs: options.closeGraceMs,
    maxBodyBytes: options.maxBodyBytes,
    maxImportBytes: options.maxImportBytes,
    webSocketLimits: options.webSocketLimits,
    webRoot: options.webRoot,
    mcpFastPath: options.mcpFastPath ?? process.env.ENGRAM_ACCEL_HTTP_FAST_PATH !== '0',
    rateLimits,
    trustProxy: options.trustProxy,
    metrics: options.metrics,
    backupStatus: options.backupStatus,
  });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= server.close().then(() => app.close());
    return closing;
  };
  onTestFinished(close);
  const address = host === '0.0.0.0' ? '127.0.0.1' : host;
  return {
    url: `http://${address}:${server.port}/mcp`,
    port: server.port,
    memory: app.memory,
    transfer: app.transfer,
    access: app.access,
    accounts: app.accounts,
    store,
    db,
    logs,
    close,
  };
}

export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface RawRequest {
  readonly method?: string;
  readonly path?: string;
  readonly headers?: Record<string, string | number>;
  readonly body?: string;
}

/** One HTTP request to 127.0.0.1:`port` with exactly these headers (Host included). */
export function raw(port: number, req: RawRequest = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: '127.0.0.1', port, method: req.method ?? 'GET', path: req.path ?? '/mcp', headers: req.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

export const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

/** A JSON-RPC request body. */
export function rpc(method: string, params?: unknown, id = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
}

/** The JSON-RPC message of a response, whether sent as JSON or as one SSE event. */
export function rpcMessage(response: RawResponse): { result?: unknown; error?: { code: number; message: string } } {
  const json = response.headers['content-type']?.startsWith('text/event-stream')
    ? response.body
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length))
        .join('')
    : response.body;
  return JSON.parse(json);
}

/** POSTs one JSON-RPC request to /mcp as an MCP client would, with any extra headers. */
export function postRpc(port: number, body: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return raw(port, { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body });
}
