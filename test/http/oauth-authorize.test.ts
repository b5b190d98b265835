/**
 * `/authorize` over real HTTP: the consent page's markers and headers, every refusal and
 * that it issued nothing (no grant, no code, no session), and the decisions: Allow with
 * a password or a session sends the code, `state` and `iss` back; Read only narrows the
 * grant; Deny sends access_denied; the code it sends is exchanged at /token. Each test
 * runs `engram serve --auth oauth` in-process over the in-process store, with configured
 * clients and the accounts service's clock stopped.
 */

import { createHash } from 'node:crypto';
import { beforeAll, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import type { Accounts, AccountsOptions } from '../../src/access/accounts/accounts.js';
import { hashPassword } from '../../src/access/accounts/passwords.js';
import type { OAuthClient } from '../../src/access/oauth/types.js';
import type { MemoryStore } from '../../src/storage/memory/index.js';
import { TEST_PASSWORD_COST } from '../helpers/password-cost.js';
import { postRpc, type RawResponse, raw, rpc, rpcMessage } from './fixtures.js';
import {
  CHALLENGE as CLAUDE_CHALLENGE,
  CLIENT_ID as CLAUDE_ID,
  exchangeCode,
  type OAuthTestServer,
  startOAuthServer,
} from './oauth-fixtures.js';

const CHALLENGE = createHash('sha256').update('a verifier of enough length, 43 characters or more').digest('base64url');
const HOSTILE_NAME = '<script>alert(1)</script> & "Friends"';
const PASSWORD = 'correct horse battery';
const SESSION_DAYS_IN_SECONDS = 7 * 24 * 60 * 60;

const CLIENTS: OAuthClient[] = [
  { id: 'claude', kind: 'configured', name: 'Claude', redirectUris: ['https://claude.ai/api/mcp/auth_callback'] },
  // The client whose code exchangeCode() redeems, with its verifier.
  { id: CLAUDE_ID, kind: 'configured', name: 'Claude', redirectUris: ['https://claude.ai/api/mcp/auth_callback'] },
  { id: 'hostile', kind: 'configured', name: HOSTILE_NAME, redirectUris: ['https://evil.example/cb'] },
  { id: 'local', kind: 'configured', name: 'Local', redirectUris: ['http://127.0.0.1/cb'] },
];

let passwordHash: string;
let server: OAuthTestServer;
let store: MemoryStore;
/** Every refused sign-in the accounts service logged. */
let signInLog: string[];
/** Every sign-in the route tried. */
let signIn: MockInstance<Accounts['signIn']>;
let port: number;
/** The server's public origin: the issuer, and the Origin its own page sends. */
let origin: string;

/** `engram serve --auth oauth` over a fresh store where alice has an account. */
async function reset(options: { throttle?: AccountsOptions['throttle']; publicUrl?: URL } = {}): Promise<void> {
  signInLog = [];
  server = await startOAuthServer({
    configured: CLIENTS,
    ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
    // A clock that stands still: no wait passes between two requests, however slow the machine.
    now: () => 1_000_000,
    throttle: options.throttle ?? {},
    log: (line) => signInLog.push(line),
  });
  store = server.store;
  await store.accounts.put({ user: 'alice', passwordHash, created: 1, updated: 1 });
  signIn = vi.spyOn(server.accounts, 'signIn');
  port = server.port;
  origin = options.publicUrl?.origin ?? server.origin;
}

beforeAll(async () => {
  passwordHash = await hashPassword(PASSWORD, TEST_PASSWORD_COST);
});
beforeEach(() => reset());

const GOOD = {
  client_id: 'claude',
  redirect_uri: 'https://claude.ai/api/mcp/auth_callback',
  response_type: 'code',
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
  scope: 'memory:read memory:write',
  state: 'st<a>te&1',
};

function get(params: Record<string, string | undefined>, headers: Record<string, string> = {}): Promise<RawResponse> {
  const query = new URLSearchParams(
    Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return raw(port, { path: `/authorize?${query}`, headers: { Host: `127.0.0.1:${port}`, ...headers } });
}

function decodeEntities(text: string): string {
  return text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
}

/** The hidden fields of the consent form, in order. */
function hiddenFields(html: string): [string, string][] {
  return [...html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((match) => [
    decodeEntities(match[1] ?? ''),
    decodeEntities(match[2] ?? ''),
  ]);
}

/** `name=value` of each Set-Cookie. */
function cookiesOf(response: RawResponse): string[] {
  return (response.headers['set-cookie'] ?? []).map((cookie) => cookie.split(';')[0] ?? '');
}

interface Consent {
  readonly page: RawResponse;
  readonly fields: [string, string][];
  /** The Cookie header the browser now sends. */
  readonly cookie: string;
}

/** Opens the consent page as a browser does, keeping the CSRF cookie it sets. */
async function open(params: Record<string, string | undefined> = GOOD, cookie = ''): Promise<Consent> {
  const page = await get(params, cookie === '' ? {} : { Cookie: cookie });
  expect(page.status).toBe(200);
  const cookies = [cookie, ...cookiesOf(page)].filter((part) => part !== '');
  return { page, fields: hiddenFields(page.body), cookie: cookies.join('; ') };
}

function post(
  fields: readonly (readonly [string, string])[],
  cookie: string,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  return raw(port, {
    method: 'POST',
    path: '/authorize',
    headers: {
      Host: `127.0.0.1:${port}`,
      'Content-Type': 'application/x-www-form-urlencoded',
      Origin: origin,
      'Sec-Fetch-Site': 'same-origin',
      ...(cookie === '' ? {} : { Cookie: cookie }),
      ...headers,
    },
    body: new URLSearchParams(fields.map(([name, value]): [string, string] => [name, value])).toString(),
  });
}

const ALLOW_AS_ALICE: [string, string][] = [
  ['user', 'Alice'],
  ['password', PASSWORD],
  ['decision', 'allow'],
];

function query(location: string | undefined): Record<string, string> {
  return Object.fromEntries(new URL(location ?? 'about:blank').searchParams);
}

async function expectNothingIssued(): Promise<void> {
  expect(store.oauth.snapshot()).toEqual({ clients: [], grants: [], grantSecrets: [] });
  expect(await store.accounts.listSessions()).toEqual([]);
}

describe('GET /authorize: the consent page', () => {
  it('shows the app, where it returns, what it asks, the sign-in fields, the three accesses, Allow and Deny', async () => {
    const { page, fields } = await open();
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const html = page.body;
    expect(html).toContain('<title>Connect Claude to Engram</title>');
    expect(html).toContain('<h1>Connect <strong>Claude</strong> to your Engram memory</h1>');
    expect(html).toContain('Claude asks to <strong>read and change your memory</strong>.');
    expect(html).toContain('your browser goes back to <strong>claude.ai</strong>');
    expect(html).toContain('<label for="user">User</label><input type="text" id="user" name="user"');
    expect(html).toContain('<label for="password">Password</label><input type="password" id="password"');
    expect(html).toContain(
      '<fieldset><legend>What may Claude do?</legend>' +
        '<div class="check"><input type="radio" id="access_write" name="access" value="write" checked>' +
        '<label for="access_write">Read and change my memory</label></div>' +
        '<div class="check"><input type="radio" id="access_review" name="access" value="review">' +
        '<label for="access_review">Changes need my review</label></div>' +
        '<div class="check"><input type="radio" id="access_read" name="access" value="read">' +
        '<label for="access_read">Read only</label></div></fieldset>',
    );
    expect(html).toContain('each change Claude makes waits, seen by no app, until you approve it');
    expect(html).toContain('<button type="submit" name="decision" value="allow">Allow</button>');
    expect(html).toContain('<button type="submit" name="decision" value="deny" formnovalidate>Deny</button>');
    expect(html).toContain('<form method="post" action="authorize">');
    expect(html).not.toMatch(/<script|src=|https?:\/\/(?!claude)/i);
    expect(fields.map(([name]) => name)).toEqual([
      'client_id',
      'redirect_uri',
      'response_type',
      'code_challenge',
      'code_challenge_method',
      'scope',
      'state',
      'csrf',
      'sign_in',
    ]);
    expect(Object.fromEntries(fields)).toMatchObject({ ...GOOD, sign_in: 'password' });
  });

  it('is never framed or cached, refers to no other site, and loads nothing but its own style', async () => {
    const { page } = await open();
    const csp = page.headers['content-security-policy'] ?? '';
    expect(csp).toMatch(
      /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; base-uri 'none'; frame-ancestors 'none'$/,
    );
    const style = /<style>([^<]*)<\/style>/.exec(page.body)?.[1] ?? '';
    expect(csp).toContain(`'sha256-${createHash('sha256').update(style).digest('base64')}'`);
    expect(page.headers).toMatchObject({
      'x-frame-options': 'DENY',
      'cache-control': 'no-store',
      'referrer-policy': 'same-origin',
    });
  });

  it('sets a Strict, HttpOnly CSRF cookie whose token the form carries, and keeps it for the next page', async () => {
    const first = await get(GOOD);
    expect(first.headers['set-cookie']).toEqual([
      expect.stringMatching(/^engram_csrf=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/),
    ]);
    const token = cookiesOf(first)[0]?.slice('engram_csrf='.length);
    expect(Object.fromEntries(hiddenFields(first.body)).csrf).toBe(token);
    const second = await get(GOOD, { Cookie: `engram_csrf=${token}` });
    expect(second.headers['set-cookie']).toBeUndefined();
    expect(Object.fromEntries(hiddenFields(second.body)).csrf).toBe(token);
  });

  it('escapes the app name and the state it carries', async () => {
    const { page, fields } = await open({ ...GOOD, client_id: 'hostile', redirect_uri: 'https://evil.example/cb' });
    expect(page.body).not.toContain('<script');
    expect(page.body).toContain('<strong>&#60;script&#62;alert(1)&#60;/script&#62; &#38; &#34;Friends&#34;</strong>');
    expect(page.body).toContain('value="st&#60;a&#62;te&#38;1"');
    expect(Object.fromEntries(fields).state).toBe(GOOD.state);
  });

  it('offers Read only alone, chosen and disabled, when the app asks to read only', async () => {
    const { page } = await open({ ...GOOD, scope: 'memory:read' });
    expect(page.body).toContain('Claude asks to <strong>read your memory</strong>.');
    expect(page.body).toContain(
      '<input type="radio" id="access_read" name="access" value="read" checked disabled><label for="access_read">Read only</label>',
    );
    expect(page.body).not.toContain('access_review');
  });

  it('says a loopback redirect returns to this computer, on the port the app asked', async () => {
    const { page } = await open({ ...GOOD, client_id: 'local', redirect_uri: 'http://127.0.0.1:33418/cb' });
    expect(page.body).toContain('goes back to <strong>this computer (127.0.0.1:33418)</strong>');
  });

  it.each([
    ['an unknown client', { client_id: 'nobody' }, 'Engram does not know this app: '],
    ['no redirect URI', { redirect_uri: undefined }, 'Claude did not say where to return'],
    ['an unregistered redirect URI', { redirect_uri: 'https://evil.example/steal' }, 'an address it did not register'],
  ])('answers %s on a page of its own, never redirecting', async (_, change, words) => {
    const page = await get({ ...GOOD, ...change });
    expect(page.status).toBe(400);
    expect(page.headers.location).toBeUndefined();
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.body).toContain('<h1>Engram cannot connect this app</h1>');
    expect(decodeEntities(page.body)).toContain(words);
    expect(page.body).not.toContain('<form');
    await expectNothingIssued();
  });

  it.each([
    ['plain PKCE', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['no PKCE', { code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
    ['an implicit grant', { response_type: 'token' }, 'unsupported_response_type'],
    ['an unknown scope', { scope: 'memory:admin' }, 'invalid_scope'],
    ['another resource', { resource: 'https://elsewhere.example/mcp' }, 'invalid_target'],
  ])('sends %s back to a configured client with its error, state and iss', async (_, change, error) => {
    const page = await get({ ...GOOD, ...change });
    expect(page.status).toBe(302);
    expect(page.headers.location?.startsWith(`${GOOD.redirect_uri}?`)).toBe(true);
    expect(query(page.headers.location)).toEqual({
      error,
      error_description: expect.any(String),
      state: GOOD.state,
      iss: origin,
    });
    await expectNothingIssued();
  });

  it.each([
    ['plain PKCE', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['no PKCE', { code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
    ['an implicit grant', { response_type: 'token' }, 'unsupported_response_type'],
    ['an unknown scope', { scope: 'memory:admin' }, 'invalid_scope'],
    ['a repeated state', { state: ['a', 'b'] }, 'invalid_request'],
  ] as [string, Record<string, string | string[] | undefined>, string][])(
    'answers %s of a client anyone registered on a page, never sending it back (RFC 9700 §4.11.2)',
    async (_, change, error) => {
      const registered = await raw(port, {
        method: 'POST',
        path: '/register',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ client_name: 'Phisher', redirect_uris: ['https://phish.example/landing'] }),
      });
      const { client_id } = JSON.parse(registered.body);
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries({
        ...GOOD,
        client_id,
        redirect_uri: 'https://phish.example/landing',
        ...change,
      })) {
        for (const one of ([] as string[]).concat(value ?? [])) params.append(name, one);
      }
      const page = await raw(port, { path: `/authorize?${params}`, headers: { Host: `127.0.0.1:${port}` } });
      expect(page.status).toBe(400);
      expect(page.headers.location).toBeUndefined();
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.body).toContain('<h1>Engram cannot connect this app</h1>');
      expect(decodeEntities(page.body)).toContain(`Phisher sent a request Engram cannot accept (${error}): `);
      expect(page.body).not.toContain('<form');
      expect(await store.oauth.listGrants()).toEqual([]);
    },
  );

  it('loads itself again when another site started the navigation without the session cookie', async () => {
    const cross = { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'navigate' };
    const page = await get(GOOD, cross);
    expect(page.status).toBe(200);
    const href = `authorize?${new URLSearchParams({ ...GOOD, reloaded: '1' })}`.replaceAll('&', '&#38;');
    expect(page.body).toContain(`<meta http-equiv="refresh" content="0; url=${href}">`);
    expect(page.body).toContain(`<a href="${href}">Continue to Engram</a>`);
    expect(page.body).not.toContain('<form');
    expect(page.headers['x-frame-options']).toBe('DENY');
    const again = await get(GOOD, { 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Mode': 'navigate' });
    expect(again.body).toContain('<form');
    // Never a second time, whatever the browser says of its own reload.
    const reloaded = await get({ ...GOOD, reloaded: '1' }, cross);
    expect(reloaded.body).toContain('<form');
    expect(Object.fromEntries(hiddenFields(reloaded.body)).reloaded).toBeUndefined();
  });

  it('answers a method other than GET and POST with 405', async () => {
    const page = await raw(port, { method: 'PUT', path: '/authorize', headers: { Host: `127.0.0.1:${port}` } });
    expect(page.status).toBe(405);
    expect(page.headers.allow).toBe('GET, POST');
  });
});

describe('POST /authorize: Allow', () => {
  it('signs in, opens a session, stores the grant and sends the code, state and iss back', async () => {
    const { fields, cookie } = await open();
    const answer = await post([...fields, ...ALLOW_AS_ALICE], cookie, { 'User-Agent': 'Test browser' });
    expect(answer.status).toBe(303);
    expect(answer.headers.location?.startsWith(`${GOOD.redirect_uri}?`)).toBe(true);
    expect(query(answer.headers.location)).toEqual({
      code: expect.stringMatching(/^engram_code_[A-Za-z0-9_-]{43}$/),
      state: GOOD.state,
      iss: origin,
    });
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['set-cookie']).toEqual([
      expect.stringMatching(
        new RegExp(
          `^engram_session=[A-Za-z0-9_-]+; Path=/; HttpOnly; SameSite=Strict; Max-Age=${SESSION_DAYS_IN_SECONDS}$`,
        ),
      ),
    ]);
    expect(signIn.mock.calls).toEqual([['Alice', PASSWORD, '127.0.0.1']]);
    const [grant] = await store.oauth.listGrants();
    expect(grant).toMatchObject({ user: 'alice', clientId: 'claude', clientName: 'Claude', readOnly: false });
    const code = query(answer.headers.location).code ?? '';
    const secret = await store.oauth.findSecret(createHash('sha256').update(code).digest('hex'));
    expect(secret).toMatchObject({ grantId: grant?.id, kind: 'code' });
    expect(JSON.parse(secret?.data ?? '')).toEqual({ redirectUri: GOOD.redirect_uri, codeChallenge: CHALLENGE });
  });

  it('narrows the grant to read only when Read only is chosen (or ticked, on the page before review mode)', async () => {
    for (const field of [['access', 'read'] as const, ['read_only', 'yes'] as const]) {
      const { fields, cookie } = await open();
      const answer = await post([...fields, ...ALLOW_AS_ALICE, field], cookie);
      expect(answer.status).toBe(303);
    }
    expect((await store.oauth.listGrants()).map((grant) => [grant.readOnly, grant.review])).toEqual([
      [true, false],
      [true, false],
    ]);
  });

  it('puts the grant in review mode when Changes need my review is chosen', async () => {
    const { fields, cookie } = await open();
    const answer = await post([...fields, ...ALLOW_AS_ALICE, ['access', 'review']], cookie);
    expect(answer.status).toBe(303);
    expect((await store.oauth.listGrants()).map((grant) => [grant.readOnly, grant.review])).toEqual([[false, true]]);
  });

  it('never puts in review mode an app that asked to read only', async () => {
    const { fields, cookie } = await open({ ...GOOD, scope: 'memory:read' });
    expect((await post([...fields, ...ALLOW_AS_ALICE, ['access', 'review']], cookie)).status).toBe(303);
    expect((await store.oauth.listGrants()).map((grant) => [grant.readOnly, grant.review])).toEqual([[true, false]]);
  });

  it('grants read only to an app that asked to read only, though the disabled box is not sent', async () => {
    const { fields, cookie } = await open({ ...GOOD, scope: 'memory:read' });
    expect((await post([...fields, ...ALLOW_AS_ALICE], cookie)).status).toBe(303);
    expect((await store.oauth.listGrants()).map((grant) => grant.readOnly)).toEqual([true]);
  });

  it('recognises the session of an earlier sign-in, and offers another account', async () => {
    const first = await open();
    const signedIn = await post([...first.fields, ...ALLOW_AS_ALICE], first.cookie);
    const session = cookiesOf(signedIn)[0] ?? '';
    const { page, fields, cookie } = await open(GOOD, `${first.cookie}; ${session}`);
    expect(page.body).toContain('<p>Signed in as <strong>alice</strong>. <a href="authorize?');
    expect(page.body).toContain('prompt=login">Use another account</a>');
    expect(page.body).not.toContain('type="password"');
    expect(Object.fromEntries(fields).sign_in).toBe('session');
    const answer = await post([...fields, ['decision', 'allow']], cookie);
    expect(answer.status).toBe(303);
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect((await store.oauth.listGrants()).map((grant) => grant.user)).toEqual(['alice', 'alice']);

    const other = await get({ ...GOOD, prompt: 'login' }, { Cookie: cookie });
    expect(other.body).toContain('<label for="password">Password</label>');
    expect(other.body).not.toContain('Signed in as');
  });

  it('asks to sign in again when the session ended between the page and the form', async () => {
    const first = await open();
    const session = cookiesOf(await post([...first.fields, ...ALLOW_AS_ALICE], first.cookie))[0] ?? '';
    const { fields, cookie } = await open(GOOD, `${first.cookie}; ${session}`);
    await store.accounts.removeSessionsOf('alice');
    const answer = await post([...fields, ['decision', 'allow']], cookie);
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('You have been signed out. Sign in again.');
    expect(answer.body).toContain('<label for="password">Password</label>');
    expect(await store.oauth.listGrants()).toHaveLength(1);
  });

  it('asks to sign in again, issuing nothing, when the user is removed between the session check and the grant', async () => {
    const first = await open();
    const session = cookiesOf(await post([...first.fields, ...ALLOW_AS_ALICE], first.cookie))[0] ?? '';
    const { fields, cookie } = await open(GOOD, `${first.cookie}; ${session}`);
    const saveGrant = store.oauth.saveGrant.bind(store.oauth);
    vi.spyOn(store.oauth, 'saveGrant').mockImplementation(async (grant, code) => {
      await server.accounts.remove('alice', { purge: false });
      return saveGrant(grant, code);
    });
    const answer = await post([...fields, ['decision', 'allow']], cookie);
    expect(answer.status).toBe(400);
    expect(answer.headers.location).toBeUndefined();
    expect(answer.body).toContain('You have been signed out. Sign in again.');
    await expectNothingIssued();
  });

  it('refuses the password as after the removal, issuing nothing, when the user is removed as they sign in', async () => {
    const { fields, cookie } = await open();
    const addSession = store.accounts.addSession.bind(store.accounts);
    vi.spyOn(store.accounts, 'addSession').mockImplementation(async (opened) => {
      await server.accounts.remove('alice', { purge: false });
      return addSession(opened);
    });
    const answer = await post([...fields, ...ALLOW_AS_ALICE], cookie);
    expect(answer.status).toBe(400);
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect(answer.body).toContain('<p class="problem" role="alert">Wrong user name or password.</p>');
    expect(answer.body).toContain('required value="Alice"');
    await expectNothingIssued();
  });

  it('refuses the password as after the removal, issuing nothing, when the user is removed before the grant', async () => {
    const { fields, cookie } = await open();
    const saveGrant = store.oauth.saveGrant.bind(store.oauth);
    vi.spyOn(store.oauth, 'saveGrant').mockImplementation(async (grant, code) => {
      await server.accounts.remove('alice', { purge: false });
      return saveGrant(grant, code);
    });
    const answer = await post([...fields, ...ALLOW_AS_ALICE], cookie);
    expect(answer.status).toBe(400);
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect(answer.body).toContain('<p class="problem" role="alert">Wrong user name or password.</p>');
    await expectNothingIssued();
  });
});

describe('POST /authorize: Deny', () => {
  it('sends access_denied with state and iss back, without signing in, and issues nothing', async () => {
    const { fields, cookie } = await open();
    const answer = await post([...fields, ['user', ''], ['password', ''], ['decision', 'deny']], cookie);
    expect(answer.status).toBe(303);
    expect(query(answer.headers.location)).toEqual({
      error: 'access_denied',
      error_description: 'The user denied the request.',
      state: GOOD.state,
      iss: origin,
    });
    expect(signIn).not.toHaveBeenCalled();
    await expectNothingIssued();
  });
});

describe('POST /authorize: refusals issue nothing', () => {
  it('refuses a form without the CSRF token, or with another one, or without the cookie', async () => {
    const { fields, cookie } = await open();
    const without = fields.filter(([name]) => name !== 'csrf');
    const other = fields.map(([name, value]): [string, string] => [name, name === 'csrf' ? 'A'.repeat(43) : value]);
    for (const [form, sent] of [
      [without, cookie],
      [other, cookie],
      [fields, ''],
    ] as const) {
      const answer = await post([...form, ...ALLOW_AS_ALICE], sent);
      expect(answer.status).toBe(403);
      expect(answer.headers.location).toBeUndefined();
      expect(answer.body).toContain('This form has expired or did not come from Engram’s own page.');
    }
    expect(signIn).not.toHaveBeenCalled();
    await expectNothingIssued();
  });

  it.each([
    ['another Origin', { Origin: 'https://evil.example' }],
    ['Origin null', { Origin: 'null' }],
    ['a cross-site fetch', { 'Sec-Fetch-Site': 'cross-site' }],
    ['a same-site fetch from a sibling host', { 'Sec-Fetch-Site': 'same-site' }],
  ])('refuses a form sent by %s, even with the right token', async (_, headers) => {
    const { fields, cookie } = await open();
    const answer = await post([...fields, ...ALLOW_AS_ALICE], cookie, headers);
    expect(answer.status).toBe(403);
    expect(answer.body).toContain('This form was sent from another site');
    expect(signIn).not.toHaveBeenCalled();
    await expectNothingIssued();
  });

  it('refuses a wrong password with the page again, keeping the user name', async () => {
    const { fields, cookie } = await open();
    const answer = await post([...fields, ['user', 'alice'], ['password', 'wrong'], ['decision', 'allow']], cookie);
    expect(answer.status).toBe(400);
    expect(answer.headers.location).toBeUndefined();
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect(answer.body).toContain('<p class="problem" role="alert">Wrong user name or password.</p>');
    expect(answer.body).toContain(
      'name="user" autocomplete="username" autocapitalize="none" spellcheck="false" required value="alice"',
    );
    expect(Object.fromEntries(hiddenFields(answer.body)).csrf).toBe(Object.fromEntries(fields).csrf);
    expect(signInLog).toEqual([
      expect.stringContaining('sign-in failed for user "alice" from "127.0.0.1": wrong password'),
    ]);
    await expectNothingIssued();
  });

  it('refuses an empty password without trying it', async () => {
    const { fields, cookie } = await open();
    const answer = await post([...fields, ['user', 'alice'], ['password', ''], ['decision', 'allow']], cookie);
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('Enter your user name and password.');
    expect(signIn).not.toHaveBeenCalled();
    await expectNothingIssued();
  });

  it('says how long to wait when sign-in is throttled, and does not try the password', async () => {
    await reset({ throttle: { freeFailures: 1, baseDelayMs: 120_000 } });
    const { fields, cookie } = await open();
    const wrong = await post(
      [...fields, ['user', 'alice'], ['password', 'wrong guess'], ['decision', 'allow']],
      cookie,
    );
    expect(wrong.status).toBe(400);
    const answer = await post([...fields, ...ALLOW_AS_ALICE], cookie);
    expect(answer.status).toBe(429);
    expect(answer.headers['retry-after']).toBe('120');
    expect(answer.body).toContain('Wait 2 minutes, then try again.');
    await expectNothingIssued();
  });

  it('checks the request again: a redirect URI changed in the form is answered on a page', async () => {
    const { fields, cookie } = await open();
    const tampered = fields.map(([name, value]): [string, string] => [
      name,
      name === 'redirect_uri' ? 'https://evil.example/steal' : value,
    ]);
    const answer = await post([...tampered, ...ALLOW_AS_ALICE], cookie);
    expect(answer.status).toBe(400);
    expect(answer.headers.location).toBeUndefined();
    expect(signIn).not.toHaveBeenCalled();
    await expectNothingIssued();
  });

  it('checks the request again: plain PKCE put in the form goes back to the client', async () => {
    const { fields, cookie } = await open();
    const tampered = fields.map(([name, value]): [string, string] => [
      name,
      name === 'code_challenge_method' ? 'plain' : value,
    ]);
    const answer = await post([...tampered, ...ALLOW_AS_ALICE], cookie);
    expect(answer.status).toBe(303);
    expect(query(answer.headers.location)).toMatchObject({ error: 'invalid_request', state: GOOD.state });
    await expectNothingIssued();
  });

  it('refuses a body that is not a form', async () => {
    const { fields, cookie } = await open();
    const answer = await post([...fields, ...ALLOW_AS_ALICE], cookie, { 'Content-Type': 'text/plain' });
    expect(answer.status).toBe(415);
    await expectNothingIssued();
  });
});

describe('the code the page sends back', () => {
  /** Allows CLAUDE_ID as alice, exchanges the code at /token, and writes an entry with the access token. */
  async function connectAndWrite(readOnly: boolean) {
    const { fields, cookie } = await open({ ...GOOD, client_id: CLAUDE_ID, code_challenge: CLAUDE_CHALLENGE });
    const allowed = await post(
      [...fields, ...ALLOW_AS_ALICE, ...(readOnly ? [['access', 'read'] as const] : [])],
      cookie,
    );
    const token = await exchangeCode(port, query(allowed.headers.location).code ?? '');
    expect(token.status).toBe(200);
    const { access_token: access, scope } = JSON.parse(token.body);
    const write = rpc('tools/call', {
      name: 'memory_write',
      arguments: { name: 'topics/me', description: 'Who I am', new: 'Name: Alice.' },
    });
    const answer = rpcMessage(await postRpc(port, write, { Authorization: `Bearer ${access}` }));
    return { scope, answer: answer.result as { isError?: boolean; content: { text: string }[] } };
  }

  it('is exchanged at /token for an access token with which the app writes as itself', async () => {
    const { scope, answer } = await connectAndWrite(false);
    expect(scope).toBe('memory:read memory:write');
    expect(answer.isError).toBeFalsy();
    const [revision] = await server.memory.recovery.history({ user: 'alice', label: 'test' }, 'topics/me');
    expect(revision?.actor).toBe('Claude');
  });

  it('gives a read-only app a token that may not write', async () => {
    const { scope, answer } = await connectAndWrite(true);
    expect(scope).toBe('memory:read');
    expect(answer.isError).toBe(true);
    expect(await store.index('alice')).toEqual([]);
  });
});

describe('behind an https public URL', () => {
  it('makes both cookies Secure, the CSRF one __Host-, and takes forms from that origin only', async () => {
    await reset({ publicUrl: new URL('https://memory.example.com') });
    const { page, fields, cookie } = await open();
    expect(page.headers['set-cookie']).toEqual([
      expect.stringMatching(/^__Host-engram_csrf=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Secure$/),
    ]);
    const local = await post([...fields, ...ALLOW_AS_ALICE], cookie, { Origin: `http://127.0.0.1:${port}` });
    expect(local.status).toBe(403);
    const answer = await post([...fields, ...ALLOW_AS_ALICE], cookie, { Origin: 'https://memory.example.com' });
    expect(answer.status).toBe(303);
    expect(query(answer.headers.location).iss).toBe('https://memory.example.com');
    expect(answer.headers['set-cookie']).toEqual([
      expect.stringMatching(/^engram_session=.*; SameSite=Strict; Secure; Max-Age=\d+$/),
    ]);
  });
});
