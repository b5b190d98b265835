/**
 * `/api` behind the same gates as `/mcp`: Host and Origin checks, CORS preflight, tokens
 * (401 without one), read-only tokens that may GET but never POST, one user never seeing
 * another's memory; plus unknown routes, wrong methods and unexpected failures — all
 * answered as `{ error: { code, message } }`. (The request log of /api: api-socket.test.ts.)
 */

import { describe, expect, it } from 'vitest';
import type { Caller } from '../../src/memory/memory.js';
import { type ApiResponse, api, apiError, contents, LOCAL } from './api-client.js';
import { startTestApp, type TestApp } from './in-process.js';

const ADA: Caller = { user: 'ada', label: 'test' };
const BOB: Caller = { user: 'bob', label: 'test' };

const EXPORT = JSON.stringify({
  format: 'engram-export',
  version: 1,
  entries: [{ name: 'people/carol', description: 'Carol', body: 'Friend.\n' }],
});

/** Every POST route, with a body it would accept. */
const WRITES: [string, unknown][] = [
  ['/api/entries/topics/me/restore', { revision: 1 }],
  ['/api/trash/topics/old/undrop', undefined],
  ['/api/import', EXPORT],
  ['/api/import?dryRun=1', EXPORT],
];

const READS = [
  '/api/entries',
  '/api/entries/topics/me',
  '/api/entries/topics/me/history',
  '/api/trash',
  '/api/export',
  '/api/export?history=1',
];

/** The caller gets topics/me at revision 2 and topics/old in the trash. */
async function seed(server: TestApp, caller: Caller): Promise<void> {
  await server.memory.write(caller, { name: 'topics/me', description: 'Who I am', new: `Name: ${caller.user}.` });
  await server.memory.write(caller, { name: 'topics/me', new: 'Likes tea.' });
  await server.memory.write(caller, { name: 'topics/old', description: 'Old', new: 'Stale.' });
  await server.memory.drop(caller, 'topics/old');
}

async function state(server: TestApp, caller: Caller) {
  return {
    entries: await contents(server.memory, caller),
    history: await server.memory.recovery.history(caller, 'topics/me'),
    trash: (await server.memory.recovery.trash(caller)).map((item) => item.name),
  };
}

/** Sends `request`, expecting `status`, the error `error` and the caller's memory unchanged; returns the response. */
async function expectRefusal(
  server: TestApp,
  caller: Caller,
  request: () => Promise<ApiResponse>,
  status: number,
  error: ReturnType<typeof apiError>,
): Promise<ApiResponse> {
  const before = await state(server, caller);
  const response = await request();
  expect(response.status).toBe(status);
  expect(response.json).toEqual(error);
  expect(await state(server, caller)).toEqual(before);
  return response;
}

describe('tokens', () => {
  const MISSING =
    'This server needs a token: send the header "Authorization: Bearer <token>". ' +
    'Its owner creates tokens with engram token create --user NAME.';

  it.each([
    ...READS.map((path) => ['GET', path, undefined] as const),
    ...WRITES.map(([path, body]) => ['POST', path, body] as const),
  ])('%s %s without a token: 401 with WWW-Authenticate, nothing changed', async (method, path, body) => {
    const server = startTestApp({ auth: 'token' });
    await seed(server, ADA);
    const request = () => api(server, method, path, { body });
    const response = await expectRefusal(server, ADA, request, 401, apiError('UNAUTHORIZED', MISSING));
    expect(response.headers['www-authenticate']).toBe('Bearer realm="engram"');
  });

  it('a wrong token is refused with 401 and invalid_token', async () => {
    const server = startTestApp({ auth: 'token' });
    const response = await api(server, 'GET', '/api/entries', { token: 'engram_wrong' });
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer realm="engram", error="invalid_token"');
    expect(response.json.error.code).toBe('UNAUTHORIZED');
  });

  it('records the token label as the actor of a change', async () => {
    const server = startTestApp({ auth: 'token' });
    await seed(server, ADA);
    const { token } = await server.access.create({ user: 'ada', label: 'web ui' });
    await api(server, 'POST', '/api/entries/topics/me/restore', { token, body: { revision: 1 } });
    expect((await server.memory.recovery.history(ADA, 'topics/me')).at(-1)).toMatchObject({
      operation: 'restore',
      actor: 'web ui',
    });
  });
});

