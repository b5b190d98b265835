/**
 * A server meant to be reached from elsewhere: native TLS serves the same app over https
 * (a client trusting the test CA gets /healthz and /mcp), a loopback server behind a
 * proxy answers to its public URL's host and to no other name, the request log names
 * the client (the proxy's X-Forwarded-For only with trustProxy), and an unsafe public
 * setup is refused before anything listens.
 */

import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createApp } from '../../src/app.js';
import { type HttpServerOptions, type RunningHttpServer, startHttpServer } from '../../src/http/server.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';
import { testCertificates } from '../helpers/tls.js';
import { JSON_HEADERS, raw, rpc } from './fixtures.js';

const base = {
  app: createApp({ store: openMemoryStore() }),
  version: '0.0.0-test',
  log: () => {},
  auth: { mode: 'none', user: 'local' },
  host: '127.0.0.1',
  port: 0,
} as const;

async function start(options: Partial<HttpServerOptions> = {}): Promise<RunningHttpServer> {
  const server = await startHttpServer({ ...base, ...options });
  onTestFinished(() => server.close());
  return server;
}

function get(url: string, ca?: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method: body === undefined ? 'GET' : 'POST',
        headers: body === undefined ? {} : JSON_HEADERS,
        ...(ca === undefined ? {} : { ca }),
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('native TLS', () => {
  it('serves the same app over https, and says so in its origin', async () => {
    const { ca, cert, key } = testCertificates();
    const server = await start({ tls: { cert, key } });
    expect(server.origin).toBe(`https://127.0.0.1:${server.port}`);
    await expect(get(`${server.origin}/healthz`, ca)).resolves.toEqual({ status: 200, text: '{"status":"ok"}' });
    const listed = await get(`${server.origin}/mcp`, ca, rpc('tools/list'));
    expect(listed.status).toBe(200);
    expect(listed.text).toContain('memory_write');
  });

  it('is refused by a client that does not trust its certificate', async () => {
    const { cert, key } = testCertificates();
    const server = await start({ tls: { cert, key } });
    await expect(get(`${server.origin}/healthz`)).rejects.toMatchObject({
      code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    });
  });

  it('cuts off a client that never starts its TLS handshake', async () => {
    const { cert, key } = testCertificates();
    const server = await start({ tls: { cert, key }, timeouts: { headersMs: 200 } });
    const socket = connect(server.port, '127.0.0.1');
    onTestFinished(() => {
      socket.destroy();
    });
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
  });

  it('speaks no plain http on its port', async () => {
    const { cert, key } = testCertificates();
    const server = await start({ tls: { cert, key } });
    await expect(raw(server.port, { path: '/healthz' })).rejects.toThrow();
  });
});

describe('the Host check with a public URL', () => {
  it('lets a loopback server answer to its public host (a proxy on this computer passes it on)', async () => {
    const server = await start({ publicUrl: new URL('https://memory.example.com') });
    for (const host of ['memory.example.com', 'memory.example.com:443', `127.0.0.1:${server.port}`]) {
      expect((await raw(server.port, { path: '/healthz', headers: { Host: host } })).status).toBe(200);
    }
  });

  it('still refuses any other name, and says which names it answers to', async () => {
    const server = await start({ publicUrl: new URL('https://memory.example.com') });
    const refused = await raw(server.port, { path: '/healthz', headers: { Host: 'evil.example' } });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error.message).toBe(
      'Forbidden: this server answers only to localhost, 127.0.0.1 (any 127.x.y.z), memory.example.com and [::1], not to Host "evil.example". ' +
        'To reach it under another name, start engram serve with --public-url set to the address people use.',
    );
  });
});

describe('the request log', () => {
  it('names the socket peer, and ignores X-Forwarded-For from a proxy it does not trust', async () => {
    const logs: string[] = [];
    const server = await start({ log: (line) => logs.push(line) });
    await raw(server.port, { path: '/healthz', headers: { 'X-Forwarded-For': '203.0.113.9' } });
    await expect.poll(() => logs.length).toBe(1);
    expect(logs[0]).toMatch(/Z client=127\.0\.0\.1 user=- GET \/healthz /);
  });

  it('with trustProxy, names the client the proxy reports in its rightmost entry', async () => {
    const logs: string[] = [];
    const server = await start({ log: (line) => logs.push(line), trustProxy: true });
    await raw(server.port, { path: '/healthz', headers: { 'X-Forwarded-For': '198.51.100.1, 203.0.113.9' } });
    await expect.poll(() => logs.length).toBe(1);
    expect(logs[0]).toMatch(/Z client=203\.0\.113\.9 user=- GET \/healthz /);
  });
});

describe('refusals before listening', () => {
  it('refuses an http:// public URL beyond loopback', async () => {
    await expect(
      startHttpServer({
        ...base,
        auth: { mode: 'token' },
        host: '0.0.0.0',
        publicUrl: new URL('http://memory.example.com'),
      }),
    ).rejects.toThrow(/^refusing --public-url http:\/\/memory\.example\.com on 0\.0\.0\.0: /);
  });
});
