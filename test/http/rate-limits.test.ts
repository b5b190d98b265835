/**
 * The rate limits of `engram serve` at every door, on a fake clock (vitest's, Date only):
 * past a limit each door answers 429 with Retry-After and the RateLimit fields, in its
 * reader's shape (a JSON-RPC error on /mcp and /ws, the REST error on /api and sign-in,
 * OAuth's error on /token and /register, a page on /authorize); a new window lets requests
 * through again; tokens, addresses and users count apart; and a loopback server without
 * auth holds no per-token limit by default.
 */

import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { WebSocket } from 'ws';
import { resolveRateLimits } from '../../src/access/rate-limits/rules.js';
import { JSON_HEADERS, postRpc, type RawResponse, raw, rpc, rpcMessage, startTestServer } from './fixtures.js';
import { CLIENT_ID, postForm, postJson, REDIRECT_URI, startOAuthServer } from './oauth-fixtures.js';

const START = Date.UTC(2026, 0, 1);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(START);
});
afterEach(() => {
  vi.useRealTimers();
});

function expectLimited(response: RawResponse, policy: string, quota: number, window: number, wait: number) {
  expect(response.status).toBe(429);
  expect(response.headers['retry-after']).toBe(String(wait));
  expect(response.headers['ratelimit-policy']).toBe(`"${policy}";q=${quota};w=${window}`);
  expect(response.headers.ratelimit).toBe(`"${policy}";r=0;t=${wait}`);
}

async function tokenServer(rateLimit: string) {
  const server = await startTestServer({ auth: 'token', rateLimit, trustProxy: true });
  const token = async () => (await server.access.create({ user: 'ada', label: 'assistant' })).token;
  return { server, token };
}

describe('/mcp', () => {
  it('refuses a token past its limit with a JSON-RPC error the model reads, until the window ends', async () => {
    const { server, token } = await tokenServer('mcp=2/min');
    const [mine, other] = [await token(), await token()];
    const call = (secret: string) => postRpc(server.port, rpc('tools/list'), { Authorization: `Bearer ${secret}` });
    expect((await call(mine)).status).toBe(200);
    vi.setSystemTime(START + 15_000);
    expect((await call(mine)).status).toBe(200);
    const refused = await call(mine);
    expectLimited(refused, 'mcp', 2, 60, 45);
    expect(rpcMessage(refused).error).toEqual({
      code: -32000,
      message:
        'Rate limited: this connection has sent more than the server allows (2 MCP requests a minute), so this ' +
        'call was not carried out. Wait 45 seconds, then call again; repeating the call sooner is refused the same way.',
    });
    // Another token of the same user counts apart.
    expect((await call(other)).status).toBe(200);
    vi.setSystemTime(START + 60_000);
    expect((await call(mine)).status).toBe(200);
  });

  it('counts nothing on loopback without auth by default, however many calls a model makes', async () => {
    expect(resolveRateLimits('none', [])).toMatchObject({ mcp: undefined, api: undefined });
    const server = await startTestServer({ rateLimit: 'auth=on' });
    for (let i = 0; i < 30; i++) expect((await postRpc(server.port, rpc('tools/list'))).status).toBe(200);
  });

  it('counts a server without auth per client address when turned on', async () => {
    const server = await startTestServer({ rateLimit: 'on,mcp=1/min', trustProxy: true });
    const from = (address: string) => postRpc(server.port, rpc('tools/list'), { 'X-Forwarded-For': address });
    expect((await from('192.0.2.1')).status).toBe(200);
    expectLimited(await from('192.0.2.1'), 'mcp', 1, 60, 60);
    expect((await from('192.0.2.2')).status).toBe(200);
  });
});

