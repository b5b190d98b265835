/**
 * A person's changes over REST, as the web UI makes them: `POST /api/entries` creates
 * (never appends to a taken name), `PUT /api/entries/{group}/{slug}` saves the whole body
 * and description (with `If-Match: "N"`, refused with 412 and the entry as it is now once
 * a model has written since), `DELETE` drops; each refusal changes nothing.
 */

import { describe, expect, it } from 'vitest';
import { didYouMean } from '../../src/memory/model/format.js';
import { expectEngramError } from '../memory/fixtures.js';
import { api, apiError, contents, LOCAL } from './api-client.js';
import { startTestApp } from './in-process.js';

const model = { user: 'local', label: 'model' };

describe('POST /api/entries', () => {
  it('creates an entry, 201 with its ETag, recorded as made by the web UI when it sends its header', async () => {
    const server = startTestApp();
    const response = await api(server, 'POST', '/api/entries', {
      body: { name: 'People/Ada', description: 'Ada Lovelace', body: 'Mathematician.' },
      headers: { 'X-Engram-CSRF': '1' },
    });
    expect(response.status).toBe(201);
    expect(response.headers.etag).toBe('"1"');
    expect(response.json.entry).toMatchObject({ name: 'people/ada', body: 'Mathematician.\n', revision: 1 });
    expect((await server.memory.recovery.history(LOCAL, 'people/ada'))[0]?.actor).toBe('web');
  });

  it('refuses a taken name (409), a bad name (400), a missing field (400), changing nothing', async () => {
    const server = startTestApp();
    await server.memory.write(model, { name: 'people/ada', description: 'Ada', new: 'Math.' });
    const before = await contents(server.memory);
    const taken = await api(server, 'POST', '/api/entries', {
      body: { name: 'people/ada', description: 'Ada', body: 'Other.' },
    });
    expect(taken.status).toBe(409);
    expect(taken.json).toEqual(
      apiError('CONFLICT', 'people/ada already exists: open it to change it, or choose another name.'),
    );
    const bad = await api(server, 'POST', '/api/entries', {
      body: { name: 'people/John Smith', description: 'John', body: 'x' },
    });
    expect(bad.status).toBe(400);
    // Core's words on a name, which every door passes on as they are (test/memory/model/names.test.ts pins them).
    const invalid = await expectEngramError(() => server.memory.open(LOCAL, ['people/John Smith']), 'INVALID_NAME');
    expect(bad.json).toEqual(apiError('INVALID_NAME', invalid.message));
    const missing = await api(server, 'POST', '/api/entries', { body: { name: 'people/bob', body: 'x' } });
    expect(missing.json).toEqual(
      apiError(
        'INVALID_ARGUMENT',
        '"description" is missing: send {"name": "group/slug", "description": "…", "body": "…"}; nothing was changed.',
      ),
    );
    const empty = await api(server, 'POST', '/api/entries', {
      body: { name: 'people/bob', description: ' ', body: 'x' },
    });
    expect(empty.json).toEqual(
      apiError('INVALID_ARGUMENT', 'people/bob needs a description: one line on what it covers.'),
    );
    expect(await contents(server.memory)).toEqual(before);
  });
});

describe('the caps of a memory, over REST', () => {
  it('refuses a new entry past the entry cap and a save past the byte cap with 413, changing nothing', async () => {
    // Names and descriptions count: topics/a and topics/b take 8 + 1 + 2 bytes each.
    const server = startTestApp({ policy: { maxEntries: 2, userCap: 40 } });
    for (const name of ['topics/a', 'topics/b']) {
      const created = await api(server, 'POST', '/api/entries', { body: { name, description: 'X', body: 'x' } });
      expect(created.status).toBe(201);
    }
    const before = await contents(server.memory);

    const third = await api(server, 'POST', '/api/entries', {
      body: { name: 'topics/c', description: 'C', body: 'c' },
    });
    expect(third.status).toBe(413);
    expect(third.json).toEqual(
      apiError(
        'TOO_MANY_ENTRIES',
        'topics/c would make 3 entries in this memory; the cap is 2. Make room first: drop entries that are ' +
          'no longer needed (GET /api/entries lists them), then try again.',
      ),
    );
    const longer = await api(server, 'PUT', '/api/entries/topics/a', {
      body: { description: 'A description long enough to pass the cap', body: 'x' },
    });
    expect(longer.status).toBe(413);
    expect(longer.json.error.code).toBe('TOO_LARGE');
    expect(longer.json.error.message).toMatch(
      /^topics\/a would bring this memory to 61 bytes \(names, descriptions and bodies\); the cap is 40\./,
    );
    expect(await contents(server.memory)).toEqual(before);
  });
});

