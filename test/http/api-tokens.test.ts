/**
 * The caller's own tokens and connected apps over REST (`/api/tokens`, `/api/apps`): a
 * signed-in person lists, creates (the secret shown once, and it works) and revokes their
 * own; never sees nor ends another user's; a token cannot mint tokens; a change by cookie
 * needs the page's Origin and CSRF header; read-only tokens change nothing; and with
 * --auth none there are no tokens to manage.
 */

import { describe, expect, it } from 'vitest';
import { api, apiError } from './api-client.js';
import { startTestServer, type TestServer } from './fixtures.js';
import { authorizeDirectly, startOAuthServer } from './oauth-fixtures.js';

const PASSWORD = 'correct horse battery staple';

interface SignedIn {
  readonly port: number;
  readonly origin: string;
  /** The cookie and headers the web UI sends with every change. */
  readonly headers: Record<string, string>;
}

async function signInAs(port: number, user: string): Promise<SignedIn> {
  const origin = `http://127.0.0.1:${port}`;
  const page = { Origin: origin, 'X-Engram-CSRF': '1' };
  const response = await api(port, 'POST', '/api/session', { body: { user, password: PASSWORD }, headers: page });
  expect(response.status).toBe(200);
  const cookie = (response.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '';
  return { port, origin, headers: { ...page, Cookie: cookie } };
}

async function tokenServer(): Promise<TestServer> {
  const server = await startTestServer({ auth: 'token' });
  await server.accounts.create('alice', PASSWORD);
  await server.accounts.create('bob', PASSWORD);
  return server;
}

describe('/api/tokens', () => {
  it('creates a token shown once, which works at once, lists it without its secret, and revokes it', async () => {
    const server = await tokenServer();
    const alice = await signInAs(server.port, 'alice');
    const created = await api(server.port, 'POST', '/api/tokens', {
      body: { label: 'llama.cpp WebUI' },
      headers: alice.headers,
    });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      token: {
        id: expect.any(String),
        label: 'llama.cpp WebUI',
        readOnly: false,
        created: expect.any(String),
        lastUsed: null,
      },
      secret: expect.stringMatching(/^engram_/),
    });
    const { secret, token } = created.json;
    const entries = await api(server.port, 'GET', '/api/entries', { token: secret });
    expect(entries.status).toBe(200);
    const listed = await api(server.port, 'GET', '/api/tokens', { headers: alice.headers });
    expect(listed.json.tokens.map((item: { id: string }) => item.id)).toEqual([token.id]);
    expect(listed.body).not.toContain(secret);
    const revoked = await api(server.port, 'DELETE', `/api/tokens/${token.id}`, { headers: alice.headers });
    expect(revoked.json).toEqual({ revoked: token.id });
    expect((await api(server.port, 'GET', '/api/entries', { token: secret })).status).toBe(401);
    expect((await api(server.port, 'GET', '/api/tokens', { headers: alice.headers })).json).toEqual({ tokens: [] });
  });

  it("never shows nor revokes another user's token: it is unknown to them, and keeps working", async () => {
    const server = await tokenServer();
    const bobs = await server.access.create({ user: 'bob', label: 'bob laptop' });
    const alice = await signInAs(server.port, 'alice');
    expect((await api(server.port, 'GET', '/api/tokens', { headers: alice.headers })).json).toEqual({ tokens: [] });
    const refused = await api(server.port, 'DELETE', `/api/tokens/${bobs.info.id}`, { headers: alice.headers });
    expect(refused.status).toBe(404);
    expect(refused.json).toEqual(apiError('NOT_FOUND', `you have no token with the id "${bobs.info.id}".`));
    expect((await api(server.port, 'GET', '/api/entries', { token: bobs.token })).status).toBe(200);
  });

  it('refuses a token creating a token (403 SIGN_IN_REQUIRED), and a read-only token revoking one', async () => {
    const server = await tokenServer();
    const writer = await server.access.create({ user: 'alice', label: 'script' });
    const reader = await server.access.create({ user: 'alice', label: 'reader', readOnly: true });
    const minted = await api(server.port, 'POST', '/api/tokens', { body: {}, token: writer.token });
    expect(minted.status).toBe(403);
    expect(minted.json).toEqual(apiError('SIGN_IN_REQUIRED', /^A token cannot create tokens/));
    const revoke = await api(server.port, 'DELETE', `/api/tokens/${writer.info.id}`, { token: reader.token });
    expect(revoke.status).toBe(403);
    expect(revoke.json.error.code).toBe('READ_ONLY_TOKEN');
    const listed = await api(server.port, 'GET', '/api/tokens', { token: reader.token });
    // Two tokens made in the same millisecond list in either order (by creation time, then id).
    expect(listed.json.tokens.map((item: { label: string }) => item.label).sort()).toEqual(['reader', 'script']);
  });

  it('refuses a change by cookie without the page Origin and CSRF header, creating nothing', async () => {
    const server = await tokenServer();
    const alice = await signInAs(server.port, 'alice');
    const refused = await api(server.port, 'POST', '/api/tokens', {
      body: {},
      headers: { Cookie: alice.headers.Cookie ?? '' },
    });
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe('FORBIDDEN_ORIGIN');
    expect(await server.access.listOf('alice')).toEqual([]);
  });

  it('checks the body: read-only tokens by request, unknown fields and bad labels refused', async () => {
    const server = await tokenServer();
    const alice = await signInAs(server.port, 'alice');
    const reader = await api(server.port, 'POST', '/api/tokens', { body: { readOnly: true }, headers: alice.headers });
    expect(reader.json.token).toMatchObject({ readOnly: true, label: `token ${reader.json.token.id}` });
    for (const body of [{ user: 'bob' }, { label: 3 }, { readOnly: 'yes' }, [], { label: '' }]) {
      const refused = await api(server.port, 'POST', '/api/tokens', { body, headers: alice.headers });
      expect(refused.status).toBe(400);
      expect(refused.json.error.code).toBe('INVALID_ARGUMENT');
    }
    expect(await server.access.listOf('alice')).toHaveLength(1);
    expect(await server.access.listOf('bob')).toEqual([]);
  });

  it('says there are no tokens with --auth none', async () => {
    const server = await startTestServer();
    const response = await api(server.port, 'GET', '/api/tokens');
    expect(response.status).toBe(400);
    expect(response.json).toEqual(apiError('INVALID_ARGUMENT', /without authentication \(--auth none\)/));
  });
});

