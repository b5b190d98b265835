/**
 * The client service: Dynamic Client Registration accepts public clients within its
 * limits and refuses everything else with RFC 7591's error codes, storing nothing; a
 * client id resolves to a configured, registered or metadata-document client (the
 * document checked and cached), or is refused as invalid_client; redirect URIs match
 * exactly, a loopback http one on any port.
 */

import { describe, expect, it, vi } from 'vitest';
import { Authorization } from '../../../src/access/oauth/authorization.js';
import {
  CONSENT_SHOWN_MS,
  MAX_DOCUMENT_FETCHES,
  OAuthClients,
  UNUSED_CLIENT_AGE_MS,
} from '../../../src/access/oauth/clients.js';
import { type OAuthClient, OAuthError, type OAuthErrorCode } from '../../../src/access/oauth/types.js';
import { MemoryOAuthStore } from '../../../src/storage/memory/oauth.js';

/** The grants' users' accounts are not what these tests are about: everyone has one. */
const anyoneHasAnAccount = () => true;

const CLAUDE = {
  client_name: 'Claude',
  redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
};

const CONFIGURED: OAuthClient = {
  id: 'my-script',
  kind: 'configured',
  name: 'My script',
  redirectUris: ['http://127.0.0.1/callback'],
};

const DOCUMENT_URL = 'https://app.example.com/oauth/client.json';
/** A document whose fetch fails with an error that is not a refusal worded for the client. */
const FAILING_URL = 'https://app.example.com/oauth/broken.json';

function setup(options: { documents?: Record<string, unknown>; maxRegistrations?: number } = {}) {
  let clock = 1_700_000_000_123;
  const grants = new MemoryOAuthStore(anyoneHasAnAccount);
  const fetched: string[] = [];
  const clients = new OAuthClients(grants, {
    now: () => clock,
    configured: [CONFIGURED],
    maxRegistrations: options.maxRegistrations ?? 1_000,
    ...(options.documents
      ? {
          fetchDocument: async (url: URL) => {
            fetched.push(url.href);
            if (url.href === FAILING_URL) throw new Error('connect ECONNREFUSED 10.0.0.7:8443');
            if (!(url.href in options.documents!)) throw new OAuthError('invalid_client', 'the server answered 404');
            return options.documents![url.href];
          },
        }
      : {}),
  });
  return { grants, clients, fetched, advance: (ms: number) => (clock += ms) };
}

/** A grant of ada's to the client `clientId`, as the consent step stores it. */
async function grantTo(grants: MemoryOAuthStore, clientId: string, id: string): Promise<void> {
  await grants.saveGrant(
    {
      id,
      user: 'ada',
      clientId,
      clientName: 'Claude',
      readOnly: false,
      resource: 'https://e.example/mcp',
      created: 0,
      lastUsed: undefined,
      review: false,
    },
    { hash: id.padEnd(64, '0'), grantId: id, kind: 'code', created: 0, expires: 60_000, used: undefined, data: '' },
  );
}

async function expectOAuthError(promise: Promise<unknown>, code: OAuthErrorCode, description: RegExp) {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OAuthError);
  expect((error as OAuthError).error).toBe(code);
  expect((error as OAuthError).description).toMatch(description);
}

