/**
 * Many clients at once: 50 HTTP clients (the three SDK client kinds in turn) append
 * to the same entry concurrently; every line arrives exactly once and every append is
 * its own revision — no update is lost.
 */

import { expect, it, onTestFinished } from 'vitest';
import { HTTP_CLIENTS } from './clients.js';
import { startTestServer } from './fixtures.js';

const CLIENTS = 50;

it(`${CLIENTS} concurrent HTTP clients appending to one entry: every line present`, async () => {
  const server = await startTestServer({ auth: 'token' });
  const { token } = await server.access.create({ user: 'team', label: 'load' });
  await server.memory.write(
    { user: 'team', label: 'setup' },
    { name: 'areas/log', description: 'Shared log', new: 'start' },
  );

  const sessions = await Promise.all(
    Array.from({ length: CLIENTS }, (_, i) => HTTP_CLIENTS[i % HTTP_CLIENTS.length]!.connect(server.url, { token })),
  );
  onTestFinished(() => Promise.all(sessions.map((session) => session.close())).then(() => undefined));

  const results = await Promise.all(
    sessions.map((session, i) => session.call('memory_write', { name: 'areas/log', new: `line ${i}` })),
  );
  expect(results.filter((result) => result.isError)).toEqual([]);

  const [entry] = await server.store.get('team', ['areas/log']);
  const lines = entry!.body.split('\n').filter(Boolean);
  expect(lines[0]).toBe('start');
  expect(lines.slice(1).sort()).toEqual(Array.from({ length: CLIENTS }, (_, i) => `line ${i}`).sort());
  expect(entry!.revision).toBe(CLIENTS + 1);
});
