/**
 * The HTTP app called in-process, for the tests of `/api` where a socket adds nothing: the
 * app `engram serve` runs (its gates, routes and request log), over the in-process store,
 * each request handed to its (req, res) listener by light-my-request — no port, no file,
 * no server to start or close. Tests of keep-alive, timeouts, slow clients, streamed
 * bodies and answers, WebSockets or closing use the real server (fixtures.ts), and so do
 * those of the request log's status: it is what the socket took (here every answer is
 * logged as cut off, 499, the injected socket taking its bytes a turn later).
 */

import { Readable } from 'node:stream';
import inject from 'light-my-request';
import { onTestFinished } from 'vitest';
import type { Accounts } from '../../src/access/accounts/accounts.js';
import type { Access } from '../../src/access/tokens/access.js';
import { createApp } from '../../src/app.js';
import { createHttpApp } from '../../src/http/app.js';
import { authSettings } from '../../src/http/auth.js';
import type { Memory } from '../../src/memory/memory.js';
import type { Policy } from '../../src/memory/model/policy.js';
import { createToolHandler } from '../../src/memory/tools/handler.js';
import { type MemoryStore, openMemoryStore } from '../../src/storage/memory/index.js';
import type { Transfer } from '../../src/transfer/transfer.js';
import { TEST_PASSWORD_COST } from '../helpers/password-cost.js';
import type { RawRequest, RawResponse } from './fixtures.js';

/** Where the app believes it listens, as `engram serve` by default: requests are addressed to it. */
const LISTENING = new URL('http://127.0.0.1:8787');

export interface TestApp {
  /** http://127.0.0.1:8787: the app's own origin, the one its web UI's pages send. */
  readonly origin: string;
  readonly memory: Memory;
  /** Export, import and wipe, the very service the app's /api calls. */
  readonly transfer: Transfer;
  readonly access: Access;
  /** Accounts and browser sessions: the web UI's sign-in (with --auth token). */
  readonly accounts: Accounts;
  readonly store: MemoryStore;
  /** Every line the app logged, in order. */
  readonly logs: string[];
  /** One request, answered as a client on loopback would receive it (as fixtures.ts's raw). */
  request(req: RawRequest): Promise<RawResponse>;
}

export interface TestAppOptions {
  readonly auth?: 'none' | 'token';
  /** --public-url. */
  readonly publicUrl?: URL;
  readonly maxBodyBytes?: number;
  readonly maxImportBytes?: number;
  /** The memory's policy, over the defaults (caps, trash retention). */
  readonly policy?: Partial<Policy>;
  /** The memory's clock (Date.now by default): the time its changes are recorded at. */
  readonly now?: () => number;
}

/**
 * A body as Node's client sends it: with Content-Length, unless the request says
 * `Transfer-Encoding: chunked` (then as a stream, its length unknown to the app).
 */
function payloadOf(req: RawRequest): string | Readable | undefined {
  if (req.body === undefined) return undefined;
  const chunked = Object.entries(req.headers ?? {}).some(
    ([name, value]) => name.toLowerCase() === 'transfer-encoding' && String(value).toLowerCase() === 'chunked',
  );
  return chunked ? Readable.from([Buffer.from(req.body)]) : req.body;
}

/** The answer's headers as Node's client gives them: Set-Cookie always a list, any other header repeated joined by commas. */
function asReceived(headers: Record<string, string | string[] | number | undefined>): RawResponse['headers'] {
  const received: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (name === 'set-cookie') received[name] = Array.isArray(value) ? value : [String(value)];
    else received[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return received;
}

/** The app over a fresh in-process store; its store is closed when the test ends. */
export function startTestApp(options: TestAppOptions = {}): TestApp {
  const store = openMemoryStore();
  const app = createApp({
    store,
    policy: options.policy,
    now: options.now,
    access: { passwordCost: TEST_PASSWORD_COST },
  });
  const logs: string[] = [];
  const http = createHttpApp({
    app,
    handler: createToolHandler(app.memory),
    version: '0.0.0-test',
    auth: authSettings(app, options.auth === 'token' ? { mode: 'token' } : { mode: 'none', user: 'local' }),
    loopbackOnly: true,
    listeningOrigin: LISTENING.origin,
    publicUrl: options.publicUrl,
    maxBodyBytes: options.maxBodyBytes,
    maxImportBytes: options.maxImportBytes,
    log: (line) => logs.push(line),
  });
  onTestFinished(() => http.close().then(() => app.close()));
  return {
    origin: LISTENING.origin,
    memory: app.memory,
    transfer: app.transfer,
    access: app.access,
    accounts: app.accounts,
    store,
    logs,
    async request(req) {
      const response = await inject(http.listener, {
        method: (req.method ?? 'GET') as 'GET',
        url: req.path ?? '/mcp',
        // Node's client names the host it connects to, unless the request names another.
        headers: { host: LISTENING.host, ...req.headers },
        payload: payloadOf(req),
      });
      return { status: response.statusCode, headers: asReceived(response.headers), body: response.payload };
    },
  };
}
