/**
 * The consent step: a bad client or redirect URI is answered on a page, never redirected;
 * every other refusal goes back to a configured client with its exact OAuth error, `state`
 * and `iss`, and is a page for a registered or metadata-document client (RFC 9700 §4.11.2); nothing is stored for a refusal or a denial; allowing stores one grant with one
 * hashed, short-lived code that remembers the redirect URI and the PKCE challenge, and
 * sends the code, `state` and `iss` back.
 */

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Authorization, type ClientDirectory } from '../../../src/access/oauth/authorization.js';
import { OAuthClients } from '../../../src/access/oauth/clients.js';
import { SECRET_PREFIXES } from '../../../src/access/oauth/secrets.js';
import type { OAuthClient } from '../../../src/access/oauth/types.js';
import { MemoryOAuthStore } from '../../../src/storage/memory/oauth.js';
import { expectEngramError } from '../../memory/fixtures.js';

/** The grants' users' accounts are not what these tests are about: everyone has one. */
const anyoneHasAnAccount = () => true;

const ISSUER = 'https://memory.example.com';
const RESOURCE = 'https://memory.example.com/mcp';
const CHALLENGE = createHash('sha256').update('a verifier of enough length, 43 characters or more').digest('base64url');

const CLAUDE: OAuthClient = {
  id: 'client-claude',
  kind: 'configured',
  name: 'Claude',
  redirectUris: ['https://claude.ai/api/mcp/auth_callback', 'http://127.0.0.1/callback'],
};

function setup(hasAccount: (user: string) => boolean = anyoneHasAnAccount) {
  const grants = new MemoryOAuthStore(hasAccount);
  const authorization = new Authorization(grants, new OAuthClients(grants, { configured: [CLAUDE] }), {
    now: () => 1_000_000,
    issuer: ISSUER,
    resource: RESOURCE,
    codeTtlMs: 60_000,
  });
  return { grants, authorization };
}

const GOOD = {
  client_id: CLAUDE.id,
  redirect_uri: 'https://claude.ai/api/mcp/auth_callback',
  response_type: 'code',
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
  scope: 'memory:read memory:write',
  state: 'xyz 123',
  resource: RESOURCE,
};

/** The query of a redirect URL, as a plain object. */
function query(url: string): Record<string, string> {
  return Object.fromEntries(new URL(url).searchParams);
}

describe('check: a bad client or redirect URI is answered on a page, never redirected', () => {
  it.each([
    ['no client_id', { client_id: undefined }, 'the request has no client_id'],
    ['several client_id', { client_id: [CLAUDE.id, CLAUDE.id] }, 'several client_id parameters'],
    ['an unknown client', { client_id: 'someone-else' }, 'Engram does not know this app: '],
    ['no redirect_uri', { redirect_uri: undefined }, 'Claude did not say where to return'],
    ['several redirect_uri', { redirect_uri: [GOOD.redirect_uri, GOOD.redirect_uri] }, 'more than one address'],
    ['an unregistered redirect_uri', { redirect_uri: 'https://evil.example/cb' }, 'an address it did not register'],
    ['a redirect_uri with a fragment', { redirect_uri: `${GOOD.redirect_uri}#x` }, 'an address it did not register'],
    ['a relative redirect_uri', { redirect_uri: '/api/mcp/auth_callback' }, 'an address it did not register'],
    ['a loopback redirect_uri on another path', { redirect_uri: 'http://127.0.0.1:5555/other' }, 'did not register'],
  ])('%s', async (_, change, words) => {
    const { grants, authorization } = setup();
    const result = await authorization.check({ ...GOOD, ...change });
    expect(result.kind).toBe('page');
    expect(result.kind === 'page' && result.message).toContain(words);
    expect(await grants.listGrants()).toEqual([]);
  });

  it('lets a failure of the client service other than invalid_client through', async () => {
    const failing: ClientDirectory = {
      resolve: () => Promise.reject(new Error('database down')),
      matchRedirectUri: () => true,
      markShown: async () => {},
    };
    const authorization = new Authorization(new MemoryOAuthStore(anyoneHasAnAccount), failing, {
      issuer: ISSUER,
      resource: RESOURCE,
    });
    await expect(authorization.check(GOOD)).rejects.toThrow('database down');
  });
});

