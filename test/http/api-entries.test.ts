/**
 * `/api/entries` over HTTP: the index, one entry, its history and restoring a revision,
 * each with its refusals (unknown entry, bad name, bad revision, bad body), every refusal
 * leaving memory as it was.
 */

import { describe, expect, it } from 'vitest';
import { formatMissing } from '../../src/memory/model/format.js';
import { expectEngramError } from '../memory/fixtures.js';
import { api, apiError, LOCAL } from './api-client.js';
import { startTestApp, type TestApp } from './in-process.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A server whose local user has topics/me at revision 2 and people/ada at revision 1. */
async function seeded(): Promise<TestApp> {
  const server = startTestApp();
  await server.memory.write(LOCAL, { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' });
  await server.memory.write(LOCAL, { name: 'topics/me', new: 'Likes tea.' });
  await server.memory.write(LOCAL, { name: 'people/ada', description: 'Ada Lovelace', new: 'Mathematician.' });
  return server;
}

const historyOf = (server: TestApp, name: string) => server.memory.recovery.history(LOCAL, name);

describe('GET /api/entries', () => {
  it('answers the index as JSON rows, sorted by name', async () => {
    const server = await seeded();
    const response = await api(server, 'GET', '/api/entries');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.json).toEqual({
      entries: [
        {
          name: 'people/ada',
          size: 15,
          description: 'Ada Lovelace',
          created: expect.stringMatching(ISO),
          updated: expect.stringMatching(ISO),
          revision: 1,
          actor: 'test',
          opened: null,
        },
        {
          name: 'topics/me',
          size: 22,
          description: 'Who I am',
          created: expect.stringMatching(ISO),
          updated: expect.stringMatching(ISO),
          revision: 2,
          actor: 'test',
          opened: null,
        },
      ],
      openedSince: expect.stringMatching(ISO),
      usage: { bytes: 15 + 10 + 12 + 22 + 9 + 8, entries: 2 },
      limits: {
        entryCap: 16_384,
        userCap: 4_194_304,
        maxEntries: 1_000,
        descriptionCap: 200,
        groups: ['areas', 'people', 'topics'],
      },
    });
  });

  it('says when a model last opened each entry (an ISO time, null if not since openedSince); a person’s read is not one', async () => {
    const server = await seeded();
    await api(server, 'GET', '/api/entries/people/ada');
    await server.memory.close();
    expect((await api(server, 'GET', '/api/entries')).json).toMatchObject({
      entries: [
        { name: 'people/ada', opened: null },
        { name: 'topics/me', opened: null },
      ],
    });

    const opening = Date.parse('2026-03-04T05:06:07.000Z');
    await server.store.recordOpened([{ user: LOCAL.user, name: 'topics/me', at: opening }], 0);

    const { json } = await api(server, 'GET', '/api/entries');
    expect(json).toMatchObject({
      entries: [
        { name: 'people/ada', opened: null },
        { name: 'topics/me', opened: '2026-03-04T05:06:07.000Z' },
      ],
    });
    expect(Date.parse((json as { openedSince: string }).openedSince)).toBeLessThanOrEqual(Date.now());
  });

  it('answers an empty memory with no rows', async () => {
    const server = startTestApp();
    expect((await api(server, 'GET', '/api/entries')).json).toMatchObject({
      entries: [],
      usage: { bytes: 0, entries: 0 },
    });
  });

  it('refuses a query parameter it does not take', async () => {
    const server = startTestApp();
    const response = await api(server, 'GET', '/api/entries?limit=5');
    expect(response.status).toBe(400);
    expect(response.json).toEqual(
      apiError('INVALID_ARGUMENT', '?limit is not a parameter of GET /api/entries: it takes none.'),
    );
  });
});

describe('GET /api/entries/{group}/{slug}', () => {
  it('answers the entry with its body, size, revision and times', async () => {
    const server = await seeded();
    const response = await api(server, 'GET', '/api/entries/topics/me');
    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      entry: {
        name: 'topics/me',
        description: 'Who I am',
        size: 22,
        revision: 2,
        created: expect.stringMatching(ISO),
        updated: expect.stringMatching(ISO),
        body: 'Name: Ada.\nLikes tea.\n',
      },
    });
  });

  it('reads names case-insensitively and percent-decoded, as the tools do', async () => {
    const server = await seeded();
    expect((await api(server, 'GET', '/api/entries/Topics/%4De')).json.entry.name).toBe('topics/me');
  });

  it('answers 404 for an unknown entry, with suggestions', async () => {
    const server = await seeded();
    const response = await api(server, 'GET', '/api/entries/topics/mee');
    expect(response.status).toBe(404);
    expect(response.json).toEqual(
      apiError(
        'NOT_FOUND',
        `${formatMissing({ name: 'topics/mee', suggestions: ['topics/me'] })} GET /api/entries lists every entry.`,
      ),
    );
  });

  it('answers 404 for a dropped entry, saying it is in the trash and how to bring it back', async () => {
    const server = await seeded();
    await server.memory.drop(LOCAL, 'people/ada');
    const response = await api(server, 'GET', '/api/entries/People/Ada');
    expect(response.status).toBe(404);
    expect(response.json.error.code).toBe('NOT_FOUND');
    expect(response.json.error.message).toMatch(
      /^people\/ada is in the trash, dropped \d{4}-\d{2}-\d{2}T[\d:.]+Z by test: POST \/api\/trash\/people\/ada\/undrop brings it back\. GET \/api\/trash lists the trash\.$/,
    );
    // As it says: the undrop brings it back, and the entry opens again.
    expect((await api(server, 'POST', '/api/trash/people/ada/undrop')).status).toBe(200);
    expect((await api(server, 'GET', '/api/entries/people/ada')).json.entry.name).toBe('people/ada');
  });

  it.each([
    ['/api/entries/topics/Bad%20Name!', 'topics/Bad Name!'],
    // Not percent-encoded as a whole: the name is read as it was sent.
    ['/api/entries/topics/%E0%A4%A', 'topics/%E0%A4%A'],
  ])("answers 400 for the bad name in %s, in core's words on the name %s", async (path, name) => {
    const server = await seeded();
    const response = await api(server, 'GET', path);
    expect(response.status).toBe(400);
    const invalid = await expectEngramError(() => server.memory.open(LOCAL, [name]), 'INVALID_NAME');
    expect(response.json).toEqual(apiError('INVALID_NAME', invalid.message));
  });
});

