/**
 * MCP over WebSocket at /ws, driven by the MCP SDK's own WebSocketClientTransport (v1)
 * where a client can do it, and by the `ws` client where the test must see what no MCP
 * client shows: the HTTP answer that refuses an upgrade, close codes, raw messages. The
 * same tools as /mcp; the token as a header or as the `access_token` parameter of /ws
 * only; every refusal made before the socket opens; the limits of an open socket
 * (size, requests at once, silence, pings); a revoked token and a closing server end the
 * socket; and the log shows who and how long, never the token.
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { type ClientOptions, WebSocket } from 'ws';
import type { Access } from '../../src/access/tokens/access.js';
import { createApp } from '../../src/app.js';
import { startHttpServer } from '../../src/http/server.js';
import { EngramError } from '../../src/memory/model/errors.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';
import { JSON_HEADERS, postRpc, raw, rpc, rpcMessage, startTestServer, type TestServer } from './fixtures.js';
import { sendUntilClosed } from './raw-socket.js';

// Node 20 has no global WebSocket: the SDK's transport takes the global one, as in a browser.
beforeAll(() => {
  vi.stubGlobal('WebSocket', WebSocket);
});
afterAll(() => {
  vi.unstubAllGlobals();
});

const WRONG =
  'The token was not accepted: it is wrong or has been revoked. Ask the owner of this server for a token ' +
  '(engram token create --user NAME) and send it as "Authorization: Bearer <token>".';

function wsUrl(port: number, token?: string): string {
  return `ws://127.0.0.1:${port}/ws${token === undefined ? '' : `?access_token=${encodeURIComponent(token)}`}`;
}

/** The SDK v1 client over its WebSocket transport, closed when the test ends. */
async function connectSdk(port: number, options: { token?: string; clientName?: string } = {}): Promise<Client> {
  const client = new Client({ name: options.clientName ?? 'ws-test', version: '1.0.0' });
  await client.connect(new WebSocketClientTransport(new URL(wsUrl(port, options.token))));
  onTestFinished(() => client.close());
  return client;
}

async function callTool(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  return { text: content.map((block) => block.text).join(''), isError: result.isError === true };
}

interface Refused {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** Asks for an upgrade that must be refused, and returns the HTTP answer. */
function refusedUpgrade(url: string, protocols: string[] = ['mcp'], options: ClientOptions = {}): Promise<Refused> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocols, options);
    socket.on('error', () => {});
    socket.on('open', () => {
      socket.close();
      reject(new Error('the socket opened'));
    });
    socket.on('unexpected-response', (_request, response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => {
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body });
        socket.terminate();
      });
    });
  });
}

function refusalMessage(refused: Refused): string {
  return (JSON.parse(refused.body) as { error: { message: string } }).error.message;
}

interface RawSocket {
  readonly socket: WebSocket;
  /** The next message the server sends, parsed. */
  next(): Promise<{ id?: unknown; result?: unknown; error?: { code: number; message: string } }>;
  readonly closed: Promise<{ code: number; reason: string }>;
}

/** A socket opened by the `ws` client, which shows close codes and raw messages. */
function openRaw(url: string, options: ClientOptions = {}, protocols: string[] = ['mcp']): Promise<RawSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocols, options);
    onTestFinished(() => socket.terminate());
    const queue: string[] = [];
    const waiting: ((text: string) => void)[] = [];
    socket.on('message', (data) => {
      const text = String(data);
      const waiter = waiting.shift();
      if (waiter) waiter(text);
      else queue.push(text);
    });
    const closed = new Promise<{ code: number; reason: string }>((done) =>
      socket.on('close', (code, reason) => done({ code, reason: reason.toString() })),
    );
    socket.on('error', reject);
    socket.on('unexpected-response', (_request, response) => reject(new Error(`refused: ${response.statusCode}`)));
    socket.on('open', () =>
      resolve({
        socket,
        closed,
        next: async () => {
          const text = queue.shift() ?? (await new Promise<string>((done) => waiting.push(done)));
          return JSON.parse(text);
        },
      }),
    );
  });
}