/** Every refusal that comes after the client and redirect URI are checked: what changes, the OAuth error, words of it. */
const LATER_REFUSALS: [string, Record<string, unknown>, string, string][] = [
  ['no response_type', { response_type: undefined }, 'invalid_request', 'response_type is missing'],
  ['response_type token', { response_type: 'token' }, 'unsupported_response_type', 'authorization codes only'],
  ['no code_challenge', { code_challenge: undefined }, 'invalid_request', 'PKCE is required'],
  ['no code_challenge_method', { code_challenge_method: undefined }, 'invalid_request', 'accepts only S256'],
  ['plain PKCE', { code_challenge_method: 'plain' }, 'invalid_request', '"plain" is refused'],
  ['lower-case s256', { code_challenge_method: 's256' }, 'invalid_request', 'accepts only S256'],
  ['a challenge that is no S256 digest', { code_challenge: 'short' }, 'invalid_request', '43 characters'],
  ['an unknown scope', { scope: 'memory:read memory:admin' }, 'invalid_scope', '"memory:admin" is unknown'],
  [
    'another resource',
    { resource: 'https://other.example/mcp' },
    'invalid_target',
    'for https://memory.example.com/mcp only',
  ],
  ['a resource with a fragment', { resource: `${RESOURCE}#x` }, 'invalid_target', 'is not served here'],
  [
    'one foreign resource among several',
    { resource: [RESOURCE, 'https://x.example/'] },
    'invalid_target',
    'not served',
  ],
  ['a repeated scope', { scope: ['memory:read', 'memory:write'] }, 'invalid_request', 'scope is sent more than once'],
  ['a repeated code_challenge', { code_challenge: [CHALLENGE, CHALLENGE] }, 'invalid_request', 'code_challenge is'],
];

describe('check: other refusals go back to a configured client with their OAuth error, state and iss', () => {
  it.each(LATER_REFUSALS)('%s', async (_, change, error, words) => {
    const { grants, authorization } = setup();
    const result = await authorization.check({ ...GOOD, ...change });
    expect(result.kind).toBe('redirect');
    const url = result.kind === 'redirect' ? result.url : '';
    expect(url.startsWith(`${GOOD.redirect_uri}?`)).toBe(true);
    expect(query(url)).toEqual({
      error,
      error_description: expect.stringContaining(words),
      state: 'xyz 123',
      iss: ISSUER,
    });
    expect(await grants.listGrants()).toEqual([]);
  });

  it('sends no state back when none was sent, and keeps the query the redirect URI had', async () => {
    const client = { ...CLAUDE, redirectUris: ['https://app.example/cb?tenant=a%20b'] };
    const grants = new MemoryOAuthStore(anyoneHasAnAccount);
    const authorization = new Authorization(grants, new OAuthClients(grants, { configured: [client] }), {
      issuer: ISSUER,
      resource: RESOURCE,
    });
    const result = await authorization.check({
      ...GOOD,
      redirect_uri: 'https://app.example/cb?tenant=a%20b',
      state: undefined,
      response_type: 'token',
    });
    expect(result.kind === 'redirect' && result.url).toMatch(/^https:\/\/app\.example\/cb\?tenant=a%20b&error=/);
    expect(query(result.kind === 'redirect' ? result.url : '')).toEqual({
      tenant: 'a b',
      error: 'unsupported_response_type',
      error_description: expect.any(String),
      iss: ISSUER,
    });
  });
});

