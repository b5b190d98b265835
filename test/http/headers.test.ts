/**
 * Header tricks no ordinary client plays, on every path: a Host, Origin or Authorization
 * header sent twice (a proxy in front may act on the other copy) is refused; a Host that
 * merely parses to a loopback name is refused; every answer, whoever writes it, says
 * `X-Content-Type-Options: nosniff`; and a client that asks to close gets
 * `Connection: close` and a closed connection.
 */

import { describe, expect, it } from 'vitest';
import { api, LOCAL } from './api-client.js';
import {
  JSON_HEADERS,
  postRpc,
  type RawResponse,
  raw,
  rpc,
  rpcMessage,
  startTestServer,
  type TestServer,
} from './fixtures.js';
import { request, sendUntilClosed } from './raw-socket.js';

const INITIALIZE = rpc('initialize', {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 'header-test', version: '1' },
});
const WRITE = rpc('tools/call', {
  name: 'memory_write',
  arguments: { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' },
});
const JSON_LINES = Object.entries(JSON_HEADERS).map(([name, value]) => `${name}: ${value}`);

describe('a header sent twice', () => {
  it.each([
    ['/mcp', 'Authorization'],
    ['/mcp', 'Host'],
    ['/api/entries', 'Authorization'],
    ['/api/entries', 'Origin'],
  ])('is refused with 400 on %s (%s), whichever copy is the good one', async (path, name) => {
    const server = await startTestServer({ auth: 'token' });
    const { token } = await server.access.create({ user: 'local', label: 'test' });
    const good: Record<string, string> = {
      Authorization: `Bearer ${token}`,
      Host: '127.0.0.1',
      Origin: 'http://127.0.0.1:8080',
    };
    const bad: Record<string, string> = {
      Authorization: 'Bearer engram_forged',
      Host: 'evil.example',
      Origin: 'https://evil.example',
    };
    const message = `Bad request: the ${name} header is sent more than once; send it once.`;
    for (const copies of [
      [good[name], bad[name]],
      [bad[name], good[name]],
    ]) {
      const others = Object.entries(good)
        .filter(([other]) => other !== name)
        .map(([other, value]) => `${other}: ${value}`);
      const lines = [...others, ...copies.map((value) => `${name}: ${value}`), ...JSON_LINES];
      const answer = await sendUntilClosed(server.port, request('POST', path, lines, WRITE));
      expect(answer.status).toBe(400);
      expect(answer.text).toContain(message);
    }
    expect(await server.memory.index(LOCAL)).toEqual([]);
  });

  it('is refused whatever the case of its name, and a header of the same length is not taken for it', async () => {
    const server = await startTestServer();
    const twice = await sendUntilClosed(
      server.port,
      request('POST', '/mcp', ['host: 127.0.0.1', 'HOST: evil.example', ...JSON_LINES], WRITE),
    );
    expect(twice.status).toBe(400);
    expect(twice.text).toContain('Bad request: the Host header is sent more than once; send it once.');
    // Date and Hosx have Host's length, X-Origin's and Range's are near Origin's: none is counted as one.
    const alike = await sendUntilClosed(
      server.port,
      request('POST', '/mcp', ['Host: 127.0.0.1', 'Hosx: a', 'Hosx: b', 'Date: a', 'Date: b', ...JSON_LINES], WRITE),
    );
    expect(alike.status).toBe(200);
  });
});

describe('a Host that is not exactly a loopback name', () => {
  it.each([
    'localhost\\evil.example',
    'localhost/x',
    'localhost@evil.example',
    'evil.example@localhost',
    'localhost:',
    'localhost:0',
    'localhost:65536',
    'localhost:80:80',
    'localhost.',
    '127.1',
    '2130706433',
    '0x7f.0.0.1',
    '127.0.0.01',
    '[::1',
    '[0:0:0:0:0:0:0:1]',
    '[::ffff:127.0.0.1]',
  ])('is refused with 403: %s', async (host) => {
    const server = await startTestServer();
    const response = await postRpc(server.port, WRITE, { Host: host });
    expect(response.status).toBe(403);
    expect(rpcMessage(response).error?.message).toBe(
      `Forbidden: this server answers only to localhost, 127.0.0.1 (any 127.x.y.z) and [::1], not to Host ${JSON.stringify(host)}. To reach it under another name, start engram serve with --public-url set to the address people use.`,
    );
    expect(await server.memory.index(LOCAL)).toEqual([]);
  });

  it.each(['localhost', 'LocalHost:8787', '127.0.0.1:1', '127.255.0.9:65535', '[::1]:8787'])(
    'while %s is served',
    async (host) => {
      const server = await startTestServer();
      expect((await raw(server.port, { path: '/healthz', headers: { Host: host } })).status).toBe(200);
    },
  );
});

describe('X-Content-Type-Options: nosniff', () => {
  function expectNosniff(responses: Record<string, RawResponse | { status: number; headers: Record<string, string> }>) {
    const missing = Object.entries(responses)
      .filter(([, response]) => response.headers['x-content-type-options'] !== 'nosniff')
      .map(([what, response]) => `${what} (${response.status})`);
    expect(missing).toEqual([]);
  }

  it('is on every answer, whoever writes it and whatever its status', async () => {
    const server = await startTestServer({ maxBodyBytes: 4096 });
    const { port } = server;
    const responses = {
      health: await raw(port, { path: '/healthz' }),
      'health, wrong method': await raw(port, { method: 'POST', path: '/healthz' }),
      'unknown path': await raw(port, { path: '/nope' }),
      'GET /mcp': await raw(port, { headers: { Accept: 'text/event-stream' } }),
      'fast path': await postRpc(port, rpc('tools/list')),
      'MCP SDK': await postRpc(port, INITIALIZE),
      'MCP SDK refusal': await postRpc(port, INITIALIZE, { Accept: 'application/json' }),
      'not JSON': await postRpc(port, '{'),
      'too large': await postRpc(port, 'x'.repeat(5000)),
      preflight: await raw(port, {
        method: 'OPTIONS',
        headers: { Origin: 'http://localhost:8080', 'Access-Control-Request-Method': 'POST' },
      }),
      'foreign Host': await raw(port, { path: '/healthz', headers: { Host: 'evil.example' } }),
      'foreign Origin': await postRpc(port, WRITE, { Origin: 'https://evil.example' }),
      'API read': await raw(port, { path: '/api/entries' }),
      'API not found': await raw(port, { path: '/api/entries/topics/none' }),
      'API unknown route': await raw(port, { path: '/api/nope' }),
      "Node's own 400": await sendUntilClosed(port, 'NOT HTTP AT ALL\r\n\r\n'),
    };
    const tokens = await startTestServer({ auth: 'token' });
    expectNosniff({
      ...responses,
      'MCP without token': await postRpc(tokens.port, rpc('tools/list')),
      'API without token': await api(tokens.port, 'GET', '/api/entries'),
    });
    expect(responses["Node's own 400"].status).toBe(400);
  });
});

describe('Connection: close', () => {
  async function expectClosed(server: TestServer, lines: readonly string[], method = 'POST', body = '') {
    const answer = await sendUntilClosed(server.port, request(method, '/mcp', lines, body));
    expect(answer.headers.connection).toBe('close');
    return answer;
  }

  it('is honoured on every path: the answer says so and the server hangs up', async () => {
    // Idle connections would otherwise stay open for ten minutes: only the client's request closes them.
    const server = await startTestServer({ timeouts: { keepAliveMs: 600_000 } });
    const host = 'Host: 127.0.0.1';
    const initialized = await expectClosed(server, [host, ...JSON_LINES], 'POST', INITIALIZE);
    expect(initialized.status).toBe(200);
    expect(initialized.headers['content-type']).toBe('text/event-stream');
    expect((await expectClosed(server, [host, ...JSON_LINES], 'POST', rpc('tools/list'))).status).toBe(200);
    for (const path of ['/healthz', '/api/entries', '/nope']) {
      const answer = await sendUntilClosed(server.port, request('GET', path, [host]));
      expect(answer.headers.connection).toBe('close');
    }
  });

  it('is implied by HTTP/1.0 without keep-alive, and said in any case', async () => {
    const server = await startTestServer({ timeouts: { keepAliveMs: 600_000 } });
    const old = await sendUntilClosed(server.port, 'GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n');
    expect(old.status).toBe(200);
    expect(old.headers.connection).toBe('close');
    const shouted = await sendUntilClosed(
      server.port,
      'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Keep-Alive, CLOSE\r\n\r\n',
    );
    expect(shouted.headers.connection).toBe('close');
  });

  it('leaves other connections open for the next request', async () => {
    const server = await startTestServer();
    const response = await raw(server.port, { path: '/healthz', headers: { Connection: 'keep-alive' } });
    expect(response.headers.connection).toBe('keep-alive');
  });
});
