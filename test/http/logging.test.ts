/**
 * The request log: one line per request with time, user, method and path, JSON-RPC
 * method, tool, status and duration — and never the arguments, bodies or tokens, nor
 * anything a client could use to forge a line; and a page refused for its Origin, with
 * the --allow-origin that would let it in (its browser hides why from the person).
 */

import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatRequestLine, summarizeRpc } from '../../src/http/logging.js';
import { postRpc, raw, rpc, startTestServer, testFolder } from './fixtures.js';
import { sendUntilClosed } from './raw-socket.js';

const LINE =
  /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (?:client=\S+ )?user=\S+ [A-Z]+ \S+ method=\S+ tool=\S+ status=\d{3} \d+ms$/;

describe('over HTTP', () => {
  it('logs one line per request, without arguments, bodies or tokens', async () => {
    const server = await startTestServer({ auth: 'token' });
    const { token } = await server.access.create({ user: 'ada', label: 'webui' });
    const secret = rpc('tools/call', {
      name: 'memory_write',
      arguments: { name: 'topics/bank', description: 'Bank details', new: 'PIN 9876' },
    });
    await postRpc(server.port, secret, { Authorization: `Bearer ${token}` });
    await postRpc(server.port, rpc('tools/list'), { Authorization: 'Bearer engram_wrong' });
    await raw(server.port, { path: '/healthz' });

    expect(server.logs).toHaveLength(3);
    for (const line of server.logs) expect(line).toMatch(LINE);
    expect(server.logs[0]).toMatch(/ user=ada POST \/mcp method=tools\/call tool=memory_write status=200 \d+ms$/);
    expect(server.logs[1]).toMatch(/ user=- POST \/mcp method=- tool=- status=401 \d+ms$/);
    expect(server.logs[2]).toMatch(/ user=- GET \/healthz method=- tool=- status=200 \d+ms$/);
    const all = server.logs.join('\n');
    for (const leak of ['PIN', '9876', 'topics/bank', 'Bank details', token, 'engram_wrong'])
      expect(all).not.toContain(leak);
  });
});

describe('an /api path that matches no route', () => {
  it('is logged without the entry name it may carry', async () => {
    const server = await startTestServer({ auth: 'none' });
    await raw(server.port, { path: '/api/entries/topics/bank-pin/nonsense' });
    expect(server.logs).toHaveLength(1);
    expect(server.logs[0]).toMatch(/ GET \/api\/\? method=- tool=- status=404 \d+ms$/);
    expect(server.logs[0]).not.toContain('bank-pin');
  });
});

describe('summarizeRpc', () => {
  it('names the method and, for tools/call, the tool', () => {
    expect(
      summarizeRpc({ method: 'tools/call', params: { name: 'memory_open', arguments: { names: ['x'] } } }),
    ).toEqual({
      rpcMethod: 'tools/call',
      tool: 'memory_open',
    });
    expect(summarizeRpc({ method: 'initialize', params: { name: 'ignored' } })).toEqual({
      rpcMethod: 'initialize',
      tool: undefined,
    });
    expect(summarizeRpc(42)).toEqual({ rpcMethod: undefined, tool: undefined });
  });

  it('lists every method of a batch', () => {
    expect(
      summarizeRpc([{ method: 'tools/list' }, { method: 'tools/call', params: { name: 'memory_drop' } }, { id: 1 }]),
    ).toEqual({ rpcMethod: 'tools/list,tools/call,-', tool: '-,memory_drop,-' });
  });

  it('shows a method or tool that is not a plain name as "?", so no client can forge a log line', () => {
    expect(summarizeRpc({ method: 'tools/list\n2026-01-01T00:00:00.000Z user=admin' })).toEqual({
      rpcMethod: '?',
      tool: undefined,
    });
    expect(summarizeRpc({ method: 'tools/call', params: { name: 'memory_open status=200\nforged' } })).toEqual({
      rpcMethod: 'tools/call',
      tool: '?',
    });
    expect(summarizeRpc({ method: 'x'.repeat(65) }).rpcMethod).toBe('?');
  });
});

describe('formatRequestLine', () => {
  it('writes the fields in order, with "-" for what is unknown', () => {
    expect(
      formatRequestLine({
        time: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)),
        user: undefined,
        httpMethod: 'OPTIONS',
        path: '/mcp',
        rpcMethod: undefined,
        tool: undefined,
        status: 204,
        durationMs: 1.6,
      }),
    ).toBe('2026-01-02T03:04:05.678Z user=- OPTIONS /mcp method=- tool=- status=204 2ms');
  });

  it('shows a user or path that is not printable as "?"', () => {
    const line = formatRequestLine({
      time: new Date(0),
      user: 'ada lovelace',
      httpMethod: 'GET',
      path: '/a\nb',
      rpcMethod: 'tools/list',
      tool: undefined,
      status: 404,
      durationMs: 0,
    });
    expect(line).toBe('1970-01-01T00:00:00.000Z user=? GET ? method=tools/list tool=- status=404 0ms');
  });
});