describe('/ws', () => {
  it('answers a message past the limit with a JSON-RPC error and keeps the socket; /mcp shares the count', async () => {
    const { server, token } = await tokenServer('mcp=3/min');
    const secret = await token();
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}/ws?access_token=${secret}`, ['mcp']);
    onTestFinished(() => socket.terminate());
    const answers: { id: number; result?: unknown; error?: { code: number; message: string } }[] = [];
    const arrived = (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => (answers.length >= count ? resolve() : setTimeout(check, 5));
        check();
      });
    socket.on('message', (data) => answers.push(JSON.parse(data.toString())));
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    expect((await postRpc(server.port, rpc('tools/list'), { Authorization: `Bearer ${secret}` })).status).toBe(200);
    for (const id of [1, 2, 3]) socket.send(rpc('ping', undefined, id));
    await arrived(3);
    expect(answers.map((answer) => answer.id)).toEqual([1, 2, 3]);
    expect(answers[0]?.result).toEqual({});
    expect(answers[1]?.result).toEqual({});
    expect(answers[2]?.error?.code).toBe(-32000);
    expect(answers[2]?.error?.message).toMatch(
      /^Rate limited: .* \(3 MCP requests a minute\).* Wait 60 seconds, then call again/,
    );
    vi.setSystemTime(START + 60_000);
    socket.send(rpc('ping', undefined, 4));
    await arrived(4);
    expect(answers[3]).toMatchObject({ id: 4, result: {} });
    expect(socket.readyState).toBe(WebSocket.OPEN);
  });
});

describe('/api', () => {
  it('refuses a token past its limit in the REST error shape', async () => {
    const { server, token } = await tokenServer('api=1/min');
    const secret = await token();
    const list = () => raw(server.port, { path: '/api/entries', headers: { Authorization: `Bearer ${secret}` } });
    expect((await list()).status).toBe(200);
    const refused = await list();
    expectLimited(refused, 'api', 1, 60, 60);
    expect(JSON.parse(refused.body)).toEqual({
      error: {
        code: 'RATE_LIMITED',
        message:
          'Too many requests: this token or browser has sent more than the server allows (1 API request a minute). ' +
          'Wait 60 seconds, then try again.',
      },
    });
  });
});

describe('signing in to the web UI', () => {
  it('counts per address and per user, each apart, answering the web UI a message it shows', async () => {
    const { server } = await tokenServer('auth=3/min,sign-in=2/min');
    const origin = `http://127.0.0.1:${server.port}`;
    const signIn = (user: string, address: string) =>
      raw(server.port, {
        method: 'POST',
        path: '/api/session',
        headers: {
          ...JSON_HEADERS,
          Origin: origin,
          'X-Engram-CSRF': '1',
          'X-Forwarded-For': address,
        },
        body: JSON.stringify({ user, password: 'wrong password' }),
      });
    expect((await signIn('alice', '192.0.2.1')).status).toBe(401);
    expect((await signIn('Alice', '192.0.2.1')).status).toBe(401);
    // The third sign-in as alice is refused, from any address.
    const asAlice = await signIn('alice', '192.0.2.1');
    expectLimited(asAlice, 'sign-in', 2, 60, 60);
    expect(JSON.parse(asAlice.body).error).toEqual({
      code: 'RATE_LIMITED',
      message:
        'Too many failed sign-ins as this user (the server takes 2 failed sign-ins per user a minute). Wait 60 seconds, then sign in again.',
    });
    expect((await signIn('alice', '192.0.2.2')).status).toBe(429);
    // The first address has made its three requests: bob is refused from it, not from another.
    const fromFirst = await signIn('bob', '192.0.2.1');
    expectLimited(fromFirst, 'auth', 3, 60, 60);
    expect(JSON.parse(fromFirst.body).error.message).toBe(
      'Too many sign-in attempts from this address (the server takes 3 requests per address a minute). Wait 60 seconds, then sign in again.',
    );
    expect((await signIn('bob', '192.0.2.3')).status).toBe(401);
    vi.setSystemTime(START + 60_000);
    expect((await signIn('alice', '192.0.2.1')).status).toBe(401);
  });
});

describe('the per-user sign-in limit counts failed sign-ins only', () => {
  const PASSWORD = 'correct horse battery staple';

  async function webSignIn(rateLimit: string) {
    const { server } = await tokenServer(rateLimit);
    await server.accounts.create('admin', PASSWORD);
    const origin = `http://127.0.0.1:${server.port}`;
    return (password: string, address: string) =>
      raw(server.port, {
        method: 'POST',
        path: '/api/session',
        headers: { ...JSON_HEADERS, Origin: origin, 'X-Engram-CSRF': '1', 'X-Forwarded-For': address },
        body: JSON.stringify({ user: 'admin', password }),
      });
  }

  it('lets a correct password through uncounted, and refuses every sign-in while the failures are over the limit', async () => {
    const signIn = await webSignIn('auth=100/min,sign-in=2/min');
    for (let i = 0; i < 4; i++) expect((await signIn(PASSWORD, '192.0.2.1')).status).toBe(200);
    expect((await signIn('wrong', '192.0.2.9')).status).toBe(401);
    expect((await signIn(PASSWORD, '192.0.2.1')).status).toBe(200);
    expect((await signIn('wrong', '192.0.2.9')).status).toBe(401);
    // Two failures: the limit is reached, and no password is checked until the window ends.
    expectLimited(await signIn(PASSWORD, '192.0.2.1'), 'sign-in', 2, 60, 60);
    vi.setSystemTime(START + 60_000);
    expect((await signIn(PASSWORD, '192.0.2.1')).status).toBe(200);
  });

  it('counts nothing against the user for a sign-in its address was refused', async () => {
    const signIn = await webSignIn('auth=1/min,sign-in=2/min');
    expect((await signIn('wrong', '192.0.2.9')).status).toBe(401);
    for (let i = 0; i < 5; i++) expectLimited(await signIn('wrong', '192.0.2.9'), 'auth', 1, 60, 60);
    expect((await signIn(PASSWORD, '192.0.2.1')).status).toBe(200);
  });
});

