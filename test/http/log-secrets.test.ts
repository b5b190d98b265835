/**
 * What `engram serve` logs never carries a secret or memory text: a whole session — a
 * token, OAuth with a person signing in on the consent page (a wrong password first),
 * the code and its exchange (with a client secret the app sends anyway), a refresh, MCP
 * writes and opens of distinctive bodies, REST calls with a signed-in browser's cookie, a
 * WebSocket whose token rides in its URL — is run with the log captured, in JSON and in
 * the human format, and the whole log is searched for every secret and text it used.
 */

import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { main } from '../../src/cli/program.js';
import { runInProcess, serveInProcess } from '../cli/fixtures.js';
import { childEnv, tempDir } from '../helpers/engram.js';
import { TEST_PASSWORD_COST } from '../helpers/password-cost.js';
import { postRpc, type RawResponse, raw, rpc } from './fixtures.js';

const REDIRECT_URI = 'https://claude.ai/api/mcp/auth_callback';
const CLIENT_ID = 'claude-app';

/** A distinctive word, so that a hit in the log can only come from where it was used. */
const distinctive = (what: string) => `${what}-${randomBytes(8).toString('hex')}`;

function cookiesOf(response: RawResponse): string[] {
  return (response.headers['set-cookie'] ?? []).map((cookie) => cookie.split(';')[0] ?? '');
}

function hiddenFields(html: string): [string, string][] {
  return [...html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((match) => [
    (match[1] ?? '').replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))),
    (match[2] ?? '').replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))),
  ]);
}

/** Runs the whole session against a server logging in `format`; returns its log and every secret and text used. */
async function session(format: 'json' | 'human'): Promise<{ log: string; secrets: Record<string, string> }> {
  const dir = tempDir();
  const db = dir.file('memory.db');
  const config = dir.config({ clients: [{ id: CLIENT_ID, name: 'Claude', redirectUris: [REDIRECT_URI] }] });
  const env = childEnv(dir.path, { ENGRAM_LOG_FORMAT: format });
  const password = distinctive('password');
  const added = await runInProcess(
    ['user', 'add', 'alice', '--password-stdin', '--db', db, '--config', config],
    env,
    password,
    {
      passwordCost: TEST_PASSWORD_COST,
    },
  );
  expect(added.code).toBe(0);
  const created = await runInProcess(
    ['token', 'create', '--user', 'alice', '--label', 'laptop', '--json', '--db', db, '--config', config],
    env,
  );
  const staticToken = (JSON.parse(created.stdout) as { token: string }).token;
  const served = serveInProcess(
    main,
    ['--json', '--db', db, '--config', config, '--auth', 'oauth', '--port', '0'],
    env,
  );
  const port = Number(new URL(await served.listening).port);
  const host = { Host: `127.0.0.1:${port}` };
  const secrets: Record<string, string> = { password, staticToken };

  // OAuth: the consent page, a wrong password, then the right one; the code and its exchange; a refresh.
  const verifier = distinctive('verifier-of-enough-length-43-characters-or-more');
  const state = distinctive('state');
  const query = new URLSearchParams({
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    scope: 'memory:read memory:write',
    state,
  });
  const page = await raw(port, { path: `/authorize?${query}`, headers: host });
  expect(page.status).toBe(200);
  const fields = hiddenFields(page.body);
  const cookie = cookiesOf(page).join('; ');
  const csrf = fields.find(([name]) => name === 'csrf')?.[1] ?? '';
  Object.assign(secrets, { verifier, state, csrf, consentCookie: cookie.split('=').slice(1).join('=') });
  const consent = (typed: string) =>
    raw(port, {
      method: 'POST',
      path: '/authorize',
      headers: {
        ...host,
        'Content-Type': 'application/x-www-form-urlencoded',
        Origin: `http://127.0.0.1:${port}`,
        'Sec-Fetch-Site': 'same-origin',
        Cookie: cookie,
      },
      body: new URLSearchParams([...fields, ['user', 'alice'], ['password', typed], ['decision', 'allow']]).toString(),
    });
  const wrongPassword = distinctive('wrong-password');
  secrets.wrongPassword = wrongPassword;
  expect((await consent(wrongPassword)).status).not.toBe(303);
  const allowed = await consent(password);
  expect(allowed.status).toBe(303);
  const code = new URL(allowed.headers.location ?? '').searchParams.get('code') ?? '';
  secrets.code = code;
  const clientSecret = distinctive('client-secret');
  secrets.clientSecret = clientSecret;
  const form = (params: Record<string, string>) =>
    raw(port, {
      method: 'POST',
      path: '/token',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    });
  const exchanged = await form({
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    client_id: CLIENT_ID,
    code_verifier: verifier,
    client_secret: clientSecret,
  });
  expect(exchanged.status).toBe(200);
  const first = JSON.parse(exchanged.body) as { access_token: string; refresh_token: string };
  const refreshed = await form({
    grant_type: 'refresh_token',
    refresh_token: first.refresh_token,
    client_id: CLIENT_ID,
  });
  expect(refreshed.status).toBe(200);
  const second = JSON.parse(refreshed.body) as { access_token: string; refresh_token: string };
  Object.assign(secrets, {
    accessToken: first.access_token,
    refreshToken: first.refresh_token,
    accessToken2: second.access_token,
    refreshToken2: second.refresh_token,
  });

  // MCP writes and opens, with the app's token and with the static one.
  const texts = {
    oauthBody: distinctive('body-written-by-the-app'),
    oauthDescription: distinctive('description'),
    tokenBody: distinctive('body-written-with-a-token'),
    restBody: distinctive('body-written-over-rest'),
    restDescription: distinctive('rest-description'),
    wsBody: distinctive('body-written-over-websocket'),
    searchWord: distinctive('searched'),
  };
  Object.assign(secrets, texts);
  const mcp = (token: string, name: string, args: Record<string, unknown>) =>
    postRpc(port, rpc('tools/call', { name, arguments: args }), { Authorization: `Bearer ${token}` });
  for (const response of [
    await mcp(second.access_token, 'memory_write', {
      name: 'topics/app',
      description: texts.oauthDescription,
      new: texts.oauthBody,
    }),
    await mcp(second.access_token, 'memory_open', { names: ['topics/app'] }),
    await mcp(staticToken, 'memory_write', { name: 'topics/token', description: 'From a token', new: texts.tokenBody }),
    await mcp(staticToken, 'memory_open', { names: ['topics/token', 'topics/app'] }),
  ])
    expect(response.status).toBe(200);

  // REST: the web UI's sign-in (its session cookie), reads and a write; a token's search.
  const signIn = await raw(port, {
    method: 'POST',
    path: '/api/session',
    headers: { ...host, 'Content-Type': 'application/json', Origin: `http://127.0.0.1:${port}`, 'X-Engram-Csrf': '1' },
    body: JSON.stringify({ user: 'alice', password }),
  });
  expect(signIn.status).toBe(200);
  const sessionCookie = cookiesOf(signIn).join('; ');
  secrets.sessionCookie = sessionCookie.split('=').slice(1).join('=');
  const browser = { ...host, Cookie: sessionCookie, 'X-Engram-Csrf': '1', Origin: `http://127.0.0.1:${port}` };
  const written = await raw(port, {
    method: 'POST',
    path: '/api/entries',
    headers: { ...browser, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      name: 'topics/rest',
      description: texts.restDescription,
      body: `${texts.restBody} ${texts.searchWord}`,
    }),
  });
  expect(written.status).toBe(201);
  expect((await raw(port, { path: '/api/entries/topics/rest', headers: browser })).status).toBe(200);
  const search = await raw(port, {
    path: `/api/search?q=${texts.searchWord}`,
    headers: { Authorization: `Bearer ${staticToken}` },
  });
  expect(search.status).toBe(200);

  // A WebSocket, its token in the URL as browsers must send it; one write, then closed.
  const socket = new WebSocket(`ws://127.0.0.1:${port}/ws?access_token=${staticToken}`, ['mcp']);
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const answered = new Promise((resolve) => socket.once('message', resolve));
  socket.send(
    rpc('tools/call', {
      name: 'memory_write',
      arguments: { name: 'topics/ws', description: 'Over a socket', new: texts.wsBody },
    }),
  );
  await answered;
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.close();
  await closed;

  // An id the proxy in front sent is kept, for its log and this one to meet.
  const traced = await raw(port, { path: '/healthz', headers: { 'X-Request-Id': 'proxy-trace-42' } });
  expect(traced.headers['x-request-id']).toBe('proxy-trace-42');

  served.stop('SIGTERM');
  expect(await served.exited).toBe(0);
  return { log: served.out.stderr, secrets };
}

