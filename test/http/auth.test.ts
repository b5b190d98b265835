/**
 * The auth matrix over HTTP: no auth; with --auth token a missing, malformed, wrong or
 * revoked token is refused with 401 and changes nothing; revoking works at once, even
 * from another connection to the database; a read-only token reads but cannot write or
 * drop; and two users with entries of the same names never see each other's.
 */

import { describe, expect, it, onTestFinished } from 'vitest';
import { createAccess } from '../../src/access/tokens/access.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { HTTP_CLIENTS } from './clients.js';
import { postRpc, type RawResponse, rpc, rpcMessage, startTestServer } from './fixtures.js';

const call = (name: string, args: Record<string, unknown> = {}) => rpc('tools/call', { name, arguments: args });
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const WRITE_ME = call('memory_write', { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' });

function toolResult(response: RawResponse): { text: string; isError: boolean } {
  const result = rpcMessage(response).result as { content: { text: string }[]; isError: boolean };
  return { text: result.content.map((block) => block.text).join(''), isError: result.isError };
}

describe('--auth none', () => {
  it('serves every request as the local user, ignoring any Authorization header', async () => {
    const server = await startTestServer();
    expect(toolResult(await postRpc(server.port, WRITE_ME)).isError).toBe(false);
    expect(toolResult(await postRpc(server.port, call('memory_open'), bearer('whatever')))).toEqual({
      text: 'topics/me (11 bytes): Who I am',
      isError: false,
    });
  });
});

describe('--auth token refuses', () => {
  const MISSING =
    'This server needs a token: send the header "Authorization: Bearer <token>". ' +
    'Its owner creates tokens with engram token create --user NAME.';
  const WRONG =
    'The token was not accepted: it is wrong or has been revoked. Ask the owner of this server for a token ' +
    '(engram token create --user NAME) and send it as "Authorization: Bearer <token>".';

  it.each([
    ['no Authorization header', {}, MISSING, 'Bearer realm="engram"'],
    ['a Basic Authorization header', { Authorization: 'Basic YWRhOnB3' }, MISSING, 'Bearer realm="engram"'],
    ['an empty bearer token', { Authorization: 'Bearer ' }, MISSING, 'Bearer realm="engram"'],
    ['a wrong token', bearer('engram_not-a-real-token'), WRONG, 'Bearer realm="engram", error="invalid_token"'],
  ])('a request with %s: 401, WWW-Authenticate, and nothing changed', async (_, headers, message, challenge) => {
    const server = await startTestServer({ auth: 'token' });
    const { token } = await server.access.create({ user: 'ada' });
    await postRpc(server.port, WRITE_ME, bearer(token));
    const response = await postRpc(server.port, call('memory_drop', { name: 'topics/me' }), headers);
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe(challenge);
    expect(rpcMessage(response).error?.message).toBe(message);
    expect(await server.memory.index({ user: 'ada', label: 'test' })).toHaveLength(1);
  });

  it.each(HTTP_CLIENTS)('the $label when its token is wrong', async (kind) => {
    const server = await startTestServer({ auth: 'token' });
    await expect(kind.connect(server.url, { token: 'engram_wrong' })).rejects.toThrow();
  });

  it('a revoked token from the next request on, without a restart', async () => {
    const server = await startTestServer({ auth: 'token' });
    const { token, info } = await server.access.create({ user: 'ada' });
    expect((await postRpc(server.port, WRITE_ME, bearer(token))).status).toBe(200);
    await server.access.revoke(info.id);
    const response = await postRpc(server.port, call('memory_drop', { name: 'topics/me' }), bearer(token));
    expect(response.status).toBe(401);
    expect(await server.memory.index({ user: 'ada', label: 'test' })).toHaveLength(1);
  });

  it('a token revoked through another connection to the database (as `engram token revoke` does)', async () => {
    const server = await startTestServer({ auth: 'token' });
    const { token, info } = await server.access.create({ user: 'ada' });
    const session = await HTTP_CLIENTS[0]!.connect(server.url, { token });
    onTestFinished(() => session.close().catch(() => {}));
    expect((await session.call('memory_write', { name: 'topics/me', description: 'Me', new: 'x' })).isError).toBe(
      false,
    );

    const other = openSqliteStore({ path: server.db });
    await createAccess(other.tokens).revoke(info.id);
    await other.close();

    await expect(session.call('memory_open')).rejects.toThrow();
    expect((await postRpc(server.port, call('memory_open'), bearer(token))).status).toBe(401);
  });
});

describe('a read-only token', () => {
  it('opens the index and entries, but memory_write and memory_drop answer isError and change nothing', async () => {
    const server = await startTestServer({ auth: 'token' });
    const writer = await server.access.create({ user: 'ada', label: 'laptop' });
    const reader = await server.access.create({ user: 'ada', label: 'viewer', readOnly: true });
    await postRpc(server.port, WRITE_ME, bearer(writer.token));

    expect(toolResult(await postRpc(server.port, call('memory_open'), bearer(reader.token)))).toEqual({
      text: 'topics/me (11 bytes): Who I am',
      isError: false,
    });
    expect(
      toolResult(await postRpc(server.port, call('memory_open', { names: ['topics/me'] }), bearer(reader.token))).text,
    ).toContain('Name: Ada.');

    const readOnly =
      'This connection is read-only: it can use memory_open but not memory_write or memory_drop. ' +
      'Ask the user to connect with a read-write token to change memory.';
    for (const body of [
      call('memory_write', { name: 'topics/me', new: 'Likes tea.' }),
      call('memory_write', { name: 'topics/new', description: 'New', new: 'x' }),
      call('memory_drop', { name: 'topics/me' }),
    ]) {
      const response = await postRpc(server.port, body, bearer(reader.token));
      expect(response.status).toBe(200);
      expect(toolResult(response)).toEqual({ text: readOnly, isError: true });
    }
    const [entry] = await server.memory.store.get('ada', ['topics/me']);
    expect(entry).toMatchObject({ body: 'Name: Ada.\n', revision: 1 });
    expect(await server.memory.index({ user: 'ada', label: 'test' })).toHaveLength(1);
  });
});

describe('two users', () => {
  it('each have their own memory: same names, different contents, neither sees the other', async () => {
    const server = await startTestServer({ auth: 'token' });
    const alice = (await server.access.create({ user: 'alice', label: 'alice laptop' })).token;
    const bob = (await server.access.create({ user: 'bob', label: 'bob phone' })).token;
    const write = (text: string) =>
      call('memory_write', { name: 'topics/me', description: `About ${text}`, new: text });
    await postRpc(server.port, write('Alice likes tea.'), bearer(alice));
    await postRpc(server.port, write('Bob likes coffee and long walks.'), bearer(bob));
    await postRpc(
      server.port,
      call('memory_write', { name: 'areas/secret', description: 'Alice only', new: 'x' }),
      bearer(alice),
    );

    const open = call('memory_open', { names: ['topics/me', 'areas/secret'] });
    const seenByAlice = toolResult(await postRpc(server.port, open, bearer(alice))).text;
    const seenByBob = toolResult(await postRpc(server.port, open, bearer(bob))).text;
    expect(seenByAlice).toContain('Alice likes tea.');
    expect(seenByAlice).not.toContain('Bob');
    expect(seenByBob).toContain('Bob likes coffee and long walks.');
    expect(seenByBob).not.toContain('Alice');
    expect(seenByBob).toMatch(/areas\/secret.*not found/);
    expect(toolResult(await postRpc(server.port, call('memory_open'), bearer(bob))).text).toBe(
      'topics/me (33 bytes): About Bob likes coffee and long walks.',
    );

    const drop = await postRpc(server.port, call('memory_drop', { name: 'areas/secret' }), bearer(bob));
    expect(toolResult(drop).isError).toBe(true);
    expect(await server.memory.index({ user: 'alice', label: 'test' })).toHaveLength(2);
  });
});