describe('check: a registered or metadata-document client is never sent a refusal (RFC 9700 §4.11.2)', () => {
  /** A client anyone could have registered, returning to a site of its own. */
  async function registered() {
    const grants = new MemoryOAuthStore(anyoneHasAnAccount);
    const clients = new OAuthClients(grants, {
      fetchDocument: async () => ({
        client_id: 'https://phish.example/client.json',
        client_name: 'Phisher',
        redirect_uris: ['https://phish.example/landing'],
      }),
    });
    const { client_id } = await clients.register({
      client_name: 'Phisher',
      redirect_uris: ['https://phish.example/landing'],
    });
    const authorization = new Authorization(grants, clients, { issuer: ISSUER, resource: RESOURCE });
    return { grants, authorization, client_id };
  }

  it.each(LATER_REFUSALS)('%s: a page saying so, no redirect', async (_, change, error, words) => {
    const { grants, authorization, client_id } = await registered();
    const result = await authorization.check({
      ...GOOD,
      client_id,
      redirect_uri: 'https://phish.example/landing',
      ...change,
    });
    expect(result.kind).toBe('page');
    const message = result.kind === 'page' ? result.message : '';
    expect(message).toContain(`Phisher sent a request Engram cannot accept (${error}): `);
    expect(message).toContain(words);
    expect(message).toContain('Engram does not send you back to Phisher with this error');
    expect(await grants.listGrants()).toEqual([]);
  });

  it.each([
    ['scope', 'the scope sent is unknown'],
    ['response_type', 'the response_type sent is not supported'],
    ['code_challenge_method', 'the code_challenge_method sent is refused'],
    ['resource', 'the resource sent is not served here'],
  ])(
    'repeats none of a %s that is not a short plain word on its page, so no message can be written there',
    async (parameter, words) => {
      const { authorization, client_id } = await registered();
      // One word (a scope is read word by word), yet a message all the same.
      const message = 'Session-expired:sign-in-again-at-https://evil.example/x';
      const result = await authorization.check({
        ...GOOD,
        client_id,
        redirect_uri: 'https://phish.example/landing',
        [parameter]: message,
      });
      const text = result.kind === 'page' ? result.message : '';
      expect(text).toContain(words);
      for (const piece of ['Session', 'evil', 'https://evil']) expect(text).not.toContain(piece);
    },
  );

  it('names a short plain value on its page: enough to recognise, too little to write with', async () => {
    const { authorization, client_id } = await registered();
    const result = await authorization.check({
      ...GOOD,
      client_id,
      redirect_uri: 'https://phish.example/landing',
      scope: 'memory:admin',
    });
    expect(result.kind === 'page' && result.message).toContain('scope "memory:admin" is unknown');
  });

  it('repeats neither an unknown client_id nor an unregistered redirect_uri on its page', async () => {
    const { authorization, client_id } = await registered();
    const message = 'Session-expired.-Sign-in-again-at-evil.example';
    const unknown = await authorization.check({ ...GOOD, client_id: message });
    expect(unknown.kind === 'page' && unknown.message).toContain(
      'Engram does not know this app: no client has the id (a value not shown here): register first',
    );
    const elsewhere = await authorization.check({
      ...GOOD,
      client_id,
      redirect_uri: `https://evil.example/${message}`,
    });
    expect(elsewhere.kind === 'page' && elsewhere.message).toBe(
      'Phisher asked to return to an address it did not register (its redirect_uri), so Engram will not send you there.',
    );
    for (const result of [unknown, elsewhere]) expect(JSON.stringify(result)).not.toContain('Session');
  });

  it('repeats neither the address of a metadata document nor what the document says on its page', async () => {
    const grants = new MemoryOAuthStore(anyoneHasAnAccount);
    const url = 'https://phish.example/Session-expired-sign-in-again-at-evil.example';
    const clients = new OAuthClients(grants, {
      fetchDocument: async () => ({ client_id: 'Session expired, sign in again at https://evil.example/x' }),
    });
    const authorization = new Authorization(grants, clients, { issuer: ISSUER, resource: RESOURCE });
    const result = await authorization.check({ ...GOOD, client_id: url });
    expect(result).toEqual({
      kind: 'page',
      message:
        'Engram does not know this app: the client metadata document at the address its client_id names cannot ' +
        'be used: its client_id (a value not shown here) must be exactly the URL it is served from.',
    });
  });

  it('keeps the words Engram quotes itself in a refusal of the document', async () => {
    const grants = new MemoryOAuthStore(anyoneHasAnAccount);
    const url = 'https://app.example/client.json';
    const clients = new OAuthClients(grants, {
      fetchDocument: async () => ({
        client_id: url,
        redirect_uris: ['https://app.example/cb'],
        token_endpoint_auth_method: 'private_key_jwt_and_then_some_words',
      }),
    });
    const authorization = new Authorization(grants, clients, { issuer: ISSUER, resource: RESOURCE });
    const result = await authorization.check({ ...GOOD, client_id: url });
    expect(result.kind === 'page' && result.message).toContain(
      'token_endpoint_auth_method (a value not shown here) is not supported: this server has public clients only ' +
        '(PKCE, no client secret), so register with "token_endpoint_auth_method": "none".',
    );
  });

  it('a metadata-document client: a page too', async () => {
    const { authorization } = await registered();
    const result = await authorization.check({
      ...GOOD,
      client_id: 'https://phish.example/client.json',
      redirect_uri: 'https://phish.example/landing',
      scope: 'admin',
    });
    expect(result).toEqual({ kind: 'page', message: expect.stringContaining('(invalid_scope)') });
  });

  it('a good request of a registered client is ready for the decision', async () => {
    const { authorization, client_id } = await registered();
    const result = await authorization.check({ ...GOOD, client_id, redirect_uri: 'https://phish.example/landing' });
    expect(result.kind).toBe('ok');
  });
});

