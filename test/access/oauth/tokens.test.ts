/**
 * The token service: a code is exchanged once, by its client, with its redirect URI and
 * PKCE verifier, for tokens kept only as hashes; a refresh rotates and may only narrow;
 * a second use of a code or refresh token revokes the whole grant, except the refresh token
 * just rotated, presented again by its client within the grace window, which gets the same
 * pair; access tokens expire,
 * are bound to their resource and stop working when their grant is revoked. Every
 * refusal has its OAuth error code, and issues nothing.
 */

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashSecret, newSecret } from '../../../src/access/oauth/secrets.js';
import { OAuthTokens, REFRESH_REUSE_GRACE_MS } from '../../../src/access/oauth/tokens.js';
import { type CodeData, OAuthError, type OAuthErrorCode } from '../../../src/access/oauth/types.js';
import type { GrantRecord } from '../../../src/access/port.js';
import { MemoryOAuthStore } from '../../../src/storage/memory/oauth.js';

/** The grants' users' accounts are not what these tests are about: everyone has one. */
const anyoneHasAnAccount = () => true;

const RESOURCE = 'https://memory.example.com/mcp';
const REDIRECT = 'https://claude.ai/api/mcp/auth_callback';
const VERIFIER = 'a-verifier.of_enough~length-43-characters-or-more';
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
const START = 1_700_000_000_000;

function setup() {
  let clock = START;
  const grants = new MemoryOAuthStore(anyoneHasAnAccount);
  const touchErrors: unknown[] = [];
  const tokens = new OAuthTokens(grants, { now: () => clock, onTouchError: (error) => touchErrors.push(error) });
  let next = 0;

  /** What the consent step stores when a user allows: a grant and its code. */
  async function authorize(options: { readOnly?: boolean; user?: string } = {}) {
    const grant: GrantRecord = {
      id: `grant${++next}`,
      user: options.user ?? 'ada',
      clientId: 'client-claude',
      clientName: 'Claude',
      readOnly: options.readOnly ?? false,
      resource: RESOURCE,
      created: clock,
      lastUsed: undefined,
      review: false,
    };
    const code = newSecret('code');
    const data: CodeData = { redirectUri: REDIRECT, codeChallenge: CHALLENGE };
    await grants.saveGrant(grant, {
      hash: hashSecret(code),
      grantId: grant.id,
      kind: 'code',
      created: clock,
      expires: clock + 60_000,
      used: undefined,
      data: JSON.stringify(data),
    });
    return { grantId: grant.id, code };
  }

  const exchange = (code: string, overrides: Partial<Parameters<OAuthTokens['exchangeCode']>[0]> = {}) =>
    tokens.exchangeCode({
      code,
      codeVerifier: VERIFIER,
      redirectUri: REDIRECT,
      clientId: 'client-claude',
      ...overrides,
    });

  /** How many access and refresh tokens the store holds. */
  const issued = () => grants.snapshot().grantSecrets.filter((secret) => secret.kind !== 'code').length;

  return {
    grants,
    tokens,
    touchErrors,
    authorize,
    exchange,
    issued,
    advance: (ms: number) => (clock += ms),
    now: () => clock,
  };
}

async function refusal(promise: Promise<unknown>, code: OAuthErrorCode, description: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OAuthError);
  expect((error as OAuthError).error).toBe(code);
  expect((error as OAuthError).description).toMatch(description);
}

