/**
 * `/api/duplicates` and `/api/merge` over HTTP (in process): the pairs in the shape the web
 * UI imports (ISO times, similarities to two decimals), a merge and its undo through
 * `/api/revert/{id}/undo`, and every refusal in the API's words — a bad limit, a body that
 * is not a merge, the same entry, a missing one, a moved revision, the entry cap, a group
 * that cannot be written, a read-only and a review-mode token — each changing nothing.
 */

import { describe, expect, it } from 'vitest';
import type { DuplicatesJson, MergeResultJson } from '../../src/http/api/shapes.js';
import { createMemory } from '../../src/memory/memory.js';
import { api, apiError, contents, LOCAL } from './api-client.js';
import { startTestApp, type TestApp } from './in-process.js';

const START = Date.UTC(2026, 5, 1, 9);

async function withCopies(options: Parameters<typeof startTestApp>[0] = {}): Promise<TestApp> {
  let now = START;
  const server = startTestApp({ now: () => now++, ...options });
  const user = options.auth === 'token' ? 'ada' : 'local';
  const me = { user, label: 'me' };
  // Written under the default groups, whatever the server's policy.
  const seeding = createMemory({ store: server.store, now: () => now++ });
  await seeding.write(me, { name: 'topics/coffee', description: 'Coffee preferences', new: 'Flat white.\n' });
  await seeding.write(me, { name: 'people/barista', description: 'Coffee preference', new: 'Oat milk.\n' });
  await seeding.write(me, { name: 'areas/garden', description: 'Garden', new: 'Tomatoes.\n' });
  return server;
}

const MERGE = { from: 'people/barista', into: 'topics/coffee', fromRevision: 1, intoRevision: 1 };

describe('/api/duplicates', () => {
  it('lists the pairs with both sides, ISO times and similarities to two decimals', async () => {
    const server = await withCopies();
    const response = await api(server, 'GET', '/api/duplicates');
    expect(response.status).toBe(200);
    const listed: DuplicatesJson = response.json;
    expect(listed).toEqual({
      pairs: [
        {
          a: {
            name: 'people/barista',
            description: 'Coffee preference',
            size: 10,
            revision: 1,
            updated: new Date(START + 1).toISOString(),
          },
          b: {
            name: 'topics/coffee',
            description: 'Coffee preferences',
            size: 12,
            revision: 1,
            updated: new Date(START).toISOString(),
          },
          score: expect.any(Number),
          reasons: ['description'],
          similarity: { name: expect.any(Number), description: 0.91, body: 0 },
        },
      ],
      examined: 3,
      truncated: false,
    });
    const [pair] = listed.pairs;
    expect(Math.round((pair?.score ?? 0) * 100) / 100).toBe(pair?.score);
    expect((await api(server, 'GET', '/api/duplicates?limit=200')).json).toEqual(listed);
  });

  it('refuses a limit that is not 1 to 200', async () => {
    const server = await withCopies();
    for (const limit of ['0', '201', 'ten', '-1', '']) {
      const response = await api(server, 'GET', `/api/duplicates?limit=${limit}`);
      expect(response.status).toBe(400);
      expect(response.json).toEqual(
        apiError(
          'INVALID_ARGUMENT',
          '"limit" is the number of pairs to list, a whole number from 1 to 200: GET /api/duplicates?limit=50.',
        ),
      );
    }
    expect((await api(server, 'GET', '/api/duplicates?max=3')).status).toBe(400);
  });
});

