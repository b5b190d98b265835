/**
 * Every answer names its request (X-Request-Id), as its log line does: an id the client or
 * its proxy sent is kept when short and safe, anything else is replaced by a fresh one.
 */

import { describe, expect, it } from 'vitest';
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
});
