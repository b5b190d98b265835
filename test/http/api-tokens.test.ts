/**
 * The caller's own tokens and connected apps over REST (`/api/tokens`, `/api/apps`): a
 * signed-in person lists, creates (the secret shown once, and it works) and revokes their
 * own; never sees nor ends another user's; a token cannot mint tokens; a change by cookie
 * needs the page's Origin and CSRF header; read-only tokens change nothing; and with
 * --auth none there are no tokens to manage. (Apps connected by OAuth: api-apps.test.ts.)
 */

import { describe, expect, it } from 'vitest';
import { api, apiError } from './api-client.js';
import { startTestApp, type TestApp } from './in-process.js';

const PASSWORD = 'correct horse battery staple';

interface SignedIn {
  /** The cookie and headers the web UI sends with every change. */
  readonly headers: Record<string, string>;
}

async function signInAs(server: TestApp, user: string): Promise<SignedIn> {
  const page = { Origin: server.origin, 'X-Engram-CSRF': '1' };
  const response = await api(server, 'POST', '/api/session', { body: { user, password: PASSWORD }, headers: page });
  expect(response.status).toBe(200);
  const cookie = (response.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '';
  return { headers: { ...page, Cookie: cookie } };
}

async function tokenServer(): Promise<TestApp> {
  const server = startTestApp({ auth: 'token' });
  await server.accounts.create('alice', PASSWORD);
  await server.accounts.create('bob', PASSWORD);
  return server;
}

describe('/api/tokens', () => {
  it('creates a token shown once, which works at once, lists it without its secret, and revokes it', async () => {
    const server = await tokenServer();
    const alice = await signInAs(server, 'alice');
    const created = await api(server, 'POST', '/api/tokens', {
      body: { label: 'llama.cpp WebUI' },
      headers: alice.headers,
    });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      token: {
        id: expect.any(String),
        label: 'llama.cpp WebUI',
        readOnly: false,
        review: false,
        created: expect.any(String),
        lastUsed: null,
      },
      secret: expect.stringMatching(/^engram_/),
    });
    const { secret, token } = created.json;
    const entries = await api(server, 'GET', '/api/entries', { token: secret });
    expect(entries.status).toBe(200);
    const listed = await api(server, 'GET', '/api/tokens', { headers: alice.headers });
    expect(listed.json.tokens.map((item: { id: string }) => item.id)).toEqual([token.id]);
    expect(listed.body).not.toContain(secret);
    const revoked = await api(server, 'DELETE', `/api/tokens/${token.id}`, { headers: alice.headers });
    expect(revoked.json).toEqual({ revoked: token.id });
    expect((await api(server, 'GET', '/api/entries', { token: secret })).status).toBe(401);
    expect((await api(server, 'GET', '/api/tokens', { headers: alice.headers })).json).toEqual({ tokens: [] });
  });

  it("never shows nor revokes another user's token: it is unknown to them, and keeps working", async () => {
    const server = await tokenServer();
    const bobs = await server.access.create({ user: 'bob', label: 'bob laptop' });
    const alice = await signInAs(server, 'alice');
    expect((await api(server, 'GET', '/api/tokens', { headers: alice.headers })).json).toEqual({ tokens: [] });
    const refused = await api(server, 'DELETE', `/api/tokens/${bobs.info.id}`, { headers: alice.headers });
    expect(refused.status).toBe(404);
    expect(refused.json).toEqual(apiError('NOT_FOUND', `you have no token with the id "${bobs.info.id}".`));
    expect((await api(server, 'GET', '/api/entries', { token: bobs.token })).status).toBe(200);
  });

  it('refuses a token creating a token (403 SIGN_IN_REQUIRED), and a read-only token revoking one', async () => {
    const server = await tokenServer();
    const writer = await server.access.create({ user: 'alice', label: 'script' });
    const reader = await server.access.create({ user: 'alice', label: 'reader', readOnly: true });
    const minted = await api(server, 'POST', '/api/tokens', { body: {}, token: writer.token });
    expect(minted.status).toBe(403);
    expect(minted.json).toEqual(apiError('SIGN_IN_REQUIRED', /^A token cannot create tokens/));
    const revoke = await api(server, 'DELETE', `/api/tokens/${writer.info.id}`, { token: reader.token });
    expect(revoke.status).toBe(403);
    expect(revoke.json.error.code).toBe('READ_ONLY_TOKEN');
    const listed = await api(server, 'GET', '/api/tokens', { token: reader.token });
    // Two tokens made in the same millisecond list in either order (by creation time, then id).
    expect(listed.json.tokens.map((item: { label: string }) => item.label).sort()).toEqual(['reader', 'script']);
  });

  it('refuses a change by cookie without the page Origin and CSRF header, creating nothing', async () => {
    const server = await tokenServer();
    const alice = await signInAs(server, 'alice');
    const refused = await api(server, 'POST', '/api/tokens', {
      body: {},
      headers: { Cookie: alice.headers.Cookie ?? '' },
    });
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe('FORBIDDEN_ORIGIN');
    expect(await server.access.listOf('alice')).toEqual([]);
  });

  it('checks the body: read-only tokens by request, unknown fields and bad labels refused', async () => {
    const server = await tokenServer();
    const alice = await signInAs(server, 'alice');
    const reader = await api(server, 'POST', '/api/tokens', { body: { readOnly: true }, headers: alice.headers });
    expect(reader.json.token).toMatchObject({ readOnly: true, label: `token ${reader.json.token.id}` });
    for (const body of [{ user: 'bob' }, { label: 3 }, { readOnly: 'yes' }, [], { label: '' }]) {
      const refused = await api(server, 'POST', '/api/tokens', { body, headers: alice.headers });
      expect(refused.status).toBe(400);
      expect(refused.json.error.code).toBe('INVALID_ARGUMENT');
    }
    expect(await server.access.listOf('alice')).toHaveLength(1);
    expect(await server.access.listOf('bob')).toEqual([]);
  });

  it('says there are no tokens with --auth none', async () => {
    const server = startTestApp();
    const response = await api(server, 'GET', '/api/tokens');
    expect(response.status).toBe(400);
    expect(response.json).toEqual(apiError('INVALID_ARGUMENT', /without authentication \(--auth none\)/));
  });
});

describe('/api/apps', () => {
  it('lists none with --auth token, where no app connects', async () => {
    const server = await tokenServer();
    const alice = await signInAs(server, 'alice');
    expect((await api(server, 'GET', '/api/apps', { headers: alice.headers })).json).toEqual({ apps: [] });
    expect((await api(server, 'DELETE', '/api/apps/x', { headers: alice.headers })).status).toBe(404);
  });
});
