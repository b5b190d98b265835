/**
 * Signing in to the web UI over REST (`/api/session`, `/api/sessions`) and the session
 * cookie as authentication for `/api`: the cookie's attributes, the refusals of sign-in
 * and of every cookie-authenticated change that does not come from the server's own page
 * (Origin and X-Engram-CSRF, each missing or foreign), bearer calls needing neither,
 * sessions listed and revoked, signing out; and no sign-in at all with --auth none.
 */

import { describe, expect, it, vi } from 'vitest';
import { api, apiError, contents, LOCAL } from './api-client.js';
import { startTestApp, type TestApp } from './in-process.js';

const PASSWORD = 'correct horse battery staple';
const model = { user: 'alice', label: 'model' };

async function tokenServer(): Promise<TestApp> {
  const server = startTestApp({ auth: 'token' });
  await server.accounts.create('alice', PASSWORD);
  await server.accounts.create('bob', PASSWORD);
  await server.memory.write(model, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
  return server;
}

/** What the web UI sends with every change. */
const ownPage = (origin: string) => ({ Origin: origin, 'X-Engram-CSRF': '1' });

async function signIn(server: TestApp, user = 'alice', password = PASSWORD) {
  return api(server, 'POST', '/api/session', { body: { user, password }, headers: ownPage(server.origin) });
}

/** The `name=value` of a Set-Cookie, as a browser sends it back. */
function cookieOf(setCookie: string[] | undefined): string {
  return (setCookie?.[0] ?? '').split(';')[0] ?? '';
}

describe('signing in with a password', () => {
  it('says who is signed in: nobody, then the user, with an HttpOnly SameSite=Strict cookie', async () => {
    const server = await tokenServer();
    expect((await api(server, 'GET', '/api/session')).json).toEqual({
      auth: 'token',
      signIn: true,
      user: null,
      via: null,
      readOnly: false,
    });
    const response = await signIn(server, ' Alice ');
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ user: 'alice', via: 'session' });
    const [setCookie] = response.headers['set-cookie'] ?? [];
    expect(setCookie).toMatch(/^engram_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=604800$/);
    const cookie = cookieOf(response.headers['set-cookie']);
    expect((await api(server, 'GET', '/api/session', { headers: { Cookie: cookie } })).json).toMatchObject({
      user: 'alice',
      via: 'session',
    });
    const entries = await api(server, 'GET', '/api/entries', { headers: { Cookie: cookie } });
    expect(entries.json.entries.map((row: { name: string }) => row.name)).toEqual(['topics/tea']);
  });

  it('refuses a wrong password (401) and a sign-in not sent by its own page (403), issuing no cookie', async () => {
    const server = await tokenServer();
    const wrong = await signIn(server, 'alice', 'not the password');
    expect(wrong.status).toBe(401);
    expect(wrong.json).toEqual(apiError('UNAUTHORIZED', 'wrong user name or password'));
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const attempts: Record<string, string>[] = [
      {},
      { Origin: server.origin },
      { 'X-Engram-CSRF': '1' },
      { Origin: 'https://evil.example', 'X-Engram-CSRF': '1' },
    ];
    for (const headers of attempts) {
      const response = await api(server, 'POST', '/api/session', {
        body: { user: 'alice', password: PASSWORD },
        headers,
      });
      expect(response.status).toBe(403);
      expect(response.json.error.code).toBe('FORBIDDEN_ORIGIN');
      expect(response.headers['set-cookie']).toBeUndefined();
    }
  });

  it('refuses a sign-in as a wrong password (401), issuing no cookie, when the user is removed as they sign in', async () => {
    const server = await tokenServer();
    const addSession = server.store.accounts.addSession.bind(server.store.accounts);
    vi.spyOn(server.store.accounts, 'addSession').mockImplementation(async (session) => {
      await server.accounts.remove('alice', { purge: false });
      return addSession(session);
    });
    const refused = await signIn(server);
    expect(refused.status).toBe(401);
    expect(refused.json).toEqual(apiError('UNAUTHORIZED', 'wrong user name or password'));
    expect(refused.headers['set-cookie']).toBeUndefined();
    expect(await server.store.accounts.listSessions()).toEqual([]);
  });

  it('slows down guesses: 429 with Retry-After after too many failures', async () => {
    const server = await tokenServer();
    let response = await signIn(server, 'alice', 'wrong');
    for (let attempt = 0; attempt < 20 && response.status === 401; attempt++) {
      response = await signIn(server, 'alice', 'wrong');
    }
    expect(response.status).toBe(429);
    expect(response.json.error.code).toBe('TOO_MANY_ATTEMPTS');
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('the session cookie as authentication of /api', () => {
  it.each([
    ['no Origin and no header', {}],
    ['its own Origin without the header', { origin: true }],
    ['the header from a foreign Origin', { header: true, foreign: true }],
    ['the header without Origin', { header: true }],
  ])(
    'refuses a change with %s: 403, nothing changed',
    async (_, how: { origin?: boolean; header?: boolean; foreign?: boolean }) => {
      const server = await tokenServer();
      const cookie = cookieOf((await signIn(server)).headers['set-cookie']);
      const before = await contents(server.memory, model);
      const headers: Record<string, string> = { Cookie: cookie };
      if (how.origin) headers.Origin = server.origin;
      if (how.foreign) headers.Origin = 'https://evil.example';
      if (how.header) headers['X-Engram-CSRF'] = '1';
      for (const [method, path, body] of [
        ['PUT', '/api/entries/topics/tea', { body: 'Evil.\n' }],
        ['POST', '/api/entries', { name: 'topics/evil', description: 'Evil', body: 'x' }],
        ['DELETE', '/api/entries/topics/tea', undefined],
        ['POST', '/api/import?mode=replace', { format: 'engram-export', version: 1, entries: [] }],
      ] as const) {
        const response = await api(server, method, path, { body, headers });
        expect(response.status).toBe(403);
        expect(response.json.error.code).toBe('FORBIDDEN_ORIGIN');
      }
      expect(await contents(server.memory, model)).toEqual(before);
    },
  );

  it('accepts a change from its own page, recorded as made in the web UI', async () => {
    const server = await tokenServer();
    const cookie = cookieOf((await signIn(server)).headers['set-cookie']);
    const response = await api(server, 'PUT', '/api/entries/topics/tea', {
      body: { body: 'Mine.\n' },
      headers: { Cookie: cookie, ...ownPage(server.origin) },
    });
    expect(response.status).toBe(200);
    expect((await server.memory.recovery.history(model, 'topics/tea')).at(-1)?.actor).toBe('web');
  });

  it('lets a bearer call change memory without Origin or header, even with a cookie beside it', async () => {
    const server = await tokenServer();
    const { token } = await server.access.create({ user: 'alice', label: 'script' });
    const response = await api(server, 'PUT', '/api/entries/topics/tea', { body: { body: 'Script.\n' }, token });
    expect(response.status).toBe(200);
  });

  it('lists the user’s sessions, the current one marked; revokes one; signs out', async () => {
    const server = await tokenServer();
    const first = cookieOf((await signIn(server)).headers['set-cookie']);
    const second = cookieOf((await signIn(server)).headers['set-cookie']);
    const bobs = cookieOf((await signIn(server, 'bob')).headers['set-cookie']);
    const listed = await api(server, 'GET', '/api/sessions', { headers: { Cookie: second } });
    expect(listed.json.sessions).toHaveLength(2);
    expect(listed.json.sessions.map((session: { current: boolean }) => session.current)).toEqual([false, true]);
    const [firstId] = listed.json.sessions.map((session: { id: string }) => session.id);
    const bobId = (await api(server, 'GET', '/api/sessions', { headers: { Cookie: bobs } })).json.sessions[0].id;

    const notYours = await api(server, 'DELETE', `/api/sessions/${bobId}`, {
      headers: { Cookie: second, ...ownPage(server.origin) },
    });
    expect(notYours.status).toBe(404);
    const forged = await api(server, 'DELETE', `/api/sessions/${firstId}`, { headers: { Cookie: second } });
    expect(forged.status).toBe(403);
    const revoked = await api(server, 'DELETE', `/api/sessions/${firstId}`, {
      headers: { Cookie: second, ...ownPage(server.origin) },
    });
    expect(revoked.json).toEqual({ revoked: firstId });
    expect((await api(server, 'GET', '/api/entries', { headers: { Cookie: first } })).status).toBe(401);

    const forgedOut = await api(server, 'DELETE', '/api/session', { headers: { Cookie: second } });
    expect(forgedOut.status).toBe(403);
    const out = await api(server, 'DELETE', '/api/session', {
      headers: { Cookie: second, ...ownPage(server.origin) },
    });
    expect(out.json).toMatchObject({ user: null });
    expect(out.headers['set-cookie']?.[0]).toMatch(/^engram_session=; .*Max-Age=0$/);
    expect((await api(server, 'GET', '/api/entries', { headers: { Cookie: second } })).status).toBe(401);
    expect((await api(server, 'GET', '/api/entries', { headers: { Cookie: bobs } })).status).toBe(200);
  });
});

describe('--auth none', () => {
  it('has no sign-in: the local user, always', async () => {
    const server = startTestApp();
    await server.memory.write(LOCAL, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    expect((await api(server, 'GET', '/api/session')).json).toEqual({
      auth: 'none',
      signIn: false,
      user: 'local',
      via: 'none',
      readOnly: false,
    });
    const response = await api(server, 'POST', '/api/session', { body: { user: 'local', password: PASSWORD } });
    expect(response.status).toBe(400);
    expect(response.json.error.message).toMatch(/^This server has no sign-in/);
  });
});

describe('behind https (--public-url https://…)', () => {
  it('sets the cookie Secure, and takes changes from the public origin', async () => {
    const server = startTestApp({ auth: 'token', publicUrl: new URL('https://memory.example.com') });
    await server.accounts.create('alice', PASSWORD);
    const headers = { Origin: 'https://memory.example.com', 'X-Engram-CSRF': '1' };
    const signedIn = await api(server, 'POST', '/api/session', {
      body: { user: 'alice', password: PASSWORD },
      headers,
    });
    expect(signedIn.headers['set-cookie']?.[0]).toMatch(/; HttpOnly; SameSite=Strict; Secure; Max-Age=604800$/);
    const cookie = cookieOf(signedIn.headers['set-cookie']);
    const created = await api(server, 'POST', '/api/entries', {
      body: { name: 'topics/tea', description: 'Tea', body: 'Green.' },
      headers: { Cookie: cookie, ...headers },
    });
    expect(created.status).toBe(201);
  });
});