describe('PUT /api/entries/{group}/{slug}', () => {
  it('saves the whole body and description over the revision it names', async () => {
    const server = startTestApp();
    await server.memory.write(model, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    const read = await api(server, 'GET', '/api/entries/topics/tea');
    expect(read.headers.etag).toBe('"1"');
    const saved = await api(server, 'PUT', '/api/entries/topics/tea', {
      body: { description: 'Teas', body: 'Green.\nOolong.\n' },
      headers: { 'If-Match': read.headers.etag as string },
    });
    expect(saved.status).toBe(200);
    expect(saved.headers.etag).toBe('"2"');
    expect(saved.json.entry).toMatchObject({ description: 'Teas', body: 'Green.\nOolong.\n', revision: 2 });
  });

  it('refuses with 412 and the entry as it is now when a model wrote since, changing nothing', async () => {
    const server = startTestApp();
    await server.memory.write(model, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    await server.memory.write(model, { name: 'topics/tea', new: 'Oolong.' });
    const before = await contents(server.memory);
    const response = await api(server, 'PUT', '/api/entries/topics/tea', {
      body: { body: 'Mine.\n' },
      headers: { 'If-Match': '"1"' },
    });
    expect(response.status).toBe(412);
    expect(response.headers.etag).toBe('"2"');
    expect(response.json.error).toEqual({
      code: 'STALE_REVISION',
      message: 'topics/tea has changed since you opened it (revision 1, now 2); nothing was saved.',
      current: expect.objectContaining({ revision: 2, body: 'Green.\nOolong.\n', description: 'Tea' }),
    });
    expect(await contents(server.memory)).toEqual(before);
  });

  it('refuses an If-Match it cannot read, an unknown field, nothing to save and an unknown entry', async () => {
    const server = startTestApp();
    await server.memory.write(model, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    const before = await contents(server.memory);
    const put = (body: unknown, headers: Record<string, string> = {}, path = '/api/entries/topics/tea') =>
      api(server, 'PUT', path, { body, headers });
    expect((await put({ body: 'x' }, { 'If-Match': 'W/"1"' })).json.error.message).toBe(
      'If-Match: W/"1" is not understood: send the entry\'s ETag, "N" with N its revision, or leave it out; nothing was changed.',
    );
    expect((await put({ size: 3 })).json.error.message).toBe(
      '"size" is not a field of this request: send {"description": "…", "body": "…"} (either or both); nothing was changed.',
    );
    expect((await put({})).json).toEqual(
      apiError('NOTHING_TO_DO', 'Nothing to save: send the description, the body, or both.'),
    );
    const gone = await put({ body: 'x' }, {}, '/api/entries/topics/none');
    expect(gone.status).toBe(404);
    expect(await contents(server.memory)).toEqual(before);
  });

  it('names its own fields for a NUL character (400) and a description over the cap (413), changing nothing', async () => {
    const server = startTestApp({ policy: { descriptionCap: 10 } });
    await server.memory.write(model, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    const before = await contents(server.memory);
    const put = (body: unknown) => api(server, 'PUT', '/api/entries/topics/tea', { body });
    const nul = await put({ body: 'Green.\u0000' });
    expect(nul.status).toBe(400);
    expect(nul.json).toEqual(
      apiError(
        'INVALID_ARGUMENT',
        '"body" contains a NUL character (\\u0000), which memory cannot hold: remove it and send it again.',
      ),
    );
    const long = await put({ description: 'Eleven long' });
    expect(long.status).toBe(413);
    expect(long.json).toEqual(
      apiError(
        'TOO_LARGE',
        'The description of topics/tea is 11 characters; the cap is 10: shorten it to one line on what it covers.',
      ),
    );
    expect(await contents(server.memory)).toEqual(before);
  });

  it('is refused to a read-only token', async () => {
    const server = startTestApp({ auth: 'token' });
    const reader = await server.access.create({ user: 'local', label: 'viewer', readOnly: true });
    await server.memory.write(model, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    const response = await api(server, 'PUT', '/api/entries/topics/tea', {
      body: { body: 'x' },
      token: reader.token,
    });
    expect(response.status).toBe(403);
    expect(response.json.error.code).toBe('READ_ONLY_TOKEN');
  });
});

describe('DELETE /api/entries/{group}/{slug}', () => {
  it('drops the entry into the trash', async () => {
    const server = startTestApp();
    await server.memory.write(model, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    const response = await api(server, 'DELETE', '/api/entries/topics/tea');
    expect(response.json).toEqual({ dropped: 'topics/tea' });
    expect((await server.memory.recovery.trash(LOCAL)).map((item) => item.name)).toEqual(['topics/tea']);
  });

  it('answers 404 with suggestions for an unknown entry', async () => {
    const server = startTestApp();
    await server.memory.write(model, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    const response = await api(server, 'DELETE', '/api/entries/topics/tee');
    expect(response.status).toBe(404);
    expect(response.json).toEqual(
      apiError(
        'NOT_FOUND',
        `topics/tee not found, nothing was dropped.${didYouMean(['topics/tea'])} GET /api/entries lists every entry.`,
      ),
    );
  });
});
