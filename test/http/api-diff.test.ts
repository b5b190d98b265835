/**
 * `GET /api/entries/{group}/{slug}/diff` over HTTP: the unified diff between two revisions
 * (to the latest when `to` is left out), of a dropped entry too; and its refusals.
 */

import { describe, expect, it } from 'vitest';
import { api, apiError, LOCAL } from './api-client.js';
import { startTestServer, type TestServer } from './fixtures.js';

async function withHistory(): Promise<TestServer> {
  const server = await startTestServer();
  await server.memory.write(LOCAL, { name: 'people/ada', description: 'Ada', new: 'Wrote the first program.' });
  await server.memory.write(LOCAL, { name: 'people/ada', new: 'Born 1815.' });
  await server.memory.write(LOCAL, {
    name: 'people/ada',
    description: 'Ada Lovelace',
    old: 'Born 1815.',
    new: 'Born 1815 in London.',
  });
  return server;
}

describe('GET /api/entries/{group}/{slug}/diff', () => {
  it('answers the unified diff from one revision to another, description in the headers', async () => {
    const server = await withHistory();
    const response = await api(server.port, 'GET', '/api/entries/people/ada/diff?from=1&to=2');
    expect(response.status).toBe(200);
    expect(response.json.diff).toContain('--- people/ada@1\tAda\n+++ people/ada@2\tAda\n');
    expect(response.json.diff).toContain('+Born 1815.');
  });

  it('diffs to the latest revision when to is left out, and works on a dropped entry', async () => {
    const server = await withHistory();
    await server.memory.drop(LOCAL, 'people/ada');
    const response = await api(server.port, 'GET', '/api/entries/people/ada/diff?from=2');
    expect(response.status).toBe(200);
    expect(response.json.diff).toContain('+++ people/ada@4\tAda Lovelace');
    expect(response.json.diff).toContain('-Born 1815.\n+Born 1815 in London.');
  });

  it('refuses a missing or malformed revision (400) and one not kept (404)', async () => {
    const server = await withHistory();
    for (const query of ['', '?from=0', '?from=x', '?from=1&to=-1', '?to=2']) {
      const response = await api(server.port, 'GET', `/api/entries/people/ada/diff${query}`);
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('INVALID_ARGUMENT');
    }
    const missing = await api(server.port, 'GET', '/api/entries/people/ada/diff?from=9');
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual(
      apiError('NOT_FOUND', /^people\/ada has no revision 9; the revisions kept are 1 to 3\./),
    );
  });
});