describe('/api/apps', () => {
  it("lists the user's own connected apps and revokes one; another user's is unknown to them and stays", async () => {
    const server = await startOAuthServer();
    // The in-process OAuth server signs no browser in to /api: ada calls with a token of hers.
    const { token } = await server.access.create({ user: 'ada' });
    const ada = { token };
    const mine = await authorizeDirectly(server, { user: 'ada', readOnly: true });
    const theirs = await authorizeDirectly(server, { user: 'bob' });
    const listed = await api(server.port, 'GET', '/api/apps', ada);
    expect(listed.json).toEqual({
      apps: [
        {
          id: mine.grantId,
          name: 'Claude',
          clientId: 'client-claude',
          scopes: ['memory:read'],
          created: expect.any(String),
          lastUsed: null,
        },
      ],
    });
    const refused = await api(server.port, 'DELETE', `/api/apps/${theirs.grantId}`, ada);
    expect(refused.status).toBe(404);
    expect((await server.tokens.listAppsOf('bob')).map((app) => app.id)).toEqual([theirs.grantId]);
    const revoked = await api(server.port, 'DELETE', `/api/apps/${mine.grantId}`, ada);
    expect(revoked.json).toEqual({ revoked: mine.grantId });
    expect((await api(server.port, 'GET', '/api/apps', ada)).json).toEqual({ apps: [] });
  });

  it('lists none with --auth token, where no app connects', async () => {
    const server = await tokenServer();
    const alice = await signInAs(server.port, 'alice');
    expect((await api(server.port, 'GET', '/api/apps', { headers: alice.headers })).json).toEqual({ apps: [] });
    expect((await api(server.port, 'DELETE', '/api/apps/x', { headers: alice.headers })).status).toBe(404);
  });
});