describe('a read-only token', () => {
  it.each(READS)('may GET %s', async (path) => {
    const server = startTestApp({ auth: 'token' });
    await seed(server, ADA);
    const { token } = await server.access.create({ user: 'ada', readOnly: true });
    expect((await api(server, 'GET', path, { token })).status).toBe(200);
  });

  it.each(WRITES)('may not POST %s: 403 READ_ONLY_TOKEN, nothing changed', async (path, body) => {
    const server = startTestApp({ auth: 'token' });
    await seed(server, ADA);
    const { token } = await server.access.create({ user: 'ada', readOnly: true });
    await expectRefusal(
      server,
      ADA,
      () => api(server, 'POST', path, { token, body }),
      403,
      apiError(
        'READ_ONLY_TOKEN',
        'This token is read-only: it can GET from /api but not change memory. ' +
          'Ask the owner of this server for a read-write token (engram token create --user NAME).',
      ),
    );
  });
});

describe('two users', () => {
  it('each sees and changes only their own memory, even under the same names', async () => {
    const server = startTestApp({ auth: 'token' });
    await seed(server, ADA);
    await server.memory.write(BOB, { name: 'topics/me', description: 'Who I am', new: 'Name: bob.' });
    await server.memory.write(BOB, { name: 'people/dan', description: 'Dan', new: 'Neighbour.' });
    const ada = (await server.access.create({ user: 'ada' })).token;
    const bob = (await server.access.create({ user: 'bob' })).token;
    const adaBefore = await state(server, ADA);

    expect((await api(server, 'GET', '/api/entries/topics/me', { token: ada })).json.entry.body).toBe(
      'Name: ada.\nLikes tea.\n',
    );
    expect((await api(server, 'GET', '/api/entries/topics/me', { token: bob })).json.entry.body).toBe('Name: bob.\n');
    expect(
      (await api(server, 'GET', '/api/entries', { token: bob })).json.entries.map((row: { name: string }) => row.name),
    ).toEqual(['people/dan', 'topics/me']);
    expect((await api(server, 'GET', '/api/entries/people/dan', { token: ada })).status).toBe(404);
    expect((await api(server, 'GET', '/api/trash', { token: bob })).json).toEqual({ trash: [] });
    expect((await api(server, 'GET', '/api/entries/topics/me/history', { token: bob })).json.revisions).toHaveLength(1);
    const bobExport = (await api(server, 'GET', '/api/export?history=1', { token: bob })).json;
    expect(bobExport.entries.map((entry: { name: string }) => entry.name)).toEqual(['people/dan', 'topics/me']);
    expect(bobExport.trash).toEqual([]);

    expect((await api(server, 'POST', '/api/trash/topics/old/undrop', { token: bob })).status).toBe(404);
    const restore = await api(server, 'POST', '/api/entries/topics/me/restore', {
      token: bob,
      body: { revision: 2 },
    });
    expect(restore.status).toBe(404);
    expect((await api(server, 'POST', '/api/import?mode=replace', { token: bob, body: EXPORT })).status).toBe(200);
    expect(await contents(server.memory, BOB)).toEqual([
      { name: 'people/carol', description: 'Carol', body: 'Friend.\n' },
    ]);
    expect(await state(server, ADA)).toEqual(adaBefore);
  });
});