describe('the OAuth endpoints', () => {
  it('refuse an address past its limit on /token and /register in OAuth’s shape, and /authorize with a page', async () => {
    const server = await startOAuthServer({ rateLimit: 'auth=2/min', trustProxy: true });
    const from = (address: string) => ({ 'X-Forwarded-For': address });
    const token = (address: string) => postForm(server.port, '/token', { grant_type: 'refresh_token' }, from(address));
    expect((await token('192.0.2.1')).status).toBe(400);
    expect((await token('192.0.2.1')).status).toBe(400);
    const refused = await token('192.0.2.1');
    expectLimited(refused, 'auth', 2, 60, 60);
    expect(JSON.parse(refused.body)).toEqual({
      error: 'too_many_requests',
      error_description:
        'too many requests from this address to the sign-in and token endpoints: the server takes 2 requests per ' +
        'address a minute. Try again in 60 seconds.',
    });
    expect(refused.headers['cache-control']).toBe('no-store');
    // /register and /authorize share the address's count.
    const registered = await postJson(server.port, '/register', { redirect_uris: [] }, from('192.0.2.1'));
    expectLimited(registered, 'auth', 2, 60, 60);
    expect(JSON.parse(registered.body).error).toBe('too_many_requests');
    const page = await raw(server.port, { path: '/authorize?client_id=x', headers: from('192.0.2.1') });
    expectLimited(page, 'auth', 2, 60, 60);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('Too many attempts');
    expect(page.body).toContain('Try again in 60 seconds.');
    // Another address counts apart; the window's end lets the first in again.
    expect((await token('192.0.2.2')).status).toBe(400);
    vi.setSystemTime(START + 60_000);
    expect((await token('192.0.2.1')).status).toBe(400);
  });
});

describe('the consent page’s sign-in', () => {
  it('counts sign-ins per user named, whatever the address, and answers a page saying how long to wait', async () => {
    const server = await startOAuthServer({ rateLimit: 'sign-in=1/min', trustProxy: true });
    const query = new URLSearchParams({
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      scope: 'memory:read memory:write',
      state: 's',
    });
    /** Opens the consent page and sends its form as `user`, with `password` (a wrong one unless told), from `address`. */
    const signIn = async (user: string, address: string, password = 'wrong password') => {
      const page = await raw(server.port, { path: `/authorize?${query}`, headers: { 'X-Forwarded-For': address } });
      expect(page.status).toBe(200);
      const hidden = [...page.body.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map(
        (match): [string, string] => [
          match[1]!,
          match[2]!.replace(/&#(\d+);/g, (_, code) => String.fromCharCode(code)),
        ],
      );
      const cookie = (page.headers['set-cookie'] ?? []).map((line) => line.split(';')[0]).join('; ');
      return raw(server.port, {
        method: 'POST',
        path: '/authorize',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Origin: server.origin,
          'Sec-Fetch-Site': 'same-origin',
          Cookie: cookie,
          'X-Forwarded-For': address,
        },
        body: new URLSearchParams([
          ...hidden,
          ['user', user],
          ['password', password],
          ['decision', 'allow'],
        ]).toString(),
      });
    };
    const first = await signIn('alice', '192.0.2.1');
    expect(first.status).toBe(400);
    expect(first.body).toContain('Wrong user name or password.');
    const refused = await signIn('Alice', '192.0.2.2');
    expectLimited(refused, 'sign-in', 1, 60, 60);
    expect(refused.body).toContain(
      'Too many failed sign-ins as this user: the server takes 1 failed sign-in per user a minute. Try again in 60 seconds.',
    );
    expect((await signIn('bob', '192.0.2.2')).status).toBe(400);
    // Once the window has ended, a correct password is let through and not counted; a wrong one fills the limit again.
    await server.accounts.create('alice', 'correct horse battery staple');
    vi.setSystemTime(START + 60_000);
    for (const address of ['192.0.2.1', '192.0.2.2']) {
      expect((await signIn('alice', address, 'correct horse battery staple')).status).toBe(303);
    }
    expect((await signIn('alice', '192.0.2.3')).status).toBe(400);
    expectLimited(await signIn('alice', '192.0.2.1', 'correct horse battery staple'), 'sign-in', 1, 60, 60);
  });
});
