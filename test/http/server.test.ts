/**
 * Starting and stopping: an unsafe binding is refused before anything listens, a busy
 * port is reported, and close() lets a request in flight finish before the server stops.
 */

import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { startHttpServer } from '../../src/http/server.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';
import { JSON_HEADERS, raw, rpc, startTestServer } from './fixtures.js';

const base = {
  app: createApp({ store: openMemoryStore() }),
  version: '0.0.0-test',
  log: () => {},
};

describe('startHttpServer', () => {
  it('refuses to listen beyond loopback without auth', async () => {
    await expect(
      startHttpServer({ ...base, auth: { mode: 'none', user: 'local' }, host: '0.0.0.0', port: 0 }),
    ).rejects.toThrow(/^refusing to serve on 0\.0\.0\.0 without authentication/);
  });

  it('reports a port that is already in use', async () => {
    const first = await startTestServer();
    await expect(
      startHttpServer({ ...base, auth: { mode: 'none', user: 'local' }, host: '127.0.0.1', port: first.port }),
    ).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});

interface Answer {
  status: number;
  connection: string | undefined;
  text: string;
}

describe('close()', () => {
  // With the MCP fast path and without it: the SDK hands writeHead a keep-alive of its own.
  it.each([true, false])('lets a request in flight finish, then stops accepting (MCP fast path %s)', async (fast) => {
    // Keep-alive longer than the test may run: close() must not wait for it.
    const server = await startTestServer({ timeouts: { keepAliveMs: 120_000 }, mcpFastPath: fast });
    const body = rpc('tools/call', {
      name: 'memory_write',
      arguments: { name: 'topics/a', description: 'A', new: 'x' },
    });
    const half = Math.floor(body.length / 2);

    const answered = new Promise<Answer>((resolve, reject) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port: server.port,
        method: 'POST',
        path: '/mcp',
        headers: { ...JSON_HEADERS, 'Content-Length': Buffer.byteLength(body) },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, text }));
      });
      req.on('error', reject);
      req.write(body.slice(0, half), () => {
        const closing = server.close();
        setImmediate(() => req.end(body.slice(half)));
        closing.catch(reject);
      });
    });

    const response = await answered;
    expect(response.status).toBe(200);
    // The client is told not to send another request on this connection, which then closes.
    expect(response.connection).toBe('close');
    expect(response.text).toContain('topics/a (2 bytes): A');
    await server.close();
    await expect(raw(server.port, { method: 'POST', body: rpc('tools/list') })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
  });

  it('does not wait for a connection that has sent no request yet (a browser opens some ahead of time)', async () => {
    // Timeouts and a grace longer than the test may run: close() must not wait for them.
    const server = await startTestServer({
      timeouts: { headersMs: 120_000, requestMs: 120_000, keepAliveMs: 120_000 },
      closeGraceMs: 120_000,
    });
    const early = connect(server.port, '127.0.0.1');
    await new Promise((resolve) => early.once('connect', resolve));
    const closed = new Promise((resolve) => early.once('close', resolve));
    await server.close();
    await closed;
  });
});

describe('a failure inside the server', () => {
  it('answers 500 without details, logs it, and keeps serving', async () => {
    const server = await startTestServer({ auth: 'token' });
    await server.store.close();
    const response = await raw(server.port, {
      method: 'POST',
      headers: { ...JSON_HEADERS, Authorization: 'Bearer engram_anything' },
      body: rpc('tools/list'),
    });
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body).error).toEqual({
      code: -32603,
      message: 'Internal error: the server failed to answer. Try again; if it fails again, tell its owner.',
    });
    expect(server.logs.some((line) => line.startsWith('internal error: '))).toBe(true);
    expect((await raw(server.port, { path: '/healthz' })).status).toBe(200);
  });
});
