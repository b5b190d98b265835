/**
 * `GET /api/entries/{group}/{slug}/diff` over HTTP: the unified diff between two revisions
 * (to the latest when `to` is left out), of a dropped entry too; and its refusals. Two
 * revisions too different to diff at a bounded cost are answered with both of them, and a
 * read-only token asking for them again and again holds the server a few milliseconds at a
 * time (before: 9 to 24 s each, the whole server frozen). Measured as event-loop delay and
 * heap, never wall time.
 */

import { describe, expect, it } from 'vitest';
import { HELD_LOOP_MS, withEventLoopDelay } from '../helpers/event-loop.js';
import { withHeapPeak } from '../helpers/heap.js';
import { api, apiError, LOCAL } from './api-client.js';
import { startTestApp, type TestApp } from './in-process.js';

/** What answering such diffs may hold: both revisions, their answer and the bounded diff's paths. */
const HELD_HEAP_BYTES = 32 * 1024 * 1024;

async function withHistory(): Promise<TestApp> {
  const server = startTestApp();
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
    const response = await api(server, 'GET', '/api/entries/people/ada/diff?from=1&to=2');
    expect(response.status).toBe(200);
    expect(response.json.tooDifferent).toBe(false);
    expect(response.json.diff).toContain('--- people/ada@1\tAda\n+++ people/ada@2\tAda\n');
    expect(response.json.diff).toContain('+Born 1815.');
  });

  it('diffs to the latest revision when to is left out, and works on a dropped entry', async () => {
    const server = await withHistory();
    await server.memory.drop(LOCAL, 'people/ada');
    const response = await api(server, 'GET', '/api/entries/people/ada/diff?from=2');
    expect(response.status).toBe(200);
    expect(response.json.diff).toContain('+++ people/ada@4\tAda Lovelace');
    expect(response.json.diff).toContain('-Born 1815.\n+Born 1815 in London.');
  });

  it('refuses a missing or malformed revision (400) and one not kept (404)', async () => {
    const server = await withHistory();
    for (const query of ['', '?from=0', '?from=x', '?from=1&to=-1', '?to=2']) {
      const response = await api(server, 'GET', `/api/entries/people/ada/diff${query}`);
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('INVALID_ARGUMENT');
    }
    const missing = await api(server, 'GET', '/api/entries/people/ada/diff?from=9');
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual(
      apiError('NOT_FOUND', /^people\/ada has no revision 9; the revisions kept are 1 to 3\./),
    );
  });
});

describe('GET …/diff of two 8,000-line revisions that share nothing', () => {
  it('answers "too different" with both revisions, and the server keeps serving others meanwhile and after', async () => {
    const server = startTestApp({ auth: 'token' });
    const owner = { user: 'ada', label: 'test' };
    await server.memory.write(owner, { name: 'topics/list', description: 'As', new: 'a\n'.repeat(8_000) });
    await server.memory.write(owner, {
      name: 'topics/list',
      description: 'Bs',
      old: 'a\n'.repeat(8_000),
      new: 'b\n'.repeat(8_000),
    });
    const { token } = await server.access.create({ user: 'ada', readOnly: true });
    const path = '/api/entries/topics/list/diff?from=1&to=2';

    // The heap measure's first full collection comes before the loop's measure: it is not the server's.
    const { result, peakBytes } = await withHeapPeak(() =>
      withEventLoopDelay(async () => {
        const diffs = Array.from({ length: 3 }, () => api(server, 'GET', path, { token }));
        const health = server.request({ path: '/healthz' });
        return { answers: await Promise.all(diffs), health: await health };
      }),
    );
    expect(result.maxDelayMs).toBeLessThan(HELD_LOOP_MS);
    expect(peakBytes).toBeLessThan(HELD_HEAP_BYTES);
    expect(result.result.health.status).toBe(200);
    for (const answer of result.result.answers) {
      expect(answer.status).toBe(200);
      expect(answer.json).toEqual({
        diff: null,
        tooDifferent: true,
        from: { revision: 1, description: 'As', size: 16_000, lines: 8_000, body: 'a\n'.repeat(8_000) },
        to: { revision: 2, description: 'Bs', size: 16_000, lines: 8_000, body: 'b\n'.repeat(8_000) },
      });
    }
    // Afterwards, the next reader is served as usual, and a small change is still a diff.
    await server.memory.write(owner, {
      name: 'topics/list',
      old: 'b\n'.repeat(8_000),
      new: `c\n${'b\n'.repeat(7_999)}`,
    });
    const small = await api(server, 'GET', '/api/entries/topics/list/diff?from=2&to=3', { token });
    expect(small.json.tooDifferent).toBe(false);
    expect(small.json.diff).toMatch(/^--- topics\/list@2\tBs\n\+\+\+ topics\/list@3\tBs\n@@ -1,4 \+1,5 @@\n\+c\n b\n/);
  });
});
