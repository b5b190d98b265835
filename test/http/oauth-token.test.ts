/**
 * The token endpoint, /mcp with OAuth tokens and /revoke over HTTP: a code (stored as the
 * consent step stores it) is exchanged for tokens that call the tools as the app (its
 * name in history; a read-only grant cannot write); refresh rotates, refreshes racing with
 * one refresh token get one same pair, and a refresh token reused past the grace window
 * revokes the grant (401 from then on); /revoke ends the grant. Every malformed
 * request is refused with RFC 6749 §5.2's JSON and issues nothing.
 */

import { describe, expect, it } from 'vitest';
import { REFRESH_REUSE_GRACE_MS } from '../../src/access/oauth/tokens.js';
import { postRpc, type RawResponse, raw, rpc, rpcMessage } from './fixtures.js';
import {
  authorizeDirectly,
  CLIENT_ID,
  exchangeCode,
  type OAuthTestServer,
  postForm,
  postJson,
  REDIRECT_URI,
  startOAuthServer,
  VERIFIER,
} from './oauth-fixtures.js';

const call = (name: string, args: Record<string, unknown> = {}) => rpc('tools/call', { name, arguments: args });
const WRITE_ME = call('memory_write', { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' });

function toolResult(response: RawResponse): { text: string; isError: boolean } {
  const result = rpcMessage(response).result as { content: { text: string }[]; isError: boolean };
  return { text: result.content.map((block) => block.text).join(''), isError: result.isError };
}

function oauthError(response: RawResponse) {
  return JSON.parse(response.body) as { error: string; error_description: string };
}

/** How many access and refresh tokens the store holds. */
function issued(server: OAuthTestServer): number {
  return server.store.oauth.snapshot().grantSecrets.filter((secret) => secret.kind !== 'code').length;
}

async function connect(server: OAuthTestServer, options: { readOnly?: boolean } = {}) {
  const { grantId, code } = await authorizeDirectly(server, options);
  const response = await exchangeCode(server.port, code);
  expect(response.status).toBe(200);
  return { grantId, tokens: JSON.parse(response.body) as { access_token: string; refresh_token: string } };
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('the code flow', () => {
  it('exchanges a code for tokens that call the tools as the app', async () => {
    const server = await startOAuthServer();
    const { code } = await authorizeDirectly(server);
    const response = await exchangeCode(server.port, code, { resource: `${server.origin}/mcp` });
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers.pragma).toBe('no-cache');
    const tokens = JSON.parse(response.body);
    expect(tokens).toEqual({
      access_token: expect.stringMatching(/^engram_at_/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^engram_rt_/),
      scope: 'memory:read memory:write',
    });
    expect(toolResult(await postRpc(server.port, WRITE_ME, bearer(tokens.access_token))).isError).toBe(false);
    const history = await server.memory.recovery.history({ user: 'ada', label: 'test' }, 'topics/me');
    expect(history.at(-1)?.actor).toBe('Claude');
    expect(toolResult(await postRpc(server.port, call('memory_open'), bearer(tokens.access_token)))).toEqual({
      text: 'topics/me (11 bytes): Who I am',
      isError: false,
    });
  });

  it('a read-only grant reads but cannot write', async () => {
    const server = await startOAuthServer();
    const { tokens } = await connect(server, { readOnly: true });
    const result = toolResult(await postRpc(server.port, WRITE_ME, bearer(tokens.access_token)));
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/read-only/);
    expect(result.text).toContain('ask them to connect the app again');
    expect(result.text).toContain('choose "Read and change my memory"');
    expect(result.text).not.toContain('read-write token');
    expect(await server.memory.index({ user: 'ada', label: 'test' })).toEqual([]);
    expect(toolResult(await postRpc(server.port, call('memory_open'), bearer(tokens.access_token))).isError).toBe(
      false,
    );
  });

  it('a token the app narrowed to memory:read, though its grant may write, is told to authorize again, not "Read only"', async () => {
    const server = await startOAuthServer();
    const { tokens } = await connect(server);
    const refreshed = await postForm(server.port, '/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: CLIENT_ID,
      scope: 'memory:read',
    });
    expect(refreshed.status).toBe(200);
    const narrowed = JSON.parse(refreshed.body) as { access_token: string; scope: string };
    expect(narrowed.scope).toBe('memory:read');
    const result = toolResult(await postRpc(server.port, WRITE_ME, bearer(narrowed.access_token)));
    expect(result.isError).toBe(true);
    expect(result.text).toContain('the app narrowed its own token to the scope memory:read');
    expect(result.text).toContain('the app must authorize again');
    expect(result.text).not.toContain('connected this app to Engram with "Read only"');
    expect(await server.memory.index({ user: 'ada', label: 'test' })).toEqual([]);
  });

  it('an OAuth token does not open the REST API (it is bound to /mcp)', async () => {
    const server = await startOAuthServer();
    const { tokens } = await connect(server);
    expect((await raw(server.port, { path: '/api/entries', headers: bearer(tokens.access_token) })).status).toBe(401);
  });

  it('refresh rotates; the old refresh token used again past the grace window revokes the grant, and its tokens get 401', async () => {
    let clock = Date.now();
    const server = await startOAuthServer({ now: () => clock });
    const { grantId, tokens } = await connect(server);
    const refresh = (token: string) =>
      postForm(server.port, '/token', { grant_type: 'refresh_token', refresh_token: token, client_id: CLIENT_ID });
    const rotated = await refresh(tokens.refresh_token);
    expect(rotated.status).toBe(200);
    const second = JSON.parse(rotated.body);
    expect(second.refresh_token).not.toBe(tokens.refresh_token);
    expect((await postRpc(server.port, WRITE_ME, bearer(second.access_token))).status).toBe(200);

    clock += REFRESH_REUSE_GRACE_MS;
    const reused = await refresh(tokens.refresh_token);
    expect(reused.status).toBe(400);
    expect(oauthError(reused)).toEqual({
      error: 'invalid_grant',
      error_description:
        'the refresh token was used before, so it may have been stolen: the grant and every token it holds are ' +
        'revoked. Authorize again.',
    });
    expect(await server.store.oauth.findGrant(grantId)).toBeUndefined();
    expect(issued(server)).toBe(0);
    const after = await postRpc(server.port, call('memory_open'), bearer(second.access_token));
    expect(after.status).toBe(401);
    expect(after.headers['www-authenticate']).toMatch(/error="invalid_token"$/);
  });

  it('refreshes racing with one refresh token (a retry, two tabs) all get one same pair, and the grant stays', async () => {
    const server = await startOAuthServer();
    const { grantId, tokens } = await connect(server);
    const refresh = () =>
      postForm(server.port, '/token', {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: CLIENT_ID,
      });

    const answers = await Promise.all([refresh(), refresh(), refresh()]);

    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    const pairs = answers.map((answer) => JSON.parse(answer.body) as { access_token: string; refresh_token: string });
    expect(new Set(pairs.map((pair) => `${pair.access_token} ${pair.refresh_token}`)).size).toBe(1);
    expect(pairs[0]!.refresh_token).not.toBe(tokens.refresh_token);
    expect(await server.store.oauth.findGrant(grantId)).toBeDefined();
    expect(issued(server)).toBe(4);
    expect((await postRpc(server.port, WRITE_ME, bearer(pairs[0]!.access_token))).status).toBe(200);
  });

  it('a reused code revokes what it issued', async () => {
    const server = await startOAuthServer();
    const { code } = await authorizeDirectly(server);
    const first = JSON.parse((await exchangeCode(server.port, code)).body);
    const again = await exchangeCode(server.port, code);
    expect(again.status).toBe(400);
    expect(oauthError(again).error).toBe('invalid_grant');
    expect(issued(server)).toBe(0);
    expect((await postRpc(server.port, call('memory_open'), bearer(first.access_token))).status).toBe(401);
  });

  it.each([
    ['too short', 'x'.repeat(42)],
    ['with a character outside RFC 7636', `${VERIFIER}+`],
    ['missing', undefined],
  ])('a code_verifier %s spends the code like a wrong one: the right verifier then fails too', async (_, verifier) => {
    const server = await startOAuthServer();
    const { code, grantId } = await authorizeDirectly(server);
    const more: Record<string, string> = verifier === undefined ? {} : { code_verifier: verifier };
    const malformed = await postForm(server.port, '/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: CLIENT_ID,
      ...more,
    });
    expect(malformed.status).toBe(400);
    expect(oauthError(malformed).error).toBe('invalid_request');
    expect(await server.store.oauth.findGrant(grantId)).toBeUndefined();
    const retry = await exchangeCode(server.port, code);
    expect(retry.status).toBe(400);
    expect(oauthError(retry)).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringMatching(/not known/),
    });
    expect(issued(server)).toBe(0);
  });

  it('/revoke ends the grant: its access token gets 401', async () => {
    const server = await startOAuthServer();
    const { tokens } = await connect(server);
    const response = await postForm(server.port, '/revoke', { token: tokens.refresh_token, client_id: CLIENT_ID });
    expect(response.status).toBe(200);
    expect(response.body).toBe('');
    expect((await postRpc(server.port, call('memory_open'), bearer(tokens.access_token))).status).toBe(401);
    expect(issued(server)).toBe(0);
  });

  it('/revoke answers 200 for an unknown token, 400 without one', async () => {
    const server = await startOAuthServer();
    const { tokens } = await connect(server);
    expect((await postForm(server.port, '/revoke', { token: 'engram_at_unknown' })).status).toBe(200);
    const missing = await postForm(server.port, '/revoke', {});
    expect(missing.status).toBe(400);
    expect(oauthError(missing)).toEqual({
      error: 'invalid_request',
      error_description: 'token is missing: send the token to revoke.',
    });
    expect((await postRpc(server.port, call('memory_open'), bearer(tokens.access_token))).status).toBe(200);
  });
});

