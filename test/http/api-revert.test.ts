/**
 * `/api/revert` over HTTP: an app's changes previewed (ISO times, both changes of a
 * conflict), applied with the preview's version, the conflict chosen or skipped, the
 * revert undone through its id; refusals in the API's words: unknown actor, bad time,
 * empty range, stale preview, a read-only token — each changing nothing.
 */

import { describe, expect, it } from 'vitest';
import type { Caller } from '../../src/memory/port.js';
import { api, apiError, contents } from './api-client.js';
import { startTestApp, type TestApp } from './in-process.js';

const ROGUE: Caller = { user: 'local', label: 'rogue-app' };
const LAPTOP: Caller = { user: 'local', label: 'laptop' };
const START = Date.UTC(2026, 5, 1, 9);

async function withRogue(options: { auth?: 'token' } = {}): Promise<{ server: TestApp; clock: { now: number } }> {
  const clock = { now: START };
  const server = startTestApp({ now: () => clock.now, ...options });
  const user = options.auth === 'token' ? 'ada' : 'local';
  const as = (caller: Caller) => ({ ...caller, user });
  await server.memory.write(as({ user, label: 'me' }), { name: 'topics/a', description: 'About a', new: 'one\n' });
  await server.memory.write(as({ user, label: 'me' }), { name: 'topics/b', description: 'About b', new: 'two\n' });
  clock.now += 60_000;
  await server.memory.write(as(ROGUE), { name: 'topics/a', new: 'poison\n' });
  await server.memory.write(as(ROGUE), { name: 'topics/b', old: 'two', new: 'poison' });
  await server.memory.write(as(ROGUE), { name: 'topics/new', description: 'Planted', new: 'evil\n' });
  clock.now += 1_000;
  await server.memory.write(as(LAPTOP), { name: 'topics/b', new: 'later\n' });
  clock.now += 1_000;
  return { server, clock };
}

const SINCE = new Date(START + 60_000).toISOString();
const query = `/api/revert?actor=rogue-app&since=${encodeURIComponent(SINCE)}`;

describe('/api/revert', () => {
  it('previews: each entry, what it returns to, the diff, and a conflict with both changes', async () => {
    const { server } = await withRogue();
    const response = await api(server, 'GET', query);
    expect(response.status).toBe(200);
    const preview = response.json;
    expect(preview).toMatchObject({ actor: 'rogue-app', since: SINCE, until: null, undoes: null });
    expect(
      preview.entries.map((entry: { name: string; action: string; conflict: boolean }) => [
        entry.name,
        entry.action,
        entry.conflict,
      ]),
    ).toEqual([
      ['topics/a', 'restore', false],
      ['topics/b', 'restore', true],
      ['topics/new', 'drop', false],
    ]);
    const [a, b] = preview.entries;
    expect(a.target).toEqual({ present: true, description: 'About a', body: 'one\n' });
    expect(a.patch).toContain('-poison');
    expect(b.changes).toEqual([
      {
        revision: 2,
        operation: 'replace',
        actor: 'rogue-app',
        at: SINCE,
        description: 'About b',
        size: 7,
        note: null,
      },
    ]);
    expect(b.conflicts.map((change: { actor: string; operation: string }) => [change.actor, change.operation])).toEqual(
      [['laptop', 'append']],
    );
  });

  it('applies the preview, skipping the conflict; undoes it through its id, every entry back', async () => {
    const { server } = await withRogue();
    const afterRogue = await contents(server.memory);
    const { version } = (await api(server, 'GET', query)).json;
    const applied = await api(server, 'POST', '/api/revert', { body: { actor: 'rogue-app', since: SINCE, version } });
    expect(applied.status).toBe(200);
    expect(applied.json.skipped).toEqual([{ name: 'topics/b', why: 'conflict' }]);
    expect(await contents(server.memory)).toEqual([
      { name: 'topics/a', description: 'About a', body: 'one\n' },
      afterRogue.find((entry) => entry.name === 'topics/b'),
    ]);
    const history = await api(server, 'GET', '/api/entries/topics/a/history');
    expect(history.json.revisions.at(-1)).toMatchObject({
      actor: 'api',
      note: expect.stringMatching(`^revert ${applied.json.id}: `),
    });

    const undoPreview = await api(server, 'GET', `/api/revert/${applied.json.id}/undo`);
    expect(undoPreview.json.undoes).toBe(applied.json.id);
    const undone = await api(server, 'POST', `/api/revert/${applied.json.id}/undo`, {
      body: { version: undoPreview.json.version },
    });
    expect(undone.status).toBe(200);
    expect(await contents(server.memory)).toEqual(afterRogue);
  });

  it('reverts a chosen conflict with include', async () => {
    const { server } = await withRogue();
    const applied = await api(server, 'POST', '/api/revert', {
      body: { actor: 'rogue-app', since: SINCE, include: ['topics/b'] },
    });
    expect(applied.json.skipped).toEqual([]);
    expect((await contents(server.memory)).find((entry) => entry.name === 'topics/b')?.body).toBe('two\n');
  });

  it('refuses an unknown actor, a bad time, an empty range and a stale preview, changing nothing', async () => {
    const { server } = await withRogue();
    const before = await contents(server.memory);
    const unknown = await api(server, 'GET', `/api/revert?actor=nobody&since=${SINCE}`);
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual(
      apiError(
        'NOT_FOUND',
        'No change by "nobody" is kept in this memory\'s history; nothing was reverted. GET /api/activity/actors lists the actors.',
      ),
    );
    const badTime = await api(server, 'POST', '/api/revert', { body: { actor: 'rogue-app', since: 'yesterday' } });
    expect(badTime.status).toBe(400);
    expect(badTime.json.error.message).toMatch(/^"since" must be an ISO 8601 time/);
    const empty = await api(server, 'POST', '/api/revert', {
      body: { actor: 'rogue-app', since: '2099-01-01T00:00:00Z' },
    });
    expect(empty.json.error.code).toBe('NOTHING_TO_DO');
    const { version } = (await api(server, 'GET', query)).json;
    await server.memory.write(LAPTOP, { name: 'topics/a', new: 'meanwhile\n' });
    const changed = await contents(server.memory);
    const stale = await api(server, 'POST', '/api/revert', { body: { actor: 'rogue-app', since: SINCE, version } });
    expect(stale.status).toBe(409);
    expect(stale.json).toEqual(
      apiError(
        'CONFLICT',
        'The memory changed since this preview: nothing was changed. Preview it again (GET /api/revert, or GET ' +
          '/api/revert/{id}/undo) and apply the new preview with its version.',
      ),
    );
    expect(await contents(server.memory)).toEqual(changed);
    expect(changed).not.toEqual(before);
    const unknownRevert = await api(server, 'POST', '/api/revert/kx0-12345678/undo', { body: {} });
    expect(unknownRevert.status).toBe(404);
  });

  it('lets a read-only token preview but not apply or undo', async () => {
    const { server } = await withRogue({ auth: 'token' });
    const { token } = await server.access.create({ user: 'ada', readOnly: true });
    const before = await contents(server.memory, { user: 'ada', label: 'x' });
    expect((await api(server, 'GET', query, { token })).status).toBe(200);
    const refused = await api(server, 'POST', '/api/revert', { token, body: { actor: 'rogue-app', since: SINCE } });
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe('READ_ONLY_TOKEN');
    expect(await contents(server.memory, { user: 'ada', label: 'x' })).toEqual(before);
  });
});