describe('GET /api/entries/{group}/{slug}/history', () => {
  it('answers every revision, oldest first, with operation, actor, time, description and body', async () => {
    const server = await seeded();
    const response = await api(server, 'GET', '/api/entries/topics/me/history');
    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      revisions: [
        {
          revision: 1,
          operation: 'create',
          actor: 'test',
          at: expect.stringMatching(ISO),
          description: 'Who I am',
          size: 11,
          body: 'Name: Ada.\n',
          note: null,
        },
        {
          revision: 2,
          operation: 'append',
          actor: 'test',
          at: expect.stringMatching(ISO),
          description: 'Who I am',
          size: 22,
          body: 'Name: Ada.\nLikes tea.\n',
          note: null,
        },
      ],
    });
  });

  it('answers the history of a dropped entry too, its drop last', async () => {
    const server = await seeded();
    await server.memory.drop(LOCAL, 'people/ada');
    const { revisions } = (await api(server, 'GET', '/api/entries/people/ada/history')).json;
    expect(revisions.map((item: { operation: string }) => item.operation)).toEqual(['create', 'drop']);
  });

  it('answers 404 for a name never used, and 400 for a bad name', async () => {
    const server = await seeded();
    const unknown = await api(server, 'GET', '/api/entries/topics/nope/history');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual(
      apiError('NOT_FOUND', 'topics/nope has no history: no entry of that name, live or in the trash.'),
    );
    const bad = await api(server, 'GET', '/api/entries/topics/-x/history');
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('INVALID_NAME');
  });
});

