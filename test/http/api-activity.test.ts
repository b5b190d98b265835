/**
 * `/api/activity` over HTTP: the caller's changes newest first with who made them, paged
 * by `next` without gaps or repeats, filtered by actor; the actors with their counts;
 * each user's own only; bad arguments refused with 400 in the API's words.
 */

import { describe, expect, it } from 'vitest';
import type { Caller } from '../../src/memory/port.js';
import { api } from './api-client.js';
import { startTestApp, type TestApp } from './in-process.js';

const claude: Caller = { user: 'local', label: 'claude-desktop' };
const chatgpt: Caller = { user: 'local', label: 'chatgpt' };

/**
 * Five changes by two assistants: claude creates and appends topics/a twice, chatgpt creates
 * topics/b and drops it, each in a millisecond of its own on the memory's clock (within
 * one, changes list by entry).
 */
async function withActivity(): Promise<TestApp> {
  let clock = Date.now();
  const server = startTestApp({ now: () => clock });
  await server.memory.write(claude, { name: 'topics/a', description: 'About a', new: 'one\n' });
  clock++;
  await server.memory.write(chatgpt, { name: 'topics/b', description: 'About b', new: 'héllo' });
  clock++;
  await server.memory.write(claude, { name: 'topics/a', new: 'two\n' });
  clock++;
  await server.memory.write(claude, { name: 'topics/a', new: 'three\n' });
  clock++;
  await server.memory.drop(chatgpt, 'topics/b');
  return server;
}

describe('GET /api/activity', () => {
  it('lists the changes newest first: what, which revision, the operation, who, when, and the size', async () => {
    const server = await withActivity();
    const response = await api(server, 'GET', '/api/activity');
    expect(response.status).toBe(200);
    expect(response.json.next).toBeUndefined();
    const items = response.json.items;
    expect(
      items.map((item: { name: string; revision: number; operation: string; actor: string }) => [
        item.name,
        item.revision,
        item.operation,
        item.actor,
      ]),
    ).toEqual([
      ['topics/b', 2, 'drop', 'chatgpt'],
      ['topics/a', 3, 'append', 'claude-desktop'],
      ['topics/a', 2, 'append', 'claude-desktop'],
      ['topics/b', 1, 'create', 'chatgpt'],
      ['topics/a', 1, 'create', 'claude-desktop'],
    ]);
    expect(items[0]).toEqual({
      name: 'topics/b',
      revision: 2,
      operation: 'drop',
      actor: 'chatgpt',
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      // é is two bytes, and a write ends the body with a newline.
      size: 7,
      description: 'About b',
      cursor: expect.any(String),
    });
  });

  it('pages by next, each change once, and filters by actor', async () => {
    const server = await withActivity();
    const whole = (await api(server, 'GET', '/api/activity')).json.items;
    const paged: unknown[] = [];
    let path = '/api/activity?limit=2';
    for (;;) {
      const { json } = await api(server, 'GET', path);
      paged.push(...json.items);
      if (!json.next) break;
      path = `/api/activity?limit=2&before=${encodeURIComponent(json.next)}`;
    }
    expect(paged).toEqual(whole);
    const mine = await api(server, 'GET', '/api/activity?actor=chatgpt');
    expect(mine.json.items.map((item: { revision: number }) => item.revision)).toEqual([2, 1]);
  });

  it("shows a user only their own memory's changes", async () => {
    const server = startTestApp({ auth: 'token' });
    const alice = await server.access.create({ user: 'alice', label: 'alice-ui' });
    await server.memory.write({ user: 'bob', label: 'bob-client' }, { name: 'topics/bob', description: 'b', new: 'x' });
    await server.memory.write({ user: 'alice', label: 'claude' }, { name: 'topics/me', description: 'm', new: 'x' });
    const response = await api(server, 'GET', '/api/activity', { token: alice.token });
    expect(response.json.items.map((item: { name: string }) => item.name)).toEqual(['topics/me']);
    const actors = await api(server, 'GET', '/api/activity/actors', { token: alice.token });
    expect(actors.json.actors.map((actor: { actor: string }) => actor.actor)).toEqual(['claude']);
    expect((await api(server, 'GET', '/api/activity')).status).toBe(401);
  });

  it('refuses a bad limit, a cursor it did not give, an empty actor and an unknown parameter, with 400', async () => {
    const server = await withActivity();
    for (const query of ['limit=0', 'limit=201', 'limit=ten', 'before=yesterday', 'actor=', 'since=1']) {
      const response = await api(server, 'GET', `/api/activity?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.json.error.code).toBe('INVALID_ARGUMENT');
    }
  });
});

describe('GET /api/activity/actors', () => {
  it('lists who wrote this memory, most changes first, with the time of their latest', async () => {
    const server = await withActivity();
    const response = await api(server, 'GET', '/api/activity/actors');
    expect(response.status).toBe(200);
    expect(response.json.actors).toEqual([
      { actor: 'claude-desktop', changes: 3, last: expect.stringMatching(/^\d{4}-/) },
      { actor: 'chatgpt', changes: 2, last: expect.stringMatching(/^\d{4}-/) },
    ]);
  });
});
