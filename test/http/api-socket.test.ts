/**
 * What `/api` does that only the real server shows, the rest being tested in-process
 * (in-process.ts): the request log names the user and the route, never the entry in the
 * path, with the status the client received, which only a socket knows (called in-process,
 * every answer is logged as cut off, 499); and a large import asking
 * `Expect: 100-continue` is told to send its body at once (server.ts answers it).
 */

import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { Caller } from '../../src/memory/memory.js';
import { api } from './api-client.js';
import { startTestServer } from './fixtures.js';

const ADA: Caller = { user: 'ada', label: 'test' };

describe('the request log', () => {
  it('shows the user and the route, never the entry name in the path', async () => {
    const server = await startTestServer({ auth: 'token' });
    await server.memory.write(ADA, { name: 'topics/me', description: 'Who I am', new: 'Name: ada.' });
    await server.memory.write(ADA, { name: 'topics/me', new: 'Likes tea.' });
    await server.memory.write(ADA, { name: 'topics/old', description: 'Old', new: 'Stale.' });
    await server.memory.drop(ADA, 'topics/old');
    const { token } = await server.access.create({ user: 'ada' });
    await api(server.port, 'GET', '/api/entries/topics/me/history', { token });
    await server.close();
    const line = server.logs.find((item) => item.includes('/api/'));
    expect(line).toMatch(/ user=ada GET \/api\/entries\/\{group\}\/\{slug\}\/history method=- tool=- status=200 /);
    expect(server.logs.join('\n')).not.toContain('topics');
  });
});

describe('POST /api/import', () => {
  const importPath = (query = '') => `/api/import${query}`;

  /** About 2.2 MB: over the 1 MiB a tool call may send, within a user's 4 MiB. */
  const large = {
    format: 'engram-export',
    version: 1,
    entries: Array.from({ length: 150 }, (_, index) => ({
      name: `topics/n${index}`,
      description: 'Filler',
      body: 'x'.repeat(15_000),
    })),
  };

  it('answers Expect: 100-continue for a large import, so curl sends it at once', async () => {
    const server = await startTestServer();
    const body = JSON.stringify(large);
    const events = await new Promise<string[]>((resolve, reject) => {
      const seen: string[] = [];
      const req = httpRequest({
        host: '127.0.0.1',
        port: server.port,
        method: 'POST',
        path: importPath(),
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          Expect: '100-continue',
        },
      });
      req.on('continue', () => {
        seen.push('continue');
        req.end(body);
      });
      req.on('response', (res) => {
        seen.push(`response ${res.statusCode}`);
        res.resume();
        res.on('end', () => resolve(seen));
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(events).toEqual(['continue', 'response 200']);
  });
});
