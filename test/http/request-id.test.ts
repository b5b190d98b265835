/**
 * Every answer names its request (X-Request-Id), as its log line does: an id the client or
 * its proxy sent is kept when short and safe, anything else is replaced by a fresh one.
 */

import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { raw, startTestServer } from './fixtures.js';

describe('X-Request-Id', () => {
  it('is a fresh id on every answer, a safe one sent is kept, an unsafe or long one replaced', async () => {
    const server = await startTestServer();
    const fresh = [await raw(server.port, { path: '/healthz' }), await raw(server.port, { path: '/nope' })];
    const kept = await raw(server.port, { path: '/healthz', headers: { 'X-Request-Id': 'edge:7f3a-01.b_c' } });
    const long = await raw(server.port, { path: '/healthz', headers: { 'X-Request-Id': 'a'.repeat(65) } });
    const unsafe = await raw(server.port, { path: '/healthz', headers: { 'X-Request-Id': 'id with "quotes"' } });

    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    expect(fresh.map((response) => response.headers['x-request-id'])).toEqual([
      expect.stringMatching(uuid),
      expect.stringMatching(uuid),
    ]);
    expect(fresh[0]?.headers['x-request-id']).not.toBe(fresh[1]?.headers['x-request-id']);
    expect(kept.headers['x-request-id']).toBe('edge:7f3a-01.b_c');
    expect(long.headers['x-request-id']).toMatch(uuid);
    expect(unsafe.headers['x-request-id']).toMatch(uuid);
  });

  it('is sent back when a WebSocket opens, and when its upgrade is refused', async () => {
    const server = await startTestServer();
    const opened = await new Promise<string | undefined>((resolve, reject) => {
      const socket = new WebSocket(`ws://127.0.0.1:${server.port}/ws`, ['mcp'], {
        headers: { 'X-Request-Id': 'socket-trace-1' },
      });
      socket.once('upgrade', (response) => resolve(response.headers['x-request-id'] as string | undefined));
      socket.once('open', () => socket.close());
      socket.once('error', reject);
    });
    const refused = await new Promise<string | undefined>((resolve) => {
      const socket = new WebSocket(`ws://127.0.0.1:${server.port}/ws`, ['not-mcp']);
      socket.on('error', () => {});
      socket.once('unexpected-response', (_request, response) => {
        resolve(response.headers['x-request-id'] as string | undefined);
        socket.terminate();
      });
    });
    expect(opened).toBe('socket-trace-1');
    expect(refused).toMatch(/^[0-9a-f-]{36}$/);
  });
});