describe('the token endpoint refuses, issuing nothing', () => {
  it.each([
    ['a wrong verifier', { code_verifier: 'x'.repeat(43) }, 'invalid_grant', /code_verifier does not match/],
    ['a malformed verifier', { code_verifier: 'short' }, 'invalid_request', /code_verifier must be 43-128/],
    ['another redirect URI', { redirect_uri: `${REDIRECT_URI}/x` }, 'invalid_grant', /redirect_uri must be exactly/],
    ['another client', { client_id: 'someone-else' }, 'invalid_grant', /another client/],
    ['another resource', { resource: 'https://other.example/mcp' }, 'invalid_target', /not what this grant is for/],
    ['an unknown code', { code: 'engram_code_unknown' }, 'invalid_grant', /not known here/],
  ])('a code exchange with %s', async (_, more, error, description) => {
    const server = await startOAuthServer();
    const { code } = await authorizeDirectly(server);
    const response = await exchangeCode(server.port, code, more);
    expect(response.status).toBe(400);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(oauthError(response).error).toBe(error);
    expect(oauthError(response).error_description).toMatch(description);
    expect(issued(server)).toBe(0);
  });

  it('an expired code, ending its grant', async () => {
    const server = await startOAuthServer();
    // A code that expired the moment it was issued: no clock needs to move.
    const { grantId, code } = await authorizeDirectly(server, { codeTtlMs: 0 });
    const response = await exchangeCode(server.port, code);
    expect(response.status).toBe(400);
    expect(oauthError(response)).toEqual({
      error: 'invalid_grant',
      error_description: 'the authorization code has expired. Authorize again.',
    });
    expect(issued(server)).toBe(0);
    expect(await server.store.oauth.findGrant(grantId)).toBeUndefined();
  });

  it.each([
    ['no grant_type', {}, 'invalid_request', 'grant_type is missing: authorization_code or refresh_token.'],
    [
      'the password grant',
      { grant_type: 'password', username: 'ada', password: 'x' },
      'unsupported_grant_type',
      'grant_type "password" is not supported here: use authorization_code or refresh_token.',
    ],
    [
      'client credentials',
      { grant_type: 'client_credentials' },
      'unsupported_grant_type',
      'grant_type "client_credentials" is not supported here: use authorization_code or refresh_token.',
    ],
    [
      'a code exchange without anything',
      { grant_type: 'authorization_code' },
      'invalid_request',
      'authorization_code needs code, which the request lacks.',
    ],
    [
      'a code exchange without a verifier (PKCE)',
      { grant_type: 'authorization_code', code: 'c', redirect_uri: REDIRECT_URI, client_id: CLIENT_ID },
      'invalid_request',
      'authorization_code needs code_verifier, which the request lacks.',
    ],
    [
      'a code exchange without client_id',
      { grant_type: 'authorization_code', code: 'c', redirect_uri: REDIRECT_URI, code_verifier: VERIFIER },
      'invalid_request',
      'authorization_code needs client_id, which the request lacks.',
    ],
    [
      'a refresh without a refresh token',
      { grant_type: 'refresh_token', client_id: CLIENT_ID },
      'invalid_request',
      'refresh_token needs refresh_token, which the request lacks.',
    ],
  ])('%s', async (_, params, error, description) => {
    const server = await startOAuthServer();
    await authorizeDirectly(server);
    const response = await postForm(server.port, '/token', params);
    expect(response.status).toBe(400);
    expect(oauthError(response)).toEqual({ error, error_description: description });
    expect(issued(server)).toBe(0);
  });

  it('a parameter sent twice', async () => {
    const server = await startOAuthServer();
    const { code } = await authorizeDirectly(server);
    const response = await raw(server.port, {
      method: 'POST',
      path: '/token',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `grant_type=authorization_code&code=${code}&code=${code}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&client_id=${CLIENT_ID}&code_verifier=${VERIFIER}`,
    });
    expect(response.status).toBe(400);
    expect(oauthError(response)).toEqual({
      error: 'invalid_request',
      error_description: 'the parameter code is sent more than once; send it once.',
    });
    expect(issued(server)).toBe(0);
    expect((await exchangeCode(server.port, code)).status).toBe(200);
  });

  it('JSON instead of a form', async () => {
    const server = await startOAuthServer();
    const { code } = await authorizeDirectly(server);
    const response = await postJson(server.port, '/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: CLIENT_ID,
      code_verifier: VERIFIER,
    });
    expect(response.status).toBe(400);
    expect(oauthError(response)).toEqual({
      error: 'invalid_request',
      error_description:
        'send the parameters as application/x-www-form-urlencoded (RFC 6749 §3.2), not "application/json".',
    });
    expect(issued(server)).toBe(0);
  });

  it('GET, with 405', async () => {
    const server = await startOAuthServer();
    const response = await raw(server.port, { path: '/token?grant_type=authorization_code' });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('POST, OPTIONS');
    expect(issued(server)).toBe(0);
  });

  it('a body over 32 KiB, with 413', async () => {
    const server = await startOAuthServer();
    const response = await postForm(server.port, '/token', { grant_type: 'refresh_token', pad: 'x'.repeat(33 * 1024) });
    expect(response.status).toBe(413);
    expect(oauthError(response).error).toBe('invalid_request');
  });
});