describe('POST /api/entries/{group}/{slug}/restore', () => {
  it("brings back a revision's description and body as a new restore revision by the API", async () => {
    const server = await seeded();
    await server.memory.write(LOCAL, { name: 'topics/me', description: 'Me, briefly' });
    const response = await api(server, 'POST', '/api/entries/topics/me/restore', { body: { revision: 1 } });
    expect(response.status).toBe(200);
    expect(response.json.entry).toMatchObject({
      name: 'topics/me',
      description: 'Who I am',
      body: 'Name: Ada.\n',
      size: 11,
      revision: 4,
    });
    expect((await historyOf(server, 'topics/me')).at(-1)).toMatchObject({
      revision: 4,
      operation: 'restore',
      actor: 'api',
      body: 'Name: Ada.\n',
    });
  });

  it('restoring the current content records nothing', async () => {
    const server = await seeded();
    const response = await api(server, 'POST', '/api/entries/topics/me/restore', { body: { revision: 2 } });
    expect(response.status).toBe(200);
    expect(response.json.entry.revision).toBe(2);
    expect(await historyOf(server, 'topics/me')).toHaveLength(2);
  });

  const BAD_BODY =
    'the request body must be {"revision": N}, N a revision number from ' +
    'GET /api/entries/{group}/{slug}/history; nothing was restored.';

  it.each([
    [
      'a revision kept nowhere',
      { revision: 9 },
      404,
      'NOT_FOUND',
      'topics/me has no revision 9; the revisions kept are 1 to 2. GET /api/entries/topics/me/history lists them.',
    ],
    ['a revision of 0', { revision: 0 }, 400, 'INVALID_ARGUMENT', BAD_BODY],
    ['a fractional revision', { revision: 1.5 }, 400, 'INVALID_ARGUMENT', BAD_BODY],
    ['a revision as a string', { revision: '1' }, 400, 'INVALID_ARGUMENT', BAD_BODY],
    ['no revision', {}, 400, 'INVALID_ARGUMENT', BAD_BODY],
    ['an unknown field', { revision: 1, force: true }, 400, 'INVALID_ARGUMENT', BAD_BODY],
    ['an array', [1], 400, 'INVALID_ARGUMENT', BAD_BODY],
    ['null', 'null', 400, 'INVALID_ARGUMENT', BAD_BODY],
    [
      'a body that is not JSON',
      '{"revision": 1',
      400,
      'INVALID_ARGUMENT',
      'the request body is not valid JSON: send {"revision": N}, N a revision number from ' +
        'GET /api/entries/{group}/{slug}/history.',
    ],
  ])('refuses %s and changes nothing', async (_, body, status, code, message) => {
    const server = await seeded();
    const before = await historyOf(server, 'topics/me');
    const response = await api(server, 'POST', '/api/entries/topics/me/restore', { body });
    expect(response.status).toBe(status);
    expect(response.json).toEqual(apiError(code, message));
    expect(await historyOf(server, 'topics/me')).toEqual(before);
  });

  it('refuses an unknown entry, a dropped one and a bad name, changing nothing', async () => {
    const server = await seeded();
    await server.memory.drop(LOCAL, 'people/ada');
    const unknown = await api(server, 'POST', '/api/entries/topics/nope/restore', { body: { revision: 1 } });
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual(
      apiError('NOT_FOUND', 'topics/nope has no history: no entry of that name, live or in the trash.'),
    );
    const dropped = await api(server, 'POST', '/api/entries/people/ada/restore', { body: { revision: 1 } });
    expect(dropped.status).toBe(404);
    expect(dropped.json).toEqual(
      apiError(
        'NOT_FOUND',
        'people/ada is in the trash: undrop it first (POST /api/trash/people/ada/undrop), then restore.',
      ),
    );
    const bad = await api(server, 'POST', '/api/entries/topics/Me%21/restore', { body: { revision: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('INVALID_NAME');
    expect(await server.memory.index(LOCAL)).toEqual([{ name: 'topics/me', size: 22, description: 'Who I am' }]);
    expect((await server.memory.recovery.trash(LOCAL)).map((item) => item.name)).toEqual(['people/ada']);
  });

  it('refuses a body not sent as JSON with 415, changing nothing', async () => {
    const server = await seeded();
    const response = await api(server, 'POST', '/api/entries/topics/me/restore', {
      body: '{"revision": 1}',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).toBe(415);
    expect(response.json).toEqual(
      apiError(
        'UNSUPPORTED_MEDIA_TYPE',
        'Unsupported media type: send the body of POST /api/entries/{group}/{slug}/restore as JSON, ' +
          'with the header Content-Type: application/json.',
      ),
    );
    expect(await historyOf(server, 'topics/me')).toHaveLength(2);
  });

  it('refuses a body over the request cap with 413, changing nothing', async () => {
    const server = startTestApp({ maxBodyBytes: 100 });
    await server.memory.write(LOCAL, { name: 'topics/me', description: 'Me', new: 'x' });
    const response = await api(server, 'POST', '/api/entries/topics/me/restore', {
      body: { revision: 1, padding: 'x'.repeat(200) },
    });
    expect(response.status).toBe(413);
    expect(response.headers.connection).toBe('close');
    expect(response.json).toEqual(
      apiError('TOO_LARGE', 'Request body too large: /api/entries/{group}/{slug}/restore takes at most 100 bytes.'),
    );
    expect(await historyOf(server, 'topics/me')).toHaveLength(1);
  });
});