describe('register', () => {
  it('registers a public client and answers its registration', async () => {
    const { grants, clients } = setup();
    const registration = await clients.register(CLAUDE);
    expect(registration).toEqual({
      client_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      client_id_issued_at: 1_700_000_000,
      client_name: 'Claude',
      redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    expect(await grants.findClient(registration.client_id)).toEqual({
      id: registration.client_id,
      name: 'Claude',
      redirectUris: ['https://claude.ai/api/mcp/auth_callback'],
      created: 1_700_000_000_123,
      metadata: JSON.stringify(registration),
    });
    expect(await clients.resolve(registration.client_id)).toEqual({
      id: registration.client_id,
      kind: 'registered',
      name: 'Claude',
      redirectUris: ['https://claude.ai/api/mcp/auth_callback'],
    });
  });

  it('fills in the defaults: both grant types, code, public, and the redirect host as the name', async () => {
    const { clients } = setup();
    const registration = await clients.register({
      redirect_uris: ['https://chatgpt.com/connector_platform_oauth_redirect'],
    });
    expect(registration).toMatchObject({
      client_name: 'chatgpt.com',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    const native = await clients.register({ redirect_uris: ['com.example.app:/callback'], client_name: ' \n ' });
    expect(native.client_name).toBe('com.example.app');
  });

  it('registers a client asking for a client secret as a public client: method none, no secret (RFC 7591 lets it replace)', async () => {
    const { clients } = setup();
    for (const method of ['client_secret_post', 'client_secret_basic']) {
      const registration = await clients.register({ ...CLAUDE, token_endpoint_auth_method: method });
      expect(registration.token_endpoint_auth_method).toBe('none');
      expect(registration).not.toHaveProperty('client_secret');
    }
  });

  it('folds the name to one line and ignores metadata it does not know', async () => {
    const { clients } = setup();
    const registration = await clients.register({ ...CLAUDE, client_name: 'Claude\n\u202eCode', logo_uri: 'x' });
    expect(registration.client_name).toBe('Claude Code');
    expect(registration).not.toHaveProperty('logo_uri');
  });

  it('accepts https, loopback http and private-use schemes, up to 10 URIs of 2,000 characters', async () => {
    const { clients } = setup();
    const uris = [
      'https://a.example/cb?x=1',
      'http://127.0.0.1/callback',
      'http://localhost:3000/cb',
      'http://[::1]/cb',
      'com.example.app:/oauth',
      `https://b.example/${'x'.repeat(2_000 - 'https://b.example/'.length)}`,
      'https://c.example/1',
      'https://c.example/2',
      'https://c.example/3',
      'https://c.example/4',
    ];
    expect((await clients.register({ redirect_uris: uris })).redirect_uris).toEqual(uris);
  });

  it.each([
    ['no redirect_uris', {}, 'invalid_redirect_uri', /redirect_uris must be a list of 1-10/],
    ['an empty list', { redirect_uris: [] }, 'invalid_redirect_uri', /1-10/],
    [
      '11 URIs',
      { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) },
      'invalid_redirect_uri',
      /1-10/,
    ],
    ['a string', { redirect_uris: 'https://a.example/cb' }, 'invalid_redirect_uri', /1-10/],
    ['a number', { redirect_uris: [42] }, 'invalid_redirect_uri', /must be a string/],
    [
      '2,001 characters',
      { redirect_uris: [`https://a.example/${'x'.repeat(1_983)}`] },
      'invalid_redirect_uri',
      /longer than 2000/,
    ],
    ['a fragment', { redirect_uris: ['https://a.example/cb#x'] }, 'invalid_redirect_uri', /fragment/],
    ['a relative URI', { redirect_uris: ['/callback'] }, 'invalid_redirect_uri', /not an absolute URI/],
    ['http on a public host', { redirect_uris: ['http://a.example/cb'] }, 'invalid_redirect_uri', /use https/],
    ['http on a private address', { redirect_uris: ['http://192.168.1.2/cb'] }, 'invalid_redirect_uri', /use https/],
    ['javascript:', { redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri', /scheme "javascript:"/],
    ['data:', { redirect_uris: ['data:text/html,hi'] }, 'invalid_redirect_uri', /scheme "data:"/],
    ['a scheme without a dot', { redirect_uris: ['myapp:/cb'] }, 'invalid_redirect_uri', /private-use scheme/],
    [
      'credentials',
      { redirect_uris: ['https://user:pw@a.example/cb'] },
      'invalid_redirect_uri',
      /user name or password/,
    ],
    ['a space', { redirect_uris: ['https://a.example/c b'] }, 'invalid_redirect_uri', /percent-encode/],
    ['a newline', { redirect_uris: ['https://a.example/cb\n'] }, 'invalid_redirect_uri', /percent-encode/],
    [
      'a private key method',
      { ...CLAUDE, token_endpoint_auth_method: 'private_key_jwt' },
      'invalid_client_metadata',
      /public clients only.*"none"/,
    ],
    [
      'the implicit grant',
      { ...CLAUDE, grant_types: ['implicit'] },
      'invalid_client_metadata',
      /does not support "implicit"/,
    ],
    [
      'refresh_token alone',
      { ...CLAUDE, grant_types: ['refresh_token'] },
      'invalid_client_metadata',
      /must include "authorization_code"/,
    ],
    [
      'response type token',
      { ...CLAUDE, response_types: ['token'] },
      'invalid_client_metadata',
      /does not support "token"/,
    ],
    [
      'grant_types as a string',
      { ...CLAUDE, grant_types: 'authorization_code' },
      'invalid_client_metadata',
      /must be a list/,
    ],
    [
      'a name of 101 characters',
      { ...CLAUDE, client_name: 'x'.repeat(101) },
      'invalid_client_metadata',
      /at most 100 characters/,
    ],
    [
      'a name that is not a string',
      { ...CLAUDE, client_name: ['Claude'] },
      'invalid_client_metadata',
      /client_name must be a string/,
    ],
    ['an array', [CLAUDE], 'invalid_client_metadata', /JSON object/],
    ['null', null, 'invalid_client_metadata', /JSON object/],
  ] as const)('refuses %s and stores nothing', async (_, metadata, code, description) => {
    const { grants, clients } = setup();
    await expectOAuthError(clients.register(metadata), code, description);
    expect(await grants.countClients()).toBe(0);
  });

  it('accepts a name of 100 characters', async () => {
    const { clients } = setup();
    expect((await clients.register({ ...CLAUDE, client_name: 'é'.repeat(100) })).client_name).toBe('é'.repeat(100));
  });

  it('at the cap, the oldest registration no grant names gives way to the new one, however recent', async () => {
    const { grants, clients, advance } = setup({ maxRegistrations: 2 });
    const oldest = await clients.register(CLAUDE);
    advance(1);
    const second = await clients.register(CLAUDE);
    advance(1);
    const fresh = await clients.register(CLAUDE);
    expect(await grants.countClients()).toBe(2);
    expect(await grants.findClient(oldest.client_id)).toBeUndefined();
    expect(await grants.findClient(second.client_id)).toBeDefined();
    expect(await grants.findClient(fresh.client_id)).toBeDefined();
  });

  it('at the cap, never pushes out a client a grant names: the unused one after it gives way', async () => {
    const { grants, clients, advance } = setup({ maxRegistrations: 2 });
    const used = await clients.register(CLAUDE);
    await grantTo(grants, used.client_id, 'g1');
    advance(1);
    const unused = await clients.register(CLAUDE);
    for (let i = 0; i < 5; i++) await clients.register(CLAUDE);
    expect(await grants.countClients()).toBe(2);
    expect(await grants.findClient(used.client_id)).toBeDefined();
    expect(await grants.findClient(unused.client_id)).toBeUndefined();
  });

  it('at the cap, refuses when every client has a grant, keeping them all', async () => {
    const { grants, clients, advance } = setup({ maxRegistrations: 2 });
    for (const [at, registration] of [await clients.register(CLAUDE), await clients.register(CLAUDE)].entries()) {
      await grantTo(grants, registration.client_id, `g${at}`);
    }
    advance(UNUSED_CLIENT_AGE_MS + 1);
    await expectOAuthError(
      clients.register(CLAUDE),
      'temporarily_unavailable',
      /no more registrations for now \(it holds 2, each allowed by a user or shown on its consent page in the last 30 minutes\): try again later/,
    );
    expect(await grants.countClients()).toBe(2);
  });
});

describe('register: a flood at the cap and a person on the consent page', () => {
  const RESOURCE = 'https://e.example/mcp';

  /** Has /authorize show `clientId`'s consent page, as a person's browser would. */
  async function showConsentPage(clients: OAuthClients, grants: MemoryOAuthStore, clientId: string) {
    const authorization = new Authorization(grants, clients, { issuer: 'https://e.example', resource: RESOURCE });
    const result = await authorization.check({
      client_id: clientId,
      redirect_uri: CLAUDE.redirect_uris[0],
      response_type: 'code',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      resource: RESOURCE,
    });
    expect(result.kind).toBe('ok');
  }

  it(`cannot push out a client whose consent page was shown in the last ${CONSENT_SHOWN_MS / 60_000} minutes, however many register`, async () => {
    expect(CONSENT_SHOWN_MS).toBe(30 * 60_000);
    const { grants, clients, advance } = setup({ maxRegistrations: 10 });
    const app = await clients.register(CLAUDE);
    await showConsentPage(clients, grants, app.client_id);
    // One party registers a hundred times the cap while the person reads the page.
    for (let i = 0; i < 1_000; i++) {
      advance(1);
      await clients.register({ ...CLAUDE, client_name: `Flood ${i}` });
    }
    advance(CONSENT_SHOWN_MS - 1_001);
    await clients.register({ ...CLAUDE, client_name: 'Flood, last' });
    expect(await clients.removeUnused()).toBe(0);
    expect(await grants.countClients()).toBe(10);
    expect((await clients.resolve(app.client_id)).name).toBe('Claude');

    // Once its page has not been shown for longer than that, it is an unused registration like any other.
    advance(2);
    for (let i = 0; i < 10; i++) await clients.register({ ...CLAUDE, client_name: `Later ${i}` });
    expect(await grants.findClient(app.client_id)).toBeUndefined();
  });

  it('refuses a registration, for now, when every client is allowed or on its consent page', async () => {
    const { grants, clients, advance } = setup({ maxRegistrations: 2 });
    const used = await clients.register(CLAUDE);
    await grantTo(grants, used.client_id, 'g1');
    const deciding = await clients.register(CLAUDE);
    await showConsentPage(clients, grants, deciding.client_id);
    await expectOAuthError(clients.register(CLAUDE), 'temporarily_unavailable', /for now .* try again later/);
    expect(await grants.countClients()).toBe(2);
    advance(CONSENT_SHOWN_MS + 1);
    await clients.register(CLAUDE);
    expect(await grants.findClient(deciding.client_id)).toBeUndefined();
  });
});

describe('removeUnused', () => {
  it('keeps a client whose consent page was shown lately, however old its registration', async () => {
    const { grants, clients, advance } = setup();
    const deciding = await clients.register(CLAUDE);
    advance(UNUSED_CLIENT_AGE_MS);
    await clients.markShown(await clients.resolve(deciding.client_id));
    advance(1);
    expect(await clients.removeUnused()).toBe(0);
    advance(CONSENT_SHOWN_MS);
    expect(await clients.removeUnused()).toBe(1);
    expect(await grants.findClient(deciding.client_id)).toBeUndefined();
  });

  it('removes the clients no grant names that registered over an hour ago, and no other', async () => {
    expect(UNUSED_CLIENT_AGE_MS).toBe(60 * 60_000);
    const { grants, clients, advance } = setup();
    const unused = await clients.register(CLAUDE);
    const used = await clients.register(CLAUDE);
    await grantTo(grants, used.client_id, 'g1');
    advance(1);
    const recent = await clients.register(CLAUDE);
    advance(UNUSED_CLIENT_AGE_MS);
    expect(await clients.removeUnused()).toBe(1);
    expect(await grants.findClient(unused.client_id)).toBeUndefined();
    expect(await grants.findClient(used.client_id)).toBeDefined();
    expect(await grants.findClient(recent.client_id)).toBeDefined();
  });
});

describe('isKnown', () => {
  it('knows configured and registered clients and document URLs, fetching nothing; not one forgotten as unused', async () => {
    const { clients, fetched, advance } = setup({ documents: {} });
    const registered = await clients.register(CLAUDE);
    expect(await clients.isKnown('my-script')).toBe(true);
    expect(await clients.isKnown(registered.client_id)).toBe(true);
    expect(await clients.isKnown(DOCUMENT_URL)).toBe(true);
    expect(await clients.isKnown('nobody')).toBe(false);
    expect(fetched).toEqual([]);
    advance(UNUSED_CLIENT_AGE_MS + 1);
    expect(await clients.removeUnused()).toBe(1);
    expect(await clients.isKnown(registered.client_id)).toBe(false);
  });
});

describe('resolve', () => {
  it('finds a configured client first', async () => {
    const { clients } = setup();
    expect(await clients.resolve('my-script')).toBe(CONFIGURED);
  });

  it('refuses an unknown client as invalid_client, saying how to become known', async () => {
    const { clients } = setup();
    await expectOAuthError(
      clients.resolve('nobody'),
      'invalid_client',
      /no client has the id "nobody": register first/,
    );
    await expectOAuthError(clients.resolve(''), 'invalid_client', /no client has the id ""/);
  });

  it('refuses a document URL when no fetcher is configured', async () => {
    const { clients } = setup();
    await expectOAuthError(clients.resolve(DOCUMENT_URL), 'invalid_client', /does not fetch client metadata documents/);
  });

  describe('client metadata documents', () => {
    const document = {
      client_id: DOCUMENT_URL,
      client_name: 'Example App',
      redirect_uris: ['https://app.example.com/callback'],
      token_endpoint_auth_method: 'none',
    };

    it('fetches, checks and caches a document for five minutes', async () => {
      const { clients, fetched, advance } = setup({ documents: { [DOCUMENT_URL]: document } });
      const expected = {
        id: DOCUMENT_URL,
        kind: 'metadata-document',
        name: 'Example App',
        redirectUris: ['https://app.example.com/callback'],
      };
      expect(await clients.resolve(DOCUMENT_URL)).toEqual(expected);
      advance(5 * 60_000 - 1);
      expect(await clients.resolve(DOCUMENT_URL)).toEqual(expected);
      expect(fetched).toEqual([DOCUMENT_URL]);
      advance(1);
      await clients.resolve(DOCUMENT_URL);
      expect(fetched).toEqual([DOCUMENT_URL, DOCUMENT_URL]);
    });

    it('fetches once for concurrent requests', async () => {
      const { clients, fetched } = setup({ documents: { [DOCUMENT_URL]: document } });
      await Promise.all([clients.resolve(DOCUMENT_URL), clients.resolve(DOCUMENT_URL)]);
      expect(fetched).toEqual([DOCUMENT_URL]);
    });

    it(`fetches at most ${MAX_DOCUMENT_FETCHES} documents at once, refusing more until one is done`, async () => {
      const grants = new MemoryOAuthStore(anyoneHasAnAccount);
      const waiting: (() => void)[] = [];
      const clients = new OAuthClients(grants, {
        fetchDocument: (url: URL) =>
          new Promise((resolve) => waiting.push(() => resolve({ ...document, client_id: url.href }))),
      });
      const url = (i: number) => `https://app${i}.example.com/client.json`;
      const pending = Array.from({ length: MAX_DOCUMENT_FETCHES }, (_, i) => clients.resolve(url(i)));
      await vi.waitFor(() => expect(waiting).toHaveLength(MAX_DOCUMENT_FETCHES));
      await expectOAuthError(clients.resolve(url(99)), 'temporarily_unavailable', /try again in a few seconds/);
      for (const finish of waiting) finish();
      expect(await Promise.all(pending)).toHaveLength(MAX_DOCUMENT_FETCHES);
      const later = clients.resolve(url(99));
      await vi.waitFor(() => expect(waiting).toHaveLength(MAX_DOCUMENT_FETCHES + 1));
      waiting.at(-1)?.();
      expect((await later).id).toBe(url(99));
    });

    it('names the client after the host when the document gives no name', async () => {
      const { client_name: _, ...unnamed } = document;
      const { clients } = setup({ documents: { [DOCUMENT_URL]: unnamed } });
      expect((await clients.resolve(DOCUMENT_URL)).name).toBe('app.example.com');
    });

    it.each([
      [
        'a client_id of another URL',
        { ...document, client_id: 'https://evil.example/client.json' },
        /client_id "https:\/\/evil.example\/client.json" must be exactly the URL/,
      ],
      ['no client_id', { ...document, client_id: undefined }, /client_id undefined must be exactly/],
      ['a bad redirect URI', { ...document, redirect_uris: ['http://app.example.com/cb'] }, /use https/],
      ['a private key method', { ...document, token_endpoint_auth_method: 'private_key_jwt' }, /public clients only/],
      [
        'a client secret method',
        { ...document, token_endpoint_auth_method: 'client_secret_post' },
        /public clients only/,
      ],
      ['not an object', 'hello', /must be a JSON object/],
    ])('refuses a document with %s, and does not cache it', async (_, body, description) => {
      const { clients, fetched } = setup({ documents: { [DOCUMENT_URL]: body } });
      await expectOAuthError(clients.resolve(DOCUMENT_URL), 'invalid_client', description);
      await expectOAuthError(clients.resolve(DOCUMENT_URL), 'invalid_client', /cannot be used/);
      expect(fetched).toHaveLength(2);
    });

    it('refuses when the fetch fails, with its reason', async () => {
      const { clients } = setup({ documents: {} });
      await expectOAuthError(
        clients.resolve(DOCUMENT_URL),
        'invalid_client',
        /^the client metadata document at https:\/\/app.example.com\/oauth\/client.json cannot be used: the server answered 404$/,
      );
    });

    it('refuses when the fetch fails otherwise, without passing its text on (it may name internal addresses)', async () => {
      const { clients } = setup({ documents: {} });
      const error = await clients.resolve(FAILING_URL).catch((caught: unknown) => caught as OAuthError);
      expect(error).toMatchObject({
        error: 'invalid_client',
        description: `the client metadata document at ${FAILING_URL} cannot be used: it could not be fetched.`,
      });
    });

    it.each([
      'http://app.example.com/client.json',
      'https://app.example.com/',
      'https://app.example.com/client.json#x',
      'https://user@app.example.com/client.json',
      'https://APP.example.com/client.json',
      'https://app.example.com/a/../client.json',
    ])('never fetches %s, which cannot name a document', async (id) => {
      const { clients, fetched } = setup({ documents: {} });
      await expectOAuthError(clients.resolve(id), 'invalid_client', /register first/);
      expect(fetched).toEqual([]);
    });
  });
});

describe('matchRedirectUri', () => {
  const client: OAuthClient = {
    id: 'c',
    kind: 'registered',
    name: 'c',
    redirectUris: [
      'https://a.example/cb',
      'http://127.0.0.1/callback',
      'http://localhost:8080/cb?x=1',
      'http://[::1]/cb',
    ],
  };

  it.each([
    ['https://a.example/cb', true],
    ['https://a.example/cb/', false],
    ['https://a.example/cb?x=1', false],
    ['https://A.example/cb', false],
    ['https://a.example:443/cb', false],
    ['https://a.example:8443/cb', false],
    ['http://127.0.0.1/callback', true],
    ['http://127.0.0.1:53124/callback', true],
    ['http://127.0.0.1:53124/other', false],
    ['http://127.0.0.2:53124/callback', false],
    ['http://localhost:53124/callback', false],
    ['http://localhost:1/cb?x=1', true],
    ['http://localhost:1/cb', false],
    ['http://[::1]:9/cb', true],
    ['http://127.0.0.1:53124/callback#x', false],
    ['https://127.0.0.1:53124/callback', false],
  ])('%s → %s', (uri, matches) => {
    const { clients } = setup();
    expect(clients.matchRedirectUri(client, uri)).toBe(matches);
  });
});