function expectNoSecret(log: string, secrets: Record<string, string>): void {
  for (const [what, secret] of Object.entries(secrets)) {
    expect(secret.length, what).toBeGreaterThan(8);
    expect(log.includes(secret), `the log holds the ${what}`).toBe(false);
  }
}

describe('the log of a whole session', () => {
  it('in JSON: one object per line, a request id on each request, and no secret or memory text anywhere', async () => {
    const { log, secrets } = await session('json');
    const lines = log
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const requests = lines.filter((line) => line.msg === 'request');

    expect(lines[0]).toMatchObject({ msg: 'listening', auth: 'oauth' });
    expect(lines.at(-1)).toMatchObject({ msg: 'stopped' });
    expect(
      lines.some((line) => line.msg === 'stopping: finishing requests in flight' && line.signal === 'SIGTERM'),
    ).toBe(true);
    expect(requests.every((line) => typeof line.requestId === 'string' && typeof line.durationMs === 'number')).toBe(
      true,
    );
    expect(new Set(requests.map((line) => line.door))).toEqual(new Set(['oauth', 'mcp', 'api', 'ws', 'health']));
    expect(requests).toContainEqual(
      expect.objectContaining({
        door: 'mcp',
        route: '/mcp',
        status: 200,
        user: 'alice',
        actor: 'Claude',
        tool: 'memory_write',
      }),
    );
    expect(requests).toContainEqual(
      expect.objectContaining({ door: 'mcp', user: 'alice', actor: 'laptop', tool: 'memory_open' }),
    );
    expect(requests).toContainEqual(
      expect.objectContaining({ door: 'api', route: '/api/entries/{group}/{slug}', user: 'alice', actor: 'web' }),
    );
    expect(requests).toContainEqual(expect.objectContaining({ door: 'oauth', route: '/token', status: 200 }));
    expect(requests).toContainEqual(expect.objectContaining({ route: '/healthz', requestId: 'proxy-trace-42' }));
    // What the services report (a refused sign-in) is a JSON line too, naming no password.
    expect(lines.some((line) => /^sign-in failed for user "alice"/.test(String(line.msg)))).toBe(true);
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'websocket closed', door: 'ws', user: 'alice', actor: 'laptop', messages: 1 }),
    );
    expectNoSecret(log, secrets);
  });

  it('in the human format: no secret or memory text anywhere either', async () => {
    const { log, secrets } = await session('human');
    expect(log).toMatch(/user=alice POST \/mcp method=tools\/call tool=memory_write status=200/);
    expect(log).toMatch(/WS \/ws closed code=1005 messages=1/);
    expectNoSecret(log, secrets);
  });
});
