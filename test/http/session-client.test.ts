/**
 * Over HTTP without tokens, history records the MCP client's name: `initialize` is
 * answered with an Mcp-Session-Id that carries it, signed; later requests that send it
 * back are recorded under that name, on the fast path and the SDK's alike. A missing,
 * forged or altered id falls back to `http`; a token's label always wins.
 */

import { describe, expect, it } from 'vitest';
import { postRpc, rpc, startTestServer, type TestServer } from './fixtures.js';

const PROTOCOL = { 'Mcp-Protocol-Version': '2025-06-18' };

async function initialize(server: TestServer, name: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await postRpc(
    server.port,
    rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name, version: '1' } }),
    headers,
  );
  expect(response.status).toBe(200);
  return String(response.headers['mcp-session-id']);
}

/** A write through the fast path, or (with `_meta`, which the fast path declines) through the SDK. */
function write(server: TestServer, name: string, headers: Record<string, string>, viaSdk = false) {
  const params = {
    name: 'memory_write',
    arguments: { name, description: 'D', new: 'x' },
    ...(viaSdk ? { _meta: {} } : {}),
  };
  return postRpc(server.port, rpc('tools/call', params, 2), { ...PROTOCOL, ...headers });
}

async function actorOf(server: TestServer, user: string, name: string): Promise<string | undefined> {
  return (await server.store.history(user, name))[0]?.actor;
}

describe('the MCP client named in history over HTTP without tokens', () => {
  it('is recorded from the session id that initialize handed out, on the fast path and the SDK path', async () => {
    const server = await startTestServer();
    const sessionId = await initialize(server, 'llama.cpp-webui');
    expect(sessionId).toMatch(/^[\x21-\x7e]+$/);
    expect((await write(server, 'topics/fast', { 'Mcp-Session-Id': sessionId })).status).toBe(200);
    expect((await write(server, 'topics/sdk', { 'Mcp-Session-Id': sessionId }, true)).status).toBe(200);
    expect(await actorOf(server, 'local', 'topics/fast')).toBe('llama.cpp-webui');
    expect(await actorOf(server, 'local', 'topics/sdk')).toBe('llama.cpp-webui');
  });

  it('falls back to "http" without an id, or with a forged or altered one', async () => {
    const server = await startTestServer();
    const sessionId = await initialize(server, 'claude-code');
    const [nonce, , signature] = sessionId.split('.');
    const forged = `${nonce}.${Buffer.from('someone-else').toString('base64url')}.${signature}`;
    const cases: [string, Record<string, string>][] = [
      ['topics/none', {}],
      ['topics/forged', { 'Mcp-Session-Id': forged }],
      ['topics/altered', { 'Mcp-Session-Id': `${sessionId.slice(0, -2)}xx` }],
      ['topics/junk', { 'Mcp-Session-Id': 'not-a-session' }],
    ];
    for (const [name, headers] of cases) {
      expect((await write(server, name, headers)).status).toBe(200);
      expect((await write(server, `${name}-sdk`, headers, true)).status).toBe(200);
      expect(await actorOf(server, 'local', name)).toBe('http');
      expect(await actorOf(server, 'local', `${name}-sdk`)).toBe('http');
    }
  });

  it('leaves a token label as the actor', async () => {
    const server = await startTestServer({ auth: 'token' });
    const { token } = await server.access.create({ user: 'ada', label: 'laptop' });
    const auth = { Authorization: `Bearer ${token}` };
    const sessionId = await initialize(server, 'claude-code', auth);
    await write(server, 'topics/me', { ...auth, 'Mcp-Session-Id': sessionId });
    expect(await actorOf(server, 'ada', 'topics/me')).toBe('laptop');
  });
});
