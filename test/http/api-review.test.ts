/**
 * `/api/review` and review mode through `/api/tokens`: the changes a review-mode caller
 * proposed, listed and shown with the diff against the entry as it is now, approved,
 * refused as a conflict (409, the entry untouched, the proposal kept) or rejected; a
 * review-mode token may read /api but change nothing there, approving least of all; a
 * signed-in person creates a review-mode token and puts one in review mode or out of it.
 */

import { describe, expect, it } from 'vitest';
import type { Caller } from '../../src/memory/model/caller.js';
import { api, apiError, LOCAL } from './api-client.js';
import { startTestApp, type TestApp } from './in-process.js';

const CLAUDE: Caller = { ...LOCAL, label: 'Claude', review: true };

/** A server with topics/me, and Claude's two proposals: an append to it and a new entry. */
async function proposed(): Promise<{ server: TestApp; append: string; create: string }> {
  const server = startTestApp();
  await server.memory.write(LOCAL, { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' });
  const append = await server.memory.write(CLAUDE, { name: 'topics/me', new: 'Likes tea.' });
  const create = await server.memory.write(CLAUDE, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
  return { server, append: append.proposal!.id, create: create.proposal!.id };
}

describe('/api/review', () => {
  it('lists the proposals oldest first, each with the diff against the entry as it is now', async () => {
    const { server, append, create } = await proposed();
    const listed = await api(server, 'GET', '/api/review');
    expect(listed.status).toBe(200);
    expect(listed.json.proposals).toEqual([
      {
        id: append,
        name: 'topics/me',
        operation: 'append',
        actor: 'Claude',
        at: expect.any(String),
        expires: expect.any(String),
        asked: { description: null, new: 'Likes tea.', old: null },
        applies: true,
        why: null,
        current: { revision: 1, description: 'Who I am', body: 'Name: Ada.\n' },
        after: { description: 'Who I am', body: 'Name: Ada.\nLikes tea.\n' },
        diff: expect.stringContaining('@@ -1,1 +1,2 @@\n Name: Ada.\n+Likes tea.\n'),
      },
      expect.objectContaining({ id: create, name: 'topics/tea', operation: 'create', current: null }),
    ]);
    expect((await api(server, 'GET', `/api/review/${create}`)).json).toEqual(listed.json.proposals[1]);
  });

  it('approves onto the entry as it is now, and rejects', async () => {
    const { server, append, create } = await proposed();
    await server.memory.write(LOCAL, { name: 'topics/me', new: 'Lives in London.' });

    const approved = await api(server, 'POST', `/api/review/${append}/approve`);
    const rejected = await api(server, 'POST', `/api/review/${create}/reject`);

    expect(approved.status).toBe(200);
    expect(approved.json).toMatchObject({
      approved: append,
      name: 'topics/me',
      entry: { body: 'Name: Ada.\nLives in London.\nLikes tea.\n', revision: 3 },
    });
    expect(rejected.json).toEqual({ rejected: create, name: 'topics/tea' });
    expect((await api(server, 'GET', '/api/review')).json).toEqual({ proposals: [] });
    expect((await server.memory.index(LOCAL)).map((row) => row.name)).toEqual(['topics/me']);
    const history = await server.memory.recovery.history(LOCAL, 'topics/me');
    expect(history.at(-1)?.actor).toBe('Claude (approved by local via api)');
  });

  it('refuses an approval that no longer applies with 409, changing nothing and keeping the proposal', async () => {
    const server = startTestApp();
    await server.memory.write(LOCAL, { name: 'topics/me', description: 'Who I am', new: 'Likes tea.' });
    const { proposal } = await server.memory.write(CLAUDE, { name: 'topics/me', old: 'tea', new: 'coffee' });
    await server.memory.write(LOCAL, { name: 'topics/me', old: 'tea', new: 'cocoa' });
    const id = proposal!.id;

    const shown = await api(server, 'GET', `/api/review/${id}`);
    const refused = await api(server, 'POST', `/api/review/${id}/approve`);

    expect(shown.json).toMatchObject({
      applies: false,
      why: 'the text it replaces or removes is no longer in the entry',
      after: { body: 'Likes coffee.\n' },
    });
    expect(shown.json.diff).toContain('-Likes cocoa.\n+Likes coffee.');
    expect(refused.status).toBe(409);
    expect(refused.json).toEqual(
      apiError(
        'PROPOSAL_CONFLICT',
        `Proposal ${id} (topics/me) no longer applies: the text it replaces or removes is no longer in the entry. ` +
          `Nothing was changed. GET /api/review/${id} shows it against the entry as it is now; make the change by ` +
          `hand (PUT /api/entries/topics/me) if you still want it, then POST /api/review/${id}/reject.`,
      ),
    );
    expect((await server.memory.open(LOCAL, ['topics/me'])).found[0]?.body).toBe('Likes cocoa.\n');
    expect((await api(server, 'GET', '/api/review')).json.proposals).toHaveLength(1);
  });

  it('answers 404 in its own words for a proposal that is not waiting', async () => {
    const server = startTestApp();
    const answer = await api(server, 'POST', '/api/review/p-gone/approve');
    expect(answer.status).toBe(404);
    expect(answer.json).toEqual(
      apiError(
        'NOT_FOUND',
        'No proposal p-gone is waiting for review: it was approved, rejected or expired. GET /api/review lists those waiting.',
      ),
    );
  });
});

describe('review-mode tokens over /api', () => {
  async function tokenServer() {
    const server = startTestApp({ auth: 'token' });
    await server.accounts.create('local', 'correct horse battery staple');
    const page = { Origin: server.origin, 'X-Engram-CSRF': '1' };
    const session = await api(server, 'POST', '/api/session', {
      body: { user: 'local', password: 'correct horse battery staple' },
      headers: page,
    });
    const cookie = (session.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '';
    return { server, person: { ...page, Cookie: cookie } };
  }

  it('reads but changes nothing, approving least of all', async () => {
    const { server } = await tokenServer();
    await server.memory.write(LOCAL, { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' });
    const append = (await server.memory.write(CLAUDE, { name: 'topics/me', new: 'Likes tea.' })).proposal!.id;
    const { token } = await server.access.create({ user: 'local', review: true });
    expect((await api(server, 'GET', '/api/review', { token })).status).toBe(200);
    for (const [method, path] of [
      ['POST', `/api/review/${append}/approve`],
      ['PUT', '/api/entries/topics/x'],
    ] as const) {
      const refused = await api(server, method, path, { token, body: {} });
      expect(refused.status).toBe(403);
      expect(refused.json.error.message).toContain("This token's changes need the user's review");
    }
  });

  it('a signed-in person creates a review-mode token, and puts one in review mode and out of it', async () => {
    const { server, person } = await tokenServer();
    const created = await api(server, 'POST', '/api/tokens', {
      body: { label: 'Claude', review: true },
      headers: person,
    });
    expect(created.json.token).toMatchObject({ label: 'Claude', readOnly: false, review: true });
    const { id } = created.json.token;

    const off = await api(server, 'PUT', `/api/tokens/${id}`, { body: { review: false }, headers: person });
    expect(off.json.token).toMatchObject({ id, review: false });
    expect((await server.access.authenticate(created.json.secret)).review).toBe(false);

    const both = await api(server, 'POST', '/api/tokens', { body: { readOnly: true, review: true }, headers: person });
    expect(both.status).toBe(400);
    const bad = await api(server, 'PUT', `/api/tokens/${id}`, { body: { review: 'yes' }, headers: person });
    expect(bad.json).toEqual(
      apiError(
        'INVALID_ARGUMENT',
        '"review" must be true or false: send {"review": true} or {"review": false}; nothing was changed.',
      ),
    );
  });
});
