/**
 * A flood of registrations cannot lock real apps out (issue #25): one party that fills the
 * registration cap from many addresses only pushes out its own unused registrations, so a
 * real-shaped client (Claude's metadata) still registers afterwards and completes the whole
 * flow (consent page, Allow, code exchange, a tool call), and a client a user already
 * allowed survives the flood, as does one whose consent page a person has open (they allow
 * it after the flood). One party with one IPv6 /64 is slowed down as one address.
 * The server keeps answering others within the held-loop bound while the flood runs.
 */

import { beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/access/accounts/passwords.js';
import { HELD_LOOP_MS, withEventLoopDelay } from '../helpers/event-loop.js';
import { TEST_PASSWORD_COST } from '../helpers/password-cost.js';
import { JSON_HEADERS, raw, rpc, rpcMessage } from './fixtures.js';
import { CHALLENGE, type OAuthTestServer, postForm, postJson, startOAuthServer, VERIFIER } from './oauth-fixtures.js';

const PASSWORD = 'correct horse battery';
const CLAUDE_CALLBACK = 'https://claude.ai/api/mcp/auth_callback';
const CLAUDE = {
  client_name: 'Claude',
  redirect_uris: [CLAUDE_CALLBACK],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
};
const CAP = 20;

let passwordHash: string;
beforeAll(async () => {
  passwordHash = await hashPassword(PASSWORD, TEST_PASSWORD_COST);
});

async function start(): Promise<OAuthTestServer> {
  const server = await startOAuthServer({ maxRegistrations: CAP, trustProxy: true });
  await server.store.accounts.put({ user: 'alice', passwordHash, created: 1, updated: 1 });
  return server;
}

async function register(server: OAuthTestServer, from: string, metadata: unknown = CLAUDE) {
  return postJson(server.port, '/register', metadata, { 'X-Forwarded-For': from });
}

/** Registers as Claude does, then goes through consent (Allow as alice) and the code exchange; the access token. */
async function connect(server: OAuthTestServer, from: string): Promise<{ clientId: string; accessToken: string }> {
  const clientId = await registered(server, from);
  return allow(server, clientId, await openConsentPage(server, clientId));
}

/** Registers as Claude does; its client id. */
async function registered(server: OAuthTestServer, from: string): Promise<string> {
  const answer = await register(server, from);
  expect(answer.status).toBe(201);
  return JSON.parse(answer.body).client_id;
}

interface ConsentPage {
  readonly hidden: [string, string][];
  readonly cookie: string;
}

/** Opens the consent page for the client, as a person's browser does. */
async function openConsentPage(server: OAuthTestServer, clientId: string): Promise<ConsentPage> {
  const params = new URLSearchParams({
    client_id: clientId,
    redirect_uri: CLAUDE_CALLBACK,
    response_type: 'code',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: 's1',
  });
  const page = await raw(server.port, { path: `/authorize?${params}`, headers: { Host: `127.0.0.1:${server.port}` } });
  expect(page.status).toBe(200);
  const hidden = [...page.body.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map(
    (match): [string, string] => [
      match[1] ?? '',
      (match[2] ?? '').replace(/&#(\d+);/g, (_, c) => String.fromCharCode(+c)),
    ],
  );
  const cookie = (page.headers['set-cookie'] ?? []).map((line) => line.split(';')[0]).join('; ');
  return { hidden, cookie };
}

/** Allows the app on its consent page as alice, then exchanges the code; the access token. */
async function allow(
  server: OAuthTestServer,
  clientId: string,
  { hidden, cookie }: ConsentPage,
): Promise<{ clientId: string; accessToken: string }> {
  const allowed = await raw(server.port, {
    method: 'POST',
    path: '/authorize',
    headers: {
      Host: `127.0.0.1:${server.port}`,
      'Content-Type': 'application/x-www-form-urlencoded',
      Origin: server.origin,
      'Sec-Fetch-Site': 'same-origin',
      Cookie: cookie,
    },
    body: new URLSearchParams([...hidden, ['user', 'alice'], ['password', PASSWORD], ['decision', 'allow']]).toString(),
  });
  expect(allowed.status).toBe(303);
  const code = new URL(allowed.headers.location ?? '').searchParams.get('code') ?? '';
  const exchanged = await postForm(server.port, '/token', {
    grant_type: 'authorization_code',
    code,
    redirect_uri: CLAUDE_CALLBACK,
    client_id: clientId,
    code_verifier: VERIFIER,
  });
  expect(exchanged.status).toBe(200);
  return { clientId, accessToken: JSON.parse(exchanged.body).access_token };
}

async function toolsList(server: OAuthTestServer, accessToken: string) {
  const answer = await raw(server.port, {
    method: 'POST',
    path: '/mcp',
    headers: { ...JSON_HEADERS, Authorization: `Bearer ${accessToken}` },
    body: rpc('tools/list'),
  });
  expect(answer.status).toBe(200);
  return rpcMessage(answer).result;
}

describe('a flood of registrations', () => {
  it('from many addresses pushes out only its own unused registrations: a real app still connects, a used one stays', async () => {
    const server = await start();
    const used = await connect(server, '198.51.100.1');

    const { maxDelayMs } = await withEventLoopDelay(async () => {
      for (let i = 0; i < CAP * 5; i++) {
        const flood = await register(server, `203.0.113.${i % 250}`, { redirect_uris: ['https://evil.example/cb'] });
        expect(flood.status).toBe(201);
      }
      expect((await raw(server.port, { path: '/healthz' })).status).toBe(200);
    });
    expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
    expect(await server.store.oauth.countClients()).toBe(CAP);

    const fresh = await connect(server, '192.0.2.10');
    expect(fresh.clientId).not.toBe(used.clientId);
    expect(await server.store.oauth.findClient(used.clientId)).toBeDefined();
    expect(await toolsList(server, used.accessToken)).toBeDefined();
    expect(await toolsList(server, fresh.accessToken)).toBeDefined();
  });

  it('cannot push out an app whose consent page a person has open: they allow it after the flood, and it connects', async () => {
    const server = await start();
    const clientId = await registered(server, '198.51.100.1');
    const page = await openConsentPage(server, clientId);

    // While the person reads the page and types their password, someone registers five times the cap.
    for (let i = 0; i < CAP * 5; i++) {
      const flood = await register(server, `203.0.113.${i % 250}`, { redirect_uris: ['https://evil.example/cb'] });
      expect(flood.status).toBe(201);
    }
    expect(await server.store.oauth.countClients()).toBe(CAP);

    const app = await allow(server, clientId, page);
    expect(await toolsList(server, app.accessToken)).toBeDefined();
  });

  it('is refused only when every registration was allowed by a user', async () => {
    const server = await startOAuthServer({ maxRegistrations: 1, trustProxy: true });
    await server.store.accounts.put({ user: 'alice', passwordHash, created: 1, updated: 1 });
    await connect(server, '198.51.100.1');
    const refused = await register(server, '192.0.2.10');
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body).error_description).toMatch(/it holds 1, each allowed by a user/);
    expect(await server.store.oauth.countClients()).toBe(1);
  });

  it('from the addresses of one IPv6 /64 counts as one address: slowed down after ten', async () => {
    const server = await start();
    for (let i = 1; i <= 10; i++) expect((await register(server, `2001:db8:1:2::${i}`)).status).toBe(201);
    const refused = await register(server, '2001:db8:1:2:ffff::99');
    expect(refused.status).toBe(429);
    expect((await register(server, '2001:db8:1:3::1')).status).toBe(201);
  });
});