describe('check: a good request', () => {
  it('is ready for the decision, with the client, redirect URI, state, challenge, scopes and resource', async () => {
    const { authorization } = setup();
    expect(await authorization.check(GOOD)).toEqual({
      kind: 'ok',
      request: {
        client: CLAUDE,
        redirectUri: GOOD.redirect_uri,
        state: 'xyz 123',
        codeChallenge: CHALLENGE,
        scopes: ['memory:read', 'memory:write'],
        resource: RESOURCE,
      },
    });
  });

  it.each([
    ['no scope: every scope', undefined, ['memory:read', 'memory:write']],
    ['an empty scope: every scope', '', ['memory:read', 'memory:write']],
    ['read only', 'memory:read', ['memory:read']],
    [
      'repeated and reordered, in canonical order',
      'memory:write  memory:read memory:write',
      ['memory:read', 'memory:write'],
    ],
  ])('scope: %s', async (_, scope, scopes) => {
    const { authorization } = setup();
    const result = await authorization.check({ ...GOOD, scope });
    expect(result.kind === 'ok' && result.request.scopes).toEqual(scopes);
  });

  it.each([
    ['no resource', undefined],
    ['the resource with a trailing slash', `${RESOURCE}/`],
    ['the resource with the host in capitals and the default port', 'https://MEMORY.example.com:443/mcp'],
    ['the resource twice', [RESOURCE, RESOURCE]],
  ])('resource: %s is this server', async (_, resource) => {
    const { authorization } = setup();
    const result = await authorization.check({ ...GOOD, resource });
    expect(result.kind === 'ok' && result.request.resource).toBe(RESOURCE);
  });

  it('accepts a loopback redirect URI on any port (RFC 8252 §7.3), as the client service matches it', async () => {
    const { authorization } = setup();
    const result = await authorization.check({ ...GOOD, redirect_uri: 'http://127.0.0.1:49152/callback' });
    expect(result.kind === 'ok' && result.request.redirectUri).toBe('http://127.0.0.1:49152/callback');
  });

  it('ignores parameters it does not know (RFC 6749 §3.1)', async () => {
    const { authorization } = setup();
    expect((await authorization.check({ ...GOOD, prompt: 'consent', extra: ['a', 'b'] })).kind).toBe('ok');
  });
});

async function checked(authorization: Authorization, change: Record<string, string | undefined> = {}) {
  const result = await authorization.check({ ...GOOD, ...change });
  if (result.kind !== 'ok') throw new Error(`expected a good request, got ${JSON.stringify(result)}`);
  return result.request;
}