/** Lets background touches finish. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('exchangeCode', () => {
  it('issues an access and a refresh token, kept only as their SHA-256', async () => {
    const { grants, tokens, authorize, exchange } = setup();
    const { grantId, code } = await authorize();
    const response = await exchange(code);
    expect(response).toEqual({
      access_token: expect.stringMatching(/^engram_at_[A-Za-z0-9_-]{43}$/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^engram_rt_[A-Za-z0-9_-]{43}$/),
      scope: 'memory:read memory:write',
    });
    const secrets = grants.snapshot().grantSecrets;
    expect(
      secrets
        .map(({ kind, grantId: id, expires }) => ({ kind, id, expires }))
        .sort((a, b) => (a.kind < b.kind ? -1 : 1)),
    ).toEqual([
      { kind: 'access', id: grantId, expires: START + 3_600_000 },
      { kind: 'code', id: grantId, expires: START + 60_000 },
      { kind: 'refresh', id: grantId, expires: START + 30 * 24 * 3_600_000 },
    ]);
    expect(JSON.stringify(secrets)).not.toContain(response.access_token);
    expect(JSON.stringify(secrets)).not.toContain(response.refresh_token);
    expect(await tokens.authenticate(response.access_token, RESOURCE)).toEqual({
      user: 'ada',
      label: 'Claude',
      readOnly: false,
      oauthApp: true,
      readOnlyGrant: false,
      review: false,
    });
  });

  it('issues read-only tokens for a read-only grant', async () => {
    const { tokens, authorize, exchange } = setup();
    const { code } = await authorize({ readOnly: true });
    const response = await exchange(code);
    expect(response.scope).toBe('memory:read');
    expect(await tokens.authenticate(response.access_token, RESOURCE)).toEqual({
      user: 'ada',
      label: 'Claude',
      readOnly: true,
      oauthApp: true,
      readOnlyGrant: true,
      review: false,
    });
  });

  it('accepts the resource spelled another way', async () => {
    const { authorize, exchange } = setup();
    const { code } = await authorize();
    expect((await exchange(code, { resource: 'https://MEMORY.example.com:443/mcp/' })).token_type).toBe('Bearer');
  });

  describe('refuses, issues nothing and ends the grant (a code is good for one attempt)', () => {
    it.each([
      [
        'a missing verifier',
        { codeVerifier: '' },
        'invalid_request',
        /^authorization_code needs code_verifier, which the request lacks\.$/,
      ],
      [
        'a missing client_id and redirect_uri',
        { clientId: '', redirectUri: '' },
        'invalid_request',
        /needs client_id, redirect_uri, which/,
      ],
      ['a short verifier', { codeVerifier: 'x'.repeat(42) }, 'invalid_request', /code_verifier must be 43-128/],
      ['a long verifier', { codeVerifier: 'x'.repeat(129) }, 'invalid_request', /43-128/],
      ['a verifier with other characters', { codeVerifier: `${'x'.repeat(42)}+` }, 'invalid_request', /43-128/],
      [
        'a resource that is not a URL',
        { resource: 'mcp' },
        'invalid_target',
        /resource "mcp" is not what this grant is for/,
      ],
      [
        'a wrong verifier',
        { codeVerifier: 'another-verifier-that-is-long-enough-to-be-valid' },
        'invalid_grant',
        /code_verifier does not match/,
      ],
      [
        'the challenge as the verifier (plain)',
        { codeVerifier: CHALLENGE },
        'invalid_grant',
        /code_verifier does not match/,
      ],
      [
        'another redirect URI',
        { redirectUri: 'https://claude.ai/api/mcp/auth_callback/' },
        'invalid_grant',
        /redirect_uri must be exactly/,
      ],
      ['another client', { clientId: 'client-evil' }, 'invalid_grant', /issued to another client than "client-evil"/],
      [
        'another resource',
        { resource: 'https://other.example.com/mcp' },
        'invalid_target',
        /not what this grant is for: https:\/\/memory.example.com\/mcp/,
      ],
    ] as const)('%s', async (_, overrides, code, description) => {
      const { grants, authorize, exchange, issued } = setup();
      const authorized = await authorize();
      await refusal(exchange(authorized.code, overrides), code, description);
      expect(issued()).toBe(0);
      expect(await grants.findGrant(authorized.grantId)).toBeUndefined();
      await refusal(exchange(authorized.code), 'invalid_grant', /not known here/);
    });
  });

  it('refuses an unknown code with a malformed request as malformed, and a well-formed one as not known', async () => {
    const { authorize, exchange, issued } = setup();
    await authorize();
    await refusal(exchange(newSecret('code'), { codeVerifier: 'short' }), 'invalid_request', /43-128/);
    await refusal(exchange(newSecret('code'), { redirectUri: '' }), 'invalid_request', /needs redirect_uri/);
    expect(issued()).toBe(0);
  });

  it('refuses an unknown code', async () => {
    const { authorize, exchange, issued } = setup();
    await authorize();
    await refusal(exchange(newSecret('code')), 'invalid_grant', /authorization code is not known here/);
    expect(issued()).toBe(0);
  });

  it('refuses a refresh or access token given as a code', async () => {
    const { authorize, exchange, issued } = setup();
    const response = await exchange((await authorize()).code);
    await refusal(exchange(response.refresh_token), 'invalid_grant', /not known here/);
    await refusal(exchange(response.access_token), 'invalid_grant', /not known here/);
    expect(issued()).toBe(2);
  });

  it('refuses an expired code and ends its grant', async () => {
    const { grants, authorize, exchange, issued, advance } = setup();
    const { grantId, code } = await authorize();
    advance(60_000);
    await refusal(exchange(code), 'invalid_grant', /has expired/);
    expect(issued()).toBe(0);
    expect(await grants.findGrant(grantId)).toBeUndefined();
  });

  it('accepts a code a moment before it expires', async () => {
    const { authorize, exchange, advance } = setup();
    const { code } = await authorize();
    advance(59_999);
    expect((await exchange(code)).token_type).toBe('Bearer');
  });

  it('revokes everything a reused code issued', async () => {
    const { grants, tokens, authorize, exchange, issued } = setup();
    const other = await authorize({ user: 'bob' });
    const { grantId, code } = await authorize();
    const first = await exchange(code);
    await refusal(
      exchange(code),
      'invalid_grant',
      /used before, so it may have been stolen: every token it issued is revoked/,
    );
    expect(await grants.findGrant(grantId)).toBeUndefined();
    expect(await tokens.authenticate(first.access_token, RESOURCE)).toBeUndefined();
    await refusal(
      tokens.refresh({ refreshToken: first.refresh_token, clientId: 'client-claude' }),
      'invalid_grant',
      /not known/,
    );
    expect(issued()).toBe(0);
    expect(await grants.findGrant(other.grantId)).toBeDefined();
  });

  it('revokes the grant when two exchanges race: whatever the first got is revoked too', async () => {
    const { grants, authorize, exchange, issued } = setup();
    const { grantId, code } = await authorize();
    const outcomes = await Promise.allSettled([exchange(code), exchange(code)]);
    const reasons = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : []));
    expect(reasons.some((reason) => /used before/.test(reason))).toBe(true);
    expect(await grants.findGrant(grantId)).toBeUndefined();
    expect(issued()).toBe(0);
  });

  it('refuses the code of a revoked grant', async () => {
    const { tokens, authorize, exchange, issued } = setup();
    const { grantId, code } = await authorize();
    expect(await tokens.revokeApp(grantId)).toBe(true);
    await refusal(exchange(code), 'invalid_grant', /not known here/);
    expect(issued()).toBe(0);
  });
});

describe('refresh', () => {
  async function connected(options: { readOnly?: boolean } = {}) {
    const context = setup();
    const { grantId, code } = await context.authorize(options);
    const response = await context.exchange(code);
    const refresh = (refreshToken: string, more: { scope?: string; resource?: string; clientId?: string } = {}) =>
      context.tokens.refresh({ refreshToken, clientId: 'client-claude', ...more });
    return { ...context, grantId, response, refresh };
  }

  it('a token the app narrowed to memory:read is read-only, though its grant is not', async () => {
    const { tokens, response, refresh } = await connected();
    const narrowed = await refresh(response.refresh_token, { scope: 'memory:read' });
    expect(await tokens.authenticate(narrowed.access_token, RESOURCE)).toEqual({
      user: 'ada',
      label: 'Claude',
      readOnly: true,
      oauthApp: true,
      readOnlyGrant: false,
      review: false,
    });
  });

  it('rotates: a new pair, and the old refresh token is spent', async () => {
    const { tokens, response, refresh, issued } = await connected();
    const second = await refresh(response.refresh_token);
    expect(second).toEqual({
      access_token: expect.stringMatching(/^engram_at_/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^engram_rt_/),
      scope: 'memory:read memory:write',
    });
    expect(second.access_token).not.toBe(response.access_token);
    expect(second.refresh_token).not.toBe(response.refresh_token);
    expect(issued()).toBe(4);
    expect(await tokens.authenticate(second.access_token, RESOURCE)).toMatchObject({ readOnly: false });
    const third = await refresh(second.refresh_token);
    expect(third.scope).toBe('memory:read memory:write');
  });

  it('revokes the grant when a refresh token is used twice, the second time past the grace window', async () => {
    const { grants, tokens, grantId, response, refresh, issued, advance } = await connected();
    const second = await refresh(response.refresh_token);
    advance(REFRESH_REUSE_GRACE_MS);
    await refusal(
      refresh(response.refresh_token),
      'invalid_grant',
      /used before, so it may have been stolen: the grant and every token/,
    );
    expect(await grants.findGrant(grantId)).toBeUndefined();
    expect(issued()).toBe(0);
    expect(await tokens.authenticate(second.access_token, RESOURCE)).toBeUndefined();
    await refusal(refresh(second.refresh_token), 'invalid_grant', /not known here/);
  });

  it('answers refreshes racing with one refresh token (a retry, two tabs) with one same pair, keeping the grant', async () => {
    const { grants, tokens, grantId, response, refresh, issued } = await connected();

    const answers = await Promise.all([1, 2, 3].map(() => refresh(response.refresh_token)));

    expect(new Set(answers.map((answer) => answer.refresh_token)).size).toBe(1);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    expect(answers[0]!.refresh_token).not.toBe(response.refresh_token);
    expect(await grants.findGrant(grantId)).toBeDefined();
    expect(issued()).toBe(4);
    expect(await tokens.authenticate(answers[0]!.access_token, RESOURCE)).toMatchObject({ user: 'ada' });
    expect((await refresh(answers[0]!.refresh_token)).token_type).toBe('Bearer');
  });

  it('answers the same pair to a repeat just inside the grace window, and revokes at its end', async () => {
    const { grants, grantId, response, refresh, issued, advance } = await connected();
    const first = await refresh(response.refresh_token, { scope: 'memory:read' });

    advance(REFRESH_REUSE_GRACE_MS - 1);
    // The scope asked again is not the one answered: the pair was issued already, narrowed.
    expect(await refresh(response.refresh_token)).toEqual({ ...first, expires_in: 3595 });
    expect(issued()).toBe(4);

    advance(1);
    await refusal(refresh(response.refresh_token), 'invalid_grant', /used before, so it may have been stolen/);
    expect(await grants.findGrant(grantId)).toBeUndefined();
  });

  it('revokes the grant when an older refresh token comes back within the window: its successor rotated already', async () => {
    const { grants, grantId, response, refresh, issued } = await connected();
    const second = await refresh(response.refresh_token);
    await refresh(second.refresh_token);

    await refusal(refresh(response.refresh_token), 'invalid_grant', /used before, so it may have been stolen/);
    expect(await grants.findGrant(grantId)).toBeUndefined();
    expect(issued()).toBe(0);
  });

  it('refuses a repeat within the window from another client, keeping the grant', async () => {
    const { grants, grantId, response, refresh } = await connected();
    await refresh(response.refresh_token);

    await refusal(
      refresh(response.refresh_token, { clientId: 'client-evil' }),
      'invalid_grant',
      /issued to another client/,
    );
    expect(await grants.findGrant(grantId)).toBeDefined();
  });

  it('revokes at once on a repeat of a refresh token kept without a seed (issued before the grace window existed)', async () => {
    const { grants, grantId, refresh, now } = await connected();
    const legacy = newSecret('refresh');
    await grants.saveSecrets(grantId, [
      {
        hash: hashSecret(legacy),
        grantId,
        kind: 'refresh',
        created: now(),
        expires: now() + 60_000,
        used: undefined,
        data: JSON.stringify({ scope: 'memory:read memory:write' }),
      },
    ]);

    const rotated = await refresh(legacy);
    expect((await refresh(rotated.refresh_token)).token_type).toBe('Bearer');
    await refusal(refresh(legacy), 'invalid_grant', /used before/);
    expect(await grants.findGrant(grantId)).toBeUndefined();
  });

  it('revokes the grant when a spent refresh token comes back after it expired', async () => {
    const { grants, grantId, response, refresh, advance } = await connected();
    await refresh(response.refresh_token);
    advance(31 * 24 * 3_600_000);
    await refusal(refresh(response.refresh_token), 'invalid_grant', /used before/);
    expect(await grants.findGrant(grantId)).toBeUndefined();
  });

  it('narrows to read-only, and may not widen again', async () => {
    const { tokens, response, refresh, issued } = await connected();
    const narrowed = await refresh(response.refresh_token, { scope: 'memory:read' });
    expect(narrowed.scope).toBe('memory:read');
    expect(await tokens.authenticate(narrowed.access_token, RESOURCE)).toMatchObject({ readOnly: true });
    await refusal(
      refresh(narrowed.refresh_token, { scope: 'memory:read memory:write' }),
      'invalid_scope',
      /memory:write was not granted: a refresh may only narrow the scope \(memory:read\)/,
    );
    expect(issued()).toBe(4);
    expect((await refresh(narrowed.refresh_token)).scope).toBe('memory:read');
  });

  it('refuses memory:write for a read-only grant', async () => {
    const { response, refresh, issued } = await connected({ readOnly: true });
    await refusal(refresh(response.refresh_token, { scope: 'memory:write' }), 'invalid_scope', /not granted/);
    expect(issued()).toBe(2);
  });

  describe('refuses before redeeming, issuing nothing and keeping the refresh token good', () => {
    it.each([
      [
        'an unknown scope',
        { scope: 'admin' },
        'invalid_scope',
        /scope "admin" is not one of memory:read, memory:write/,
      ],
      ['an empty scope', { scope: '' }, 'invalid_scope', /scope "" is not one of/],
      ['another client', { clientId: 'client-evil' }, 'invalid_grant', /issued to another client than "client-evil"/],
      [
        'another resource',
        { resource: 'https://other.example.com/mcp' },
        'invalid_target',
        /not what this grant is for/,
      ],
    ] as const)('%s', async (_, more, code, description) => {
      const { response, refresh, issued } = await connected();
      await refusal(refresh(response.refresh_token, more), code, description);
      expect(issued()).toBe(2);
      expect((await refresh(response.refresh_token)).token_type).toBe('Bearer');
    });
  });

  it('refuses an unknown refresh token, and an access token given as one', async () => {
    const { response, refresh, issued } = await connected();
    await refusal(refresh(newSecret('refresh')), 'invalid_grant', /refresh token is not known here/);
    await refusal(refresh(response.access_token), 'invalid_grant', /refresh token is not known here/);
    expect(issued()).toBe(2);
  });

  it('refuses an expired refresh token', async () => {
    const { response, refresh, issued, advance } = await connected();
    advance(30 * 24 * 3_600_000);
    await refusal(refresh(response.refresh_token), 'invalid_grant', /has expired/);
    expect(issued()).toBe(2);
  });

  it('refuses the refresh token of a revoked grant', async () => {
    const { tokens, grantId, response, refresh, issued } = await connected();
    await tokens.revokeApp(grantId);
    await refusal(refresh(response.refresh_token), 'invalid_grant', /not known here/);
    expect(issued()).toBe(0);
  });

  it('answers invalid_client to an unknown refresh token or code from a client no longer known, so it registers again', async () => {
    const { grants, response, issued } = await connected();
    const asked: string[] = [];
    const tokens = new OAuthTokens(grants, {
      now: () => START,
      isKnownClient: async (clientId) => {
        asked.push(clientId);
        return clientId === 'client-claude';
      },
    });
    const gone = /^the client "gone" is not registered here \(any more\): register again\.$/;
    await refusal(tokens.refresh({ refreshToken: newSecret('refresh'), clientId: 'gone' }), 'invalid_client', gone);
    await refusal(
      tokens.exchangeCode({ code: newSecret('code'), codeVerifier: VERIFIER, redirectUri: REDIRECT, clientId: 'gone' }),
      'invalid_client',
      gone,
    );
    // A client that is known still hears that its token is not.
    await refusal(
      tokens.refresh({ refreshToken: newSecret('refresh'), clientId: 'client-claude' }),
      'invalid_grant',
      /refresh token is not known here/,
    );
    expect(issued()).toBe(2);
    // A token that is known is redeemed without asking.
    await tokens.refresh({ refreshToken: response.refresh_token, clientId: 'client-claude' });
    expect(asked).toEqual(['gone', 'gone', 'client-claude']);
  });
});

describe('revoke', () => {
  it.each(['access_token', 'refresh_token'] as const)('revoking the %s ends the grant', async (which) => {
    const { grants, tokens, authorize, exchange } = setup();
    const { grantId, code } = await authorize();
    const response = await exchange(code);
    await tokens.revoke(response[which]);
    expect(await grants.findGrant(grantId)).toBeUndefined();
    expect(await tokens.authenticate(response.access_token, RESOURCE)).toBeUndefined();
  });

  it('accepts an unknown token silently, and leaves codes to expire', async () => {
    const { grants, tokens, authorize } = setup();
    const { grantId, code } = await authorize();
    await tokens.revoke('whatever');
    await tokens.revoke(code);
    expect(await grants.findGrant(grantId)).toBeDefined();
  });
});

describe('authenticate', () => {
  it('refuses an expired access token', async () => {
    const { tokens, authorize, exchange, advance } = setup();
    const response = await exchange((await authorize()).code);
    advance(3_599_999);
    expect(await tokens.authenticate(response.access_token, RESOURCE)).toBeDefined();
    advance(1);
    expect(await tokens.authenticate(response.access_token, RESOURCE)).toBeUndefined();
  });

  it('refuses a token at another resource, a refresh token, a code and a static-looking token', async () => {
    const { tokens, authorize, exchange } = setup();
    const second = await authorize();
    const response = await exchange((await authorize()).code);
    expect(await tokens.authenticate(response.access_token, 'https://other.example.com/mcp')).toBeUndefined();
    expect(await tokens.authenticate(response.refresh_token, RESOURCE)).toBeUndefined();
    expect(await tokens.authenticate(second.code, RESOURCE)).toBeUndefined();
    expect(await tokens.authenticate(`engram_${response.access_token.slice(10)}`, RESOURCE)).toBeUndefined();
  });

  it('records when the app was last used, at most once a minute', async () => {
    const { grants, tokens, authorize, exchange, advance, now } = setup();
    const { grantId, code } = await authorize();
    const response = await exchange(code);
    await tokens.authenticate(response.access_token, RESOURCE);
    await settle();
    expect((await grants.findGrant(grantId))?.lastUsed).toBe(now());
    const first = now();
    advance(59_999);
    await tokens.authenticate(response.access_token, RESOURCE);
    await settle();
    expect((await grants.findGrant(grantId))?.lastUsed).toBe(first);
    advance(1);
    await tokens.authenticate(response.access_token, RESOURCE);
    await settle();
    expect((await grants.findGrant(grantId))?.lastUsed).toBe(now());
  });

  it('lets the request through when recording the time fails', async () => {
    const { grants, tokens, touchErrors, authorize, exchange } = setup();
    const response = await exchange((await authorize()).code);
    grants.touchGrant = async () => {
      throw new Error('disk full');
    };
    expect(await tokens.authenticate(response.access_token, RESOURCE)).toMatchObject({ user: 'ada' });
    await settle();
    expect(touchErrors).toEqual([new Error('disk full')]);
  });
});

describe('connected apps', () => {
  it('lists every grant as an app and revokes one with every token it holds', async () => {
    const { tokens, authorize, exchange, issued, advance } = setup();
    const first = await authorize();
    const firstTokens = await exchange(first.code);
    advance(1_000);
    const second = await authorize({ readOnly: true, user: 'bob' });
    await exchange(second.code);
    expect(await tokens.listApps()).toEqual([
      {
        id: first.grantId,
        name: 'Claude',
        clientId: 'client-claude',
        user: 'ada',
        scopes: ['memory:read', 'memory:write'],
        created: START,
        lastUsed: undefined,
        review: false,
      },
      {
        id: second.grantId,
        name: 'Claude',
        clientId: 'client-claude',
        user: 'bob',
        scopes: ['memory:read'],
        created: START + 1_000,
        lastUsed: undefined,
        review: false,
      },
    ]);
    expect(await tokens.revokeApp(` ${first.grantId} `)).toBe(true);
    expect(await tokens.authenticate(firstTokens.access_token, RESOURCE)).toBeUndefined();
    expect(issued()).toBe(2);
    expect((await tokens.listApps()).map((app) => app.id)).toEqual([second.grantId]);
    expect(await tokens.revokeApp(first.grantId)).toBe(false);
  });

  it("lists and revokes one user's own apps only: another user's app is not listed, and stays when revoked by id", async () => {
    const { tokens, authorize, exchange } = setup();
    const ada = await authorize({ user: 'ada' });
    const bob = await authorize({ user: 'bob' });
    const bobTokens = await exchange(bob.code);
    expect((await tokens.listAppsOf('ada')).map((app) => [app.id, app.user])).toEqual([[ada.grantId, 'ada']]);
    expect(await tokens.revokeAppOf('ada', bob.grantId)).toBe(false);
    expect(await tokens.authenticate(bobTokens.access_token, RESOURCE)).toMatchObject({ user: 'bob' });
    expect(await tokens.revokeAppOf('ada', 'no-such-grant')).toBe(false);
    expect(await tokens.revokeAppOf('ada', ` ${ada.grantId} `)).toBe(true);
    expect(await tokens.listAppsOf('ada')).toEqual([]);
    expect((await tokens.listAppsOf('bob')).map((app) => app.id)).toEqual([bob.grantId]);
  });

  it('purges codes and tokens past their expiry, and the grants left holding none', async () => {
    const { tokens, authorize, exchange, issued, advance } = setup();
    await authorize(); // Allowed twice (a double click): this code is never exchanged.
    const used = await authorize();
    await exchange(used.code);
    advance(3_600_000);
    expect(await tokens.purgeExpired()).toEqual({ secrets: 3, grants: 1 });
    expect(issued()).toBe(1);
    expect((await tokens.listApps()).map((app) => app.id)).toEqual([used.grantId]);

    advance(30 * 24 * 3_600_000);
    expect(await tokens.purgeExpired()).toEqual({ secrets: 1, grants: 1 });
    expect(await tokens.listApps()).toEqual([]);
  });
});
