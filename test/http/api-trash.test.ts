/**
 * `/api/trash` over HTTP: what was dropped and when it will be purged, and undrop — with
 * its refusals (not in the trash, name taken by a live entry, bad name) changing nothing.
 */

import { describe, expect, it } from 'vitest';
import { api, apiError, LOCAL } from './api-client.js';
import { startTestApp, type TestApp } from './in-process.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A server whose local user dropped topics/old (by the test) and keeps topics/me. */
async function withTrash(): Promise<TestApp> {
  const server = startTestApp();
  await server.memory.write(LOCAL, { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' });
  await server.memory.write(LOCAL, { name: 'topics/old', description: 'Old notes', new: 'Stale.' });
  await server.memory.drop(LOCAL, 'topics/old');
  return server;
}

describe('GET /api/trash', () => {
  it('lists dropped entries with who dropped them, when, and when they will be purged; no bodies', async () => {
    const server = await withTrash();
    const response = await api(server, 'GET', '/api/trash');
    expect(response.status).toBe(200);
    expect(response.json.trash).toHaveLength(1);
    const [item] = response.json.trash;
    expect(item).toEqual({
      name: 'topics/old',
      description: 'Old notes',
      size: 7,
      created: expect.any(String),
      updated: expect.any(String),
      droppedAt: expect.any(String),
      droppedBy: 'test',
      purgeAt: expect.any(String),
    });
    expect(Date.parse(item.purgeAt) - Date.parse(item.droppedAt)).toBe(30 * DAY_MS);
  });

  it('answers an empty trash with no rows', async () => {
    const server = startTestApp();
    expect((await api(server, 'GET', '/api/trash')).json).toEqual({ trash: [] });
  });
});

describe('POST /api/trash/{group}/{slug}/undrop', () => {
  it('brings the entry back as it was, recorded as an undrop by the API', async () => {
    const server = await withTrash();
    const response = await api(server, 'POST', '/api/trash/topics/old/undrop');
    expect(response.status).toBe(200);
    expect(response.json.entry).toMatchObject({ name: 'topics/old', description: 'Old notes', body: 'Stale.\n' });
    expect((await api(server, 'GET', '/api/trash')).json).toEqual({ trash: [] });
    expect((await server.memory.recovery.history(LOCAL, 'topics/old')).at(-1)).toMatchObject({
      operation: 'undrop',
      actor: 'api',
    });
  });

  it('refuses with 409 when a live entry has taken the name, changing nothing', async () => {
    const server = await withTrash();
    await server.memory.write(LOCAL, { name: 'topics/old', description: 'New notes', new: 'Fresh.' });
    const response = await api(server, 'POST', '/api/trash/topics/old/undrop');
    expect(response.status).toBe(409);
    expect(response.json).toEqual(
      apiError(
        'CONFLICT',
        'topics/old cannot be undropped: a live entry has taken the name since. Drop the live one first ' +
          '(GET /api/entries/topics/old shows it), then undrop again.',
      ),
    );
    const [live] = (await server.memory.open(LOCAL, ['topics/old'])).found;
    expect(live).toMatchObject({ description: 'New notes', body: 'Fresh.\n', revision: 1 });
    expect((await server.memory.recovery.trash(LOCAL)).map((item) => item.name)).toEqual(['topics/old']);
  });

  it('refuses with 404 a name not in the trash, and with 400 a bad name, changing nothing', async () => {
    const server = await withTrash();
    const live = await api(server, 'POST', '/api/trash/topics/me/undrop');
    expect(live.status).toBe(404);
    expect(live.json).toEqual(apiError('NOT_FOUND', 'topics/me is not in the trash. GET /api/trash lists what is.'));
    const bad = await api(server, 'POST', '/api/trash/topics/Old%20One/undrop');
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('INVALID_NAME');
    expect(await server.memory.index(LOCAL)).toEqual([{ name: 'topics/me', size: 11, description: 'Who I am' }]);
    expect((await server.memory.recovery.trash(LOCAL)).map((item) => item.name)).toEqual(['topics/old']);
  });
});

describe('DELETE /api/trash/{group}/{slug}', () => {
  it('purges the dropped entry and its history for good', async () => {
    const server = await withTrash();
    const response = await api(server, 'DELETE', '/api/trash/Topics/Old');
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ purged: 'topics/old', copies: 1 });
    expect((await api(server, 'GET', '/api/trash')).json).toEqual({ trash: [] });
    expect((await api(server, 'GET', '/api/entries/topics/old/history')).status).toBe(404);
  });

  it('refuses a live entry (409, drop it first) and a name not in the trash (404), purging nothing', async () => {
    const server = await withTrash();
    const live = await api(server, 'DELETE', '/api/trash/topics/me');
    expect(live.status).toBe(409);
    expect(live.json).toEqual(
      apiError(
        'CONFLICT',
        'topics/me is a live entry, not in the trash: drop it first (DELETE /api/entries/topics/me), then purge it.',
      ),
    );
    expect((await api(server, 'DELETE', '/api/trash/topics/none')).status).toBe(404);
    expect(await server.memory.index(LOCAL)).toEqual([{ name: 'topics/me', size: 11, description: 'Who I am' }]);
    expect((await server.memory.recovery.trash(LOCAL)).map((item) => item.name)).toEqual(['topics/old']);
  });
});