describe('a request built to flood the log', () => {
  it('is logged on one line of at most 1 KB, naming the first methods of a batch and counting the rest', async () => {
    const server = await startTestServer();
    const batch = Array.from({ length: 10_000 }, (_, id) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'memory_open', arguments: {} },
    }));
    await postRpc(server.port, JSON.stringify(batch));
    const line = server.logs.find((logged) => logged.includes(' POST /mcp '));
    expect(line).toMatch(LINE);
    expect(line).toContain(
      ' method=tools/call,tools/call,tools/call,tools/call,tools/call,+9995 ' +
        'tool=memory_open,memory_open,memory_open,memory_open,memory_open,+9995 ',
    );
    expect(line!.length).toBeLessThanOrEqual(1024);
  });

  it('shows any field that is not a plain name, or too long, as "?"', () => {
    const line = formatRequestLine({
      time: new Date(0),
      user: 'u'.repeat(10_000),
      httpMethod: 'GET\nforged',
      path: `/${'p'.repeat(10_000)}`,
      rpcMethod: `${'m,'.repeat(10_000)}m`,
      tool: 'memory_open\u001b[2J',
      status: 200,
      durationMs: 0,
    });
    expect(line).toBe('1970-01-01T00:00:00.000Z user=? ? ? method=? tool=? status=200 0ms');
  });
});

describe('a web UI file whose client hangs up as soon as it has every byte', () => {
  /** GETs `path` on a socket of its own, closed the moment the whole body has arrived, as curl and browsers may. */
  function getAndHangUp(port: number, path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`),
      );
      let received = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        const headEnd = received.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(received.subarray(0, headEnd).toString())?.[1]);
        if (received.length - headEnd - 4 >= length) {
          socket.destroy();
          resolve();
        }
      });
      socket.on('error', reject);
    });
  }

  it('is logged as answered (200), with the client, not as a request the client gave up on', async () => {
    const webRoot = testFolder();
    // Several reads of the file, as the built UI's script takes.
    writeFileSync(join(webRoot, 'index.html'), `<!doctype html>${'<p>Engram</p>'.repeat(20_000)}`);
    const server = await startTestServer({ auth: 'none', webRoot });
    const tries = 20;
    for (let i = 0; i < tries; i++) await getAndHangUp(server.port, '/');
    await expect.poll(() => server.logs.length).toBe(tries);
    for (const line of server.logs)
      expect(line).toMatch(/ client=127\.0\.0\.1 user=- GET \/ method=- tool=- status=200 \d+ms$/);
  });
});

describe('a page refused for its Origin', () => {
  const HINT =
    'refused pages from https://evil.example (the browser does not show why): To allow them, restart engram serve ' +
    'with --allow-origin https://evil.example (or use --auth token).';

  it('is logged with the --allow-origin that would let it in, over HTTP', async () => {
    const server = await startTestServer();
    const response = await postRpc(server.port, rpc('tools/list'), { Origin: 'https://evil.example' });
    expect(response.status).toBe(403);
    expect(server.logs).toContain(HINT);
  });

  it('and on a WebSocket upgrade', async () => {
    const server = await startTestServer();
    const answer = await sendUntilClosed(
      server.port,
      'GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nOrigin: https://evil.example\r\n' +
        'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: mcp\r\n\r\n',
    );
    expect(answer.status).toBe(403);
    expect(server.logs).toContain(HINT);
  });

  it('an origin with shell syntax in its host is quoted, so the hint pasted into a shell runs no command', async () => {
    const server = await startTestServer();
    const origins = ['http://a`id`.com', 'http://$(id).com', 'http://a;id&b.com'];
    for (const origin of origins) {
      const response = await postRpc(server.port, rpc('tools/list'), { Origin: origin });
      expect(response.status).toBe(403);
      expect(response.body).toContain(`--allow-origin '${origin}' (or use --auth token)`);
    }
    expect(server.logs.filter((line) => line.startsWith('refused '))).toEqual(
      origins.map(
        (origin) =>
          `refused pages from ${origin} (the browser does not show why): To allow them, restart engram serve with ` +
          `--allow-origin '${origin}' (or use --auth token).`,
      ),
    );
  });

  it('pages opened from a file (Origin null) are told another way in; an Origin that is not one, that none can name', async () => {
    const server = await startTestServer({ auth: 'token', allowOrigins: ['http://app.example'] });
    await postRpc(server.port, rpc('tools/list'), { Origin: 'null' });
    await postRpc(server.port, rpc('tools/list'), { Origin: 'https://evil.example/path' });
    await postRpc(server.port, rpc('tools/list'), { Origin: `https://${'a'.repeat(300)}.example` });
    expect(server.logs.filter((line) => line.startsWith('refused '))).toEqual([
      'refused pages opened from a file or in a sandbox (Origin null) (the browser does not show why): Serve the page ' +
        'from http://localhost or http://127.0.0.1 instead.',
      'refused a request with Origin https://evil.example/path: it is not an origin (scheme://host:port), so no ' +
        '--allow-origin can name it.',
      'refused a request with Origin ?: it is not an origin (scheme://host:port), so no --allow-origin can name it.',
    ]);
  });
});