describe('approve', () => {
  it('stores the grant and its hashed code, and sends the code, state and iss back', async () => {
    const { grants, authorization } = setup();
    const url = await authorization.approve(await checked(authorization), 'alice', 'write');
    expect(url.startsWith(`${GOOD.redirect_uri}?`)).toBe(true);
    const answer = query(url);
    expect(answer).toEqual({
      code: expect.stringMatching(/^engram_code_[A-Za-z0-9_-]{43}$/),
      state: 'xyz 123',
      iss: ISSUER,
    });
    expect(answer.code?.startsWith(SECRET_PREFIXES.code)).toBe(true);

    const [grant, ...others] = await grants.listGrants();
    expect(others).toEqual([]);
    expect(grant).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{12}$/),
      user: 'alice',
      clientId: CLAUDE.id,
      clientName: 'Claude',
      readOnly: false,
      resource: RESOURCE,
      created: 1_000_000,
      lastUsed: undefined,
      review: false,
    });
    const hash = createHash('sha256')
      .update(answer.code ?? '')
      .digest('hex');
    expect(await grants.findSecret(hash)).toEqual({
      hash,
      grantId: grant?.id,
      kind: 'code',
      created: 1_000_000,
      expires: 1_060_000,
      used: undefined,
      data: JSON.stringify({ redirectUri: GOOD.redirect_uri, codeChallenge: CHALLENGE }),
    });
    expect(JSON.stringify(grants.snapshot())).not.toContain(answer.code);
  });

  it('issues a new grant and code each time', async () => {
    const { grants, authorization } = setup();
    const request = await checked(authorization);
    const first = query(await authorization.approve(request, 'alice', 'write'));
    const second = query(await authorization.approve(request, 'alice', 'write'));
    expect(first.code).not.toBe(second.code);
    expect(new Set((await grants.listGrants()).map((grant) => grant.id)).size).toBe(2);
  });

  it('is read-only when the user narrowed it, or when the app asked to read only', async () => {
    const { grants, authorization } = setup();
    await authorization.approve(await checked(authorization), 'alice', 'read');
    await authorization.approve(await checked(authorization, { scope: 'memory:read' }), 'bob', 'write');
    await authorization.approve(await checked(authorization, { scope: 'memory:write' }), 'carol', 'write');
    const readOnly = Object.fromEntries((await grants.listGrants()).map((grant) => [grant.user, grant.readOnly]));
    expect(readOnly).toEqual({ alice: true, bob: true, carol: false });
  });

  it('returns to a loopback redirect URI on the port the client asked, without state when none was sent', async () => {
    const { grants, authorization } = setup();
    const request = await checked(authorization, { redirect_uri: 'http://127.0.0.1:49152/callback', state: undefined });
    const url = await authorization.approve(request, 'alice', 'write');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:49152\/callback\?code=engram_code_[A-Za-z0-9_-]{43}&iss=/);
    const [secret] = grants.snapshot().grantSecrets;
    expect(JSON.parse(secret?.data ?? '{}').redirectUri).toBe('http://127.0.0.1:49152/callback');
  });

  it('records nothing, UNAUTHORIZED, for a user removed since they signed in', async () => {
    const withAccounts = new Set(['alice']);
    const { grants, authorization } = setup((user) => withAccounts.has(user));
    const request = await checked(authorization);
    withAccounts.delete('alice');
    await expectEngramError(
      () => authorization.approve(request, 'alice', 'write'),
      'UNAUTHORIZED',
      'user alice has no account, so nothing was allowed.',
    );
    expect(grants.snapshot()).toEqual({ clients: [], grants: [], grantSecrets: [] });
  });
});

describe('deny', () => {
  it('sends access_denied with state and iss back, and stores nothing', async () => {
    const { grants, authorization } = setup();
    const url = authorization.deny(await checked(authorization));
    expect(url.startsWith(`${GOOD.redirect_uri}?`)).toBe(true);
    expect(query(url)).toEqual({
      error: 'access_denied',
      error_description: 'The user denied the request.',
      state: 'xyz 123',
      iss: ISSUER,
    });
    expect(grants.snapshot()).toEqual({ clients: [], grants: [], grantSecrets: [] });
  });
});