describe('browser safety', () => {
  it.each([
    ['GET', '/api/entries', undefined],
    ['POST', '/api/import', EXPORT],
    ['OPTIONS', '/api/import', undefined],
  ])('%s %s from a page of another origin: 403 FORBIDDEN_ORIGIN, nothing changed', async (method, path, body) => {
    const server = startTestApp();
    await seed(server, LOCAL);
    const response = await expectRefusal(
      server,
      LOCAL,
      () => api(server, method, path, { body, headers: { Origin: 'https://evil.example' } }),
      403,
      apiError(
        'FORBIDDEN_ORIGIN',
        'Forbidden: pages from https://evil.example may not use this memory. To allow them, restart engram serve ' +
          'with --allow-origin https://evil.example (or use --auth token).',
      ),
    );
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a request addressed to another Host name (DNS rebinding): 403 FORBIDDEN_HOST, nothing changed', async () => {
    const server = startTestApp();
    await seed(server, LOCAL);
    await expectRefusal(
      server,
      LOCAL,
      () => api(server, 'POST', '/api/import?mode=replace', { body: EXPORT, headers: { Host: 'evil.example:8787' } }),
      403,
      apiError(
        'FORBIDDEN_HOST',
        'Forbidden: this server answers only to localhost, 127.0.0.1 (any 127.x.y.z) and [::1], not to Host "evil.example:8787". ' +
          'To reach it under another name, start engram serve with --public-url set to the address people use.',
      ),
    );
  });

  it('a page of this computer gets CORS headers and a preflight allowing the methods and headers the API uses', async () => {
    const server = startTestApp();
    const origin = 'http://localhost:5173';
    const preflight = await api(server, 'OPTIONS', '/api/entries/topics/me/restore', {
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type, authorization',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(origin);
    expect(preflight.headers['access-control-allow-methods']?.split(', ')).toEqual(
      expect.arrayContaining(['GET', 'POST']),
    );
    expect(preflight.headers['access-control-allow-headers']).toMatch(/Content-Type.*Authorization/);
    const read = await api(server, 'GET', '/api/entries', { headers: { Origin: origin } });
    expect(read.status).toBe(200);
    expect(read.headers['access-control-allow-origin']).toBe(origin);
  });

  it('OPTIONS without Origin answers the methods the route allows', async () => {
    const server = startTestApp();
    const response = await api(server, 'OPTIONS', '/api/import');
    expect(response.status).toBe(204);
    expect(response.headers.allow).toBe('POST, OPTIONS');
  });
});

describe('routes and methods', () => {
  it.each([
    [
      'PATCH',
      '/api/entries/topics/me',
      'GET, PUT, DELETE, OPTIONS',
      'Method not allowed: PATCH /api/entries/{group}/{slug}; use GET, PUT, DELETE.',
    ],
    ['GET', '/api/import', 'POST, OPTIONS', 'Method not allowed: GET /api/import; use POST.'],
    ['PUT', '/api/trash', 'GET, OPTIONS', 'Method not allowed: PUT /api/trash; use GET.'],
  ])('%s %s: 405 with Allow %s', async (method, path, allow, message) => {
    const server = startTestApp();
    await seed(server, LOCAL);
    const request = () => api(server, method, path);
    const response = await expectRefusal(server, LOCAL, request, 405, apiError('METHOD_NOT_ALLOWED', message));
    expect(response.headers.allow).toBe(allow);
  });

  it.each(['/api', '/api/', '/api/entries/topics', '/api/entries/topics/me/', '/api/entries/a/b/c/d'])(
    'GET %s: 404, not an API route',
    async (path) => {
      const server = startTestApp();
      const response = await api(server, 'GET', path);
      expect(response.status).toBe(404);
      expect(response.json).toEqual(
        apiError('NOT_FOUND', `Not found: ${path} is not an API route. docs/api.md lists them.`),
      );
    },
  );
});

describe('an unexpected failure', () => {
  it('is answered 500 INTERNAL without details, and logged', async () => {
    const server = startTestApp();
    await server.store.close();
    const response = await api(server, 'GET', '/api/entries');
    expect(response.status).toBe(500);
    expect(response.json).toEqual(
      apiError(
        'INTERNAL',
        'Internal error: the server failed to answer. Try again; if it fails again, tell its owner.',
      ),
    );
    expect(server.logs.some((line) => line.startsWith('internal error: '))).toBe(true);
  });
});