describe('/api/merge', () => {
  it('merges, and the merge is undone through /api/revert/{id}/undo', async () => {
    const server = await withCopies();
    const before = await contents(server.memory);
    const response = await api(server, 'POST', '/api/merge', { body: MERGE });
    expect(response.status).toBe(200);
    const merged: MergeResultJson = response.json;
    expect(merged).toEqual({
      id: expect.stringMatching(/^[0-9a-z]+-[0-9a-f]{8}$/),
      note: `merge ${merged.id}: people/barista into topics/coffee`,
      into: 'topics/coffee',
      dropped: 'people/barista',
    });
    const opened = await api(server, 'GET', '/api/entries/topics/coffee');
    expect(opened.json.entry.body).toBe(
      'Flat white.\n\n## Merged from people/barista\n\nCoffee preference\n\nOat milk.\n',
    );
    expect((await api(server, 'GET', '/api/entries/people/barista')).status).toBe(404);
    const history = (await api(server, 'GET', '/api/entries/topics/coffee/history')).json;
    expect(JSON.stringify(history)).toContain(merged.note);

    const undone = await api(server, 'POST', `/api/revert/${merged.id}/undo`, { body: {} });
    expect(undone.status).toBe(200);
    expect(undone.json.note).toBe(`revert ${undone.json.id}: undo of merge ${merged.id}`);
    expect(await contents(server.memory)).toEqual(before);
  });

  it('refuses a body that is not a merge, naming the field and showing one', async () => {
    const server = await withCopies();
    const before = await contents(server.memory);
    const cases: [unknown, RegExp][] = [
      ['not json', /^the request body is not valid JSON: send \{"from"/],
      [[1], /^the request body is not an object/],
      [{ ...MERGE, extra: 1 }, /^"extra" is not a field of a merge/],
      [{ ...MERGE, from: 3 }, /^"from" must be an entry's name/],
      [{ ...MERGE, into: undefined }, /^"into" must be an entry's name/],
      [{ ...MERGE, fromRevision: '1' }, /^"fromRevision" must be the revision of the entry you looked at/],
      [{ ...MERGE, intoRevision: 0 }, /^"intoRevision" must be the revision/],
    ];
    for (const [body, message] of cases) {
      const response = await api(server, 'POST', '/api/merge', { body });
      expect(response.status).toBe(400);
      expect(response.json).toEqual(apiError('INVALID_ARGUMENT', message));
    }
    expect(await contents(server.memory)).toEqual(before);
  });

  it('refuses the same entry, a missing one, a moved revision, the entry cap and a read-only group', async () => {
    const server = await withCopies({ policy: { entryCap: 40, groups: { topics: 'facts', areas: 'projects' } } });
    await server.memory.write(LOCAL, { name: 'areas/garden', new: 'Basil.\n' });
    const before = await contents(server.memory);
    const refusals: [object, number, string, string | RegExp][] = [
      [
        { ...MERGE, from: 'topics/coffee' },
        400,
        'INVALID_ARGUMENT',
        'topics/coffee cannot be merged into itself: choose two entries.',
      ],
      [
        { ...MERGE, from: 'topics/tea' },
        404,
        'NOT_FOUND',
        'topics/tea is not in this memory (dropped or renamed meanwhile): nothing was merged. GET /api/duplicates lists the pairs as they are now.',
      ],
      [
        { ...MERGE, from: 'areas/garden' },
        409,
        'CONFLICT',
        'areas/garden has changed since it was listed (revision 1, now 2): nothing was merged. Look at it again (GET /api/entries/areas/garden), then send the revisions you merge.',
      ],
      [
        MERGE,
        413,
        'TOO_LARGE',
        /^topics\/coffee would be 73 bytes with people\/barista merged in, 33 over the entry cap of 40\./,
      ],
      [
        { from: 'topics/coffee', into: 'people/barista', fromRevision: 1, intoRevision: 1 },
        403,
        'READ_ONLY_GROUP',
        /^people\/barista is in group "people", which cannot be written/,
      ],
    ];
    for (const [body, status, code, message] of refusals) {
      const response = await api(server, 'POST', '/api/merge', { body });
      expect(response.status).toBe(status);
      expect(response.json).toEqual(apiError(code, message));
    }
    expect(await contents(server.memory)).toEqual(before);
  });

  it('lets a read-only or review-mode token list but not merge', async () => {
    const server = await withCopies({ auth: 'token' });
    const ada = { user: 'ada', label: 'x' };
    const before = await contents(server.memory, ada);
    for (const options of [{ readOnly: true }, { review: true }]) {
      const { token } = await server.access.create({ user: 'ada', ...options });
      expect((await api(server, 'GET', '/api/duplicates', { token })).json.pairs).toHaveLength(1);
      const refused = await api(server, 'POST', '/api/merge', { token, body: MERGE });
      expect(refused.status).toBe(403);
      expect(refused.json.error.code).toBe('READ_ONLY_TOKEN');
    }
    expect(await contents(server.memory, ada)).toEqual(before);
  });
});