const INITIALIZE = rpc(
  'initialize',
  { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  0,
);

/** Opens a raw socket and completes the 2025 handshake on it. */
async function initializedRaw(url: string): Promise<RawSocket> {
  const raw = await openRaw(url);
  raw.socket.send(INITIALIZE);
  expect((await raw.next()).id).toBe(0);
  raw.socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  return raw;
}

describe('MCP over WebSocket: the same memory as /mcp', () => {
  it('lists exactly the three tools, defined as /mcp serves them', async () => {
    const server = await startTestServer();
    const client = await connectSdk(server.port);
    const overWs = (await client.listTools()).tools;
    const overHttp = (rpcMessage(await postRpc(server.port, rpc('tools/list'))).result as { tools: unknown[] }).tools;
    expect(overWs.map((tool) => tool.name).sort()).toEqual(['memory_drop', 'memory_open', 'memory_write']);
    expect(overWs).toEqual(overHttp);
  });

  it('writes, then opens, over one socket; without auth, history names the MCP client', async () => {
    const server = await startTestServer();
    const client = await connectSdk(server.port, { clientName: 'llama.cpp WebUI' });
    const written = await callTool(client, 'memory_write', {
      name: 'topics/me',
      description: 'Who I am',
      new: 'Name: Ada.',
    });
    expect(written.isError).toBe(false);
    expect(await callTool(client, 'memory_open', { names: ['topics/me'] })).toMatchObject({
      isError: false,
      text: expect.stringContaining('Name: Ada.'),
    });
    expect((await server.store.history('local', 'topics/me')).map((revision) => revision.actor)).toEqual([
      'llama.cpp WebUI',
    ]);
  });
});

describe('MCP over WebSocket: the token', () => {
  it('comes as the access_token parameter of /ws (what the SDK transport and a browser can send); history names the token', async () => {
    const server = await startTestServer({ auth: 'token' });
    const { token } = await server.access.create({ user: 'ada', label: 'phone' });
    const client = await connectSdk(server.port, { token, clientName: 'ignored' });
    expect((await callTool(client, 'memory_write', { name: 'topics/me', description: 'Me', new: 'x' })).isError).toBe(
      false,
    );
    expect((await server.store.history('ada', 'topics/me')).map((revision) => revision.actor)).toEqual(['phone']);
    expect(await server.memory.index({ user: 'local', label: 'test' })).toEqual([]);
  });

  it('or as the Authorization header of the upgrade', async () => {
    const server = await startTestServer({ auth: 'token' });
    const { token } = await server.access.create({ user: 'ada' });
    const withHeader = await openRaw(wsUrl(server.port), { headers: { Authorization: `Bearer ${token}` } });
    withHeader.socket.send(INITIALIZE);
    expect((await withHeader.next()).id).toBe(0);
  });

  it.each([
    ['no token', undefined],
    ['a wrong token', 'engram_not-a-real-token'],
  ])('with %s: 401 before the upgrade, with the same challenge and words as /mcp', async (_, token) => {
    const server = await startTestServer({ auth: 'token' });
    const refused = await refusedUpgrade(wsUrl(server.port, token));
    const overHttp = await postRpc(
      server.port,
      rpc('tools/list'),
      token === undefined ? {} : { Authorization: `Bearer ${token}` },
    );
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe(overHttp.headers['www-authenticate']);
    expect(refusalMessage(refused)).toBe(rpcMessage(overHttp).error?.message);
    if (token !== undefined) expect(refusalMessage(refused)).toBe(WRONG);
  });

  it('a wrong token fails the SDK client at connect', async () => {
    const server = await startTestServer({ auth: 'token' });
    await expect(connectSdk(server.port, { token: 'engram_wrong' })).rejects.toThrow();
  });

  it('sent both as a header and as the parameter: 400', async () => {
    const server = await startTestServer({ auth: 'token' });
    const { token } = await server.access.create({ user: 'ada' });
    const refused = await refusedUpgrade(wsUrl(server.port, token), ['mcp'], {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(refused.status).toBe(400);
    expect(refusalMessage(refused)).toMatch(/sent twice/);
  });

  it('sent twice as the parameter: 400', async () => {
    const server = await startTestServer({ auth: 'token' });
    const refused = await refusedUpgrade(`${wsUrl(server.port, 'a')}&access_token=b`);
    expect(refused.status).toBe(400);
    expect(refusalMessage(refused)).toBe('Bad request: the access_token parameter is sent more than once.');
  });

  it('that cannot be checked (the database is unreachable): 503 before the upgrade; on an open socket the request is answered with why, and the socket stays open', async () => {
    const UNREACHABLE = "The memory's database cannot be reached. Nothing was changed; try again in a moment.";
    let reachable = true;
    const access = {
      authenticate: async () => {
        if (!reachable) throw new EngramError('STORE_UNAVAILABLE', UNREACHABLE);
        return { user: 'ada', label: 'phone', readOnly: false };
      },
    } as unknown as Access;
    const running = await startHttpServer({
      app: { ...createApp({ store: openMemoryStore() }), access },
      handler: async () => ({ text: 'done', isError: false }),
      version: '0.0.0-test',
      auth: { mode: 'token' },
      host: '127.0.0.1',
      port: 0,
      log: () => {},
    });
    onTestFinished(() => running.close());
    const socket = await initializedRaw(wsUrl(running.port, 'engram_token'));
    reachable = false;
    socket.socket.send(rpc('ping', undefined, 5));
    expect(await socket.next()).toEqual({ jsonrpc: '2.0', id: 5, error: { code: -32603, message: UNREACHABLE } });
    const refused = await refusedUpgrade(wsUrl(running.port, 'engram_token'));
    expect(refused.status).toBe(503);
    expect(refusalMessage(refused)).toBe(UNREACHABLE);
    reachable = true;
    socket.socket.send(rpc('ping', undefined, 6));
    expect(await socket.next()).toEqual({ jsonrpc: '2.0', id: 6, result: {} });
  });

  it('is never taken from the query on another route: /mcp?access_token= is still 401', async () => {
    const server = await startTestServer({ auth: 'token' });
    const { token } = await server.access.create({ user: 'ada' });
    const response = await raw(server.port, {
      method: 'POST',
      path: `/mcp?access_token=${token}`,
      headers: JSON_HEADERS,
      body: rpc('tools/list'),
    });
    expect(response.status).toBe(401);
    const api = await raw(server.port, { path: `/api/entries?access_token=${token}` });
    expect(api.status).toBe(401);
  });

  it('a read-only token reads but cannot write', async () => {
    const server = await startTestServer({ auth: 'token' });
    const { token } = await server.access.create({ user: 'ada', readOnly: true });
    const client = await connectSdk(server.port, { token });
    const refused = await callTool(client, 'memory_write', { name: 'topics/me', description: 'Me', new: 'x' });
    expect(refused).toMatchObject({ isError: true, text: expect.stringContaining('read-only') });
    expect((await callTool(client, 'memory_open')).isError).toBe(false);
    expect(await server.memory.index({ user: 'ada', label: 'test' })).toEqual([]);
  });

  it('revoked while the socket is open: the next message closes it (1008) unanswered', async () => {
    const server = await startTestServer({ auth: 'token' });
    const { token, info } = await server.access.create({ user: 'ada' });
    const socket = await initializedRaw(wsUrl(server.port, token));
    await server.access.revoke(info.id);
    socket.socket.send(rpc('tools/call', { name: 'memory_write', arguments: { name: 'a/b', description: 'x' } }, 7));
    expect(await socket.closed).toEqual({
      code: 1008,
      reason: 'The token is no longer accepted: it was revoked or has expired.',
    });
    expect(await server.memory.index({ user: 'ada', label: 'test' })).toEqual([]);
  });
});

describe('MCP over WebSocket: refused before the socket opens', () => {
  it('a page from a forbidden origin (403); this computer’s pages may', async () => {
    const server = await startTestServer();
    const refused = await refusedUpgrade(wsUrl(server.port), ['mcp'], { origin: 'https://evil.example' });
    expect(refused.status).toBe(403);
    expect(refusalMessage(refused)).toMatch(/^Forbidden: pages from https:\/\/evil\.example may not use this memory/);
    const allowed = await openRaw(wsUrl(server.port), { origin: 'http://localhost:5173' });
    allowed.socket.close();
  });

  it('a Host other than a loopback name on a loopback server (DNS rebinding): 403', async () => {
    const server = await startTestServer();
    const refused = await refusedUpgrade(wsUrl(server.port), ['mcp'], { headers: { Host: 'evil.example' } });
    expect(refused.status).toBe(403);
    expect(refusalMessage(refused)).toBe(
      'Forbidden: this server answers only to localhost, 127.0.0.1 (any 127.x.y.z) and [::1], not to Host "evil.example". ' +
        'To reach it under another name, start engram serve with --public-url set to the address people use.',
    );
  });

  it('a client that does not ask for the "mcp" subprotocol: 400, saying so', async () => {
    const server = await startTestServer();
    for (const protocols of [[], ['graphql-ws']]) {
      const refused = await refusedUpgrade(wsUrl(server.port), protocols);
      expect(refused.status).toBe(400);
      expect(refusalMessage(refused)).toMatch(/subprotocol "mcp"/);
    }
  });

  it('an Authorization header sent twice: 400', async () => {
    const server = await startTestServer({ auth: 'token' });
    const answer = await sendUntilClosed(
      server.port,
      'GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
        'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: mcp\r\n' +
        'Authorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n',
    );
    expect(answer.status).toBe(400);
    expect(answer.text).toMatch(/the Authorization header is sent more than once/);
  });

  it('a handshake the WebSocket protocol itself refuses (a bad key): 400, as JSON-RPC, and logged', async () => {
    const server = await startTestServer();
    const answer = await sendUntilClosed(
      server.port,
      'GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
        'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\nSec-WebSocket-Protocol: mcp\r\n\r\n',
    );
    expect(answer.status).toBe(400);
    expect(answer.text).toContain(
      '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad request: Missing or invalid Sec-WebSocket-Key header."},"id":null}',
    );
    expect(server.logs.at(-1)).toMatch(/ user=local GET \/ws method=- tool=- status=400 \d+ms$/);
  });

  it('an upgrade to any other path: 404', async () => {
    const server = await startTestServer();
    const refused = await refusedUpgrade(`ws://127.0.0.1:${server.port}/mcp`);
    expect(refused.status).toBe(404);
    expect(refusalMessage(refused)).toBe(
      'Not found: /mcp takes no protocol upgrade (Upgrade: websocket); send the request without asking to upgrade. ' +
        'Engram serves MCP over WebSocket at /ws.',
    );
  });

  it.each([
    ['a POST to /mcp', 'POST /mcp', rpc('tools/list')],
    ['a GET of /healthz', 'GET /healthz', ''],
    ['a GET of /ws', 'GET /ws', ''],
  ])(
    '%s that asks to upgrade to h2c (curl --http2 on http://): 400 saying to send it without Upgrade, never 404',
    async (_, line, body) => {
      const server = await startTestServer();
      const answer = await sendUntilClosed(
        server.port,
        `${line} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n` +
          `HTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      expect(answer.status).toBe(400);
      expect(answer.headers.connection).toBe('close');
      expect(answer.text).toContain(
        '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad request: Engram does not switch protocols (Upgrade: h2c); ' +
          'send the request again without Upgrade (with curl, --http1.1 instead of --http2). ' +
          'MCP over WebSocket is at /ws (Upgrade: websocket)."},"id":null}',
      );
    },
  );
});

describe('MCP over WebSocket: an open socket', () => {
  it('answers a message that is not JSON, or nests too deep, with a JSON-RPC error and goes on', async () => {
    const server = await startTestServer();
    const socket = await initializedRaw(wsUrl(server.port));
    socket.socket.send('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(await socket.next()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error: the message is not valid JSON.' },
    });
    socket.socket.send(`${'['.repeat(100)}${']'.repeat(100)}`);
    expect((await socket.next()).error?.code).toBe(-32600);
    socket.socket.send(rpc('ping', undefined, 2));
    expect(await socket.next()).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
  });

  it('closes with 1009 on a message over the size cap, and keeps serving the others', async () => {
    const server = await startTestServer({ maxBodyBytes: 4096 });
    const other = await connectSdk(server.port);
    const socket = await initializedRaw(wsUrl(server.port));
    socket.socket.send(rpc('ping', { padding: 'x'.repeat(5000) }, 1));
    expect((await socket.closed).code).toBe(1009);
    expect((await other.listTools()).tools).toHaveLength(3);
    expect((await (await connectSdk(server.port)).listTools()).tools).toHaveLength(3);
  });

  it('outlives the HTTP request timeouts: an open socket is not a slow request', async () => {
    const server = await startTestServer({ timeouts: { headersMs: 100, requestMs: 100, checkIntervalMs: 20 } });
    const socket = await initializedRaw(wsUrl(server.port));
    await new Promise((resolve) => setTimeout(resolve, 400));
    socket.socket.send(rpc('ping', undefined, 1));
    expect(await socket.next()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  it('closes after a silence longer than the idle limit (1000, saying why)', async () => {
    const server = await startTestServer({ webSocketLimits: { idleMs: 100 } });
    const socket = await initializedRaw(wsUrl(server.port));
    const closed = await socket.closed;
    expect(closed.code).toBe(1000);
    expect(closed.reason).toMatch(/without a message/);
  });

  it('cuts off a client that does not answer pings', async () => {
    const server = await startTestServer({ webSocketLimits: { pingIntervalMs: 50 } });
    const socket = await openRaw(wsUrl(server.port), { autoPong: false });
    let pings = 0;
    socket.socket.on('ping', () => {
      pings++;
    });
    expect((await socket.closed).code).toBe(1006);
    expect(pings).toBe(1);
  });

  it('refuses requests beyond the ones it serves at once, with a JSON-RPC error', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const running = await startHttpServer({
      app: createApp({ store: openMemoryStore() }),
      handler: async () => {
        await gate;
        return { text: 'done', isError: false };
      },
      version: '0.0.0-test',
      auth: { mode: 'none', user: 'local' },
      host: '127.0.0.1',
      port: 0,
      log: () => {},
      webSocketLimits: { maxInFlight: 2 },
    });
    onTestFinished(() => running.close());
    const socket = await initializedRaw(wsUrl(running.port));
    const call = (id: number) => rpc('tools/call', { name: 'memory_open', arguments: {} }, id);
    for (const id of [1, 2, 3]) socket.socket.send(call(id));
    expect(await socket.next()).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: {
        code: -32000,
        message:
          'Too many requests at once: this connection serves at most 2 at a time. Wait for an answer before sending more.',
      },
    });
    release();
    const answered = [await socket.next(), await socket.next()];
    expect(answered.map((message) => message.id).sort()).toEqual([1, 2]);
    socket.socket.send(call(4));
    expect(await socket.next()).toMatchObject({ id: 4, result: { content: [{ type: 'text', text: 'done' }] } });
  });

  it('is closed (1001) when the server closes, and close() then completes', async () => {
    const server = await startTestServer();
    const socket = await initializedRaw(wsUrl(server.port));
    const client = await connectSdk(server.port);
    const sdkClosed = new Promise<void>((resolve) => {
      client.onclose = resolve;
    });
    await server.close();
    expect(await socket.closed).toEqual({ code: 1001, reason: 'The server is shutting down.' });
    await sdkClosed;
  });
});

describe('MCP over WebSocket: the log', () => {
  async function tokenServer(): Promise<{ server: TestServer; token: string }> {
    const server = await startTestServer({ auth: 'token' });
    const { token } = await server.access.create({ user: 'ada' });
    return { server, token };
  }

  it('has one line when a socket opens and one when it closes, with its user, and never the token', async () => {
    const { server, token } = await tokenServer();
    const client = await connectSdk(server.port, { token });
    await client.listTools();
    await client.close();
    await refusedUpgrade(wsUrl(server.port, `${token}x`));
    await vi.waitFor(() => expect(server.logs.some((line) => / WS \/ws closed /.test(line))).toBe(true));
    const opened = server.logs.filter((line) => line.includes(' GET /ws '));
    expect(opened).toHaveLength(2);
    expect(opened[0]).toMatch(/ user=ada GET \/ws method=- tool=- status=101 \d+ms$/);
    expect(opened[1]).toMatch(/ user=- GET \/ws method=- tool=- status=401 \d+ms$/);
    expect(server.logs.find((line) => line.includes(' WS /ws closed '))).toMatch(
      / client=127\.0\.0\.1 user=ada WS \/ws closed code=1005 messages=3 \d+ms$/,
    );
    for (const line of server.logs) expect(line).not.toContain(token);
  });
});
