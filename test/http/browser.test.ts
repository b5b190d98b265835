/**
 * Browser safety as a browser exercises it: the llama.cpp WebUI's preflight and POSTs
 * from a page on this computer are allowed; a page from anywhere else is refused (under
 * --auth none) before anything is read or written; a foreign Host (DNS rebinding) is
 * refused when the server listens on loopback; --allow-origin and --auth token widen or
 * narrow the origins exactly as documented.
 */

import { describe, expect, it } from 'vitest';
import { postRpc, type RawResponse, raw, rpc, rpcMessage, startTestServer, type TestServer } from './fixtures.js';

const WEBUI = 'http://127.0.0.1:8080';
const EVIL = 'https://evil.example';
const LOCAL = { user: 'local', label: 'test' };

function preflight(server: TestServer, origin: string, extra: Record<string, string> = {}): Promise<RawResponse> {
  return raw(server.port, {
    method: 'OPTIONS',
    headers: {
      Origin: origin,
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'content-type, accept, authorization, mcp-protocol-version',
      ...extra,
    },
  });
}

const INITIALIZE = rpc('initialize', {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 'llama.cpp-webui', version: '1.0.0' },
});

const WRITE = rpc(
  'tools/call',
  { name: 'memory_write', arguments: { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' } },
  2,
);

describe('a page on this computer (the llama.cpp WebUI) under --auth none', () => {
  it('gets its preflight answered with every header a browser MCP client needs', async () => {
    const server = await startTestServer();
    const response = await preflight(server, WEBUI);
    expect(response.status).toBe(204);
    expect(response.headers).toMatchObject({
      'access-control-allow-origin': WEBUI,
      'access-control-allow-methods': 'POST, GET, PUT, DELETE, OPTIONS',
      'access-control-allow-headers':
        'Content-Type, Accept, Authorization, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID',
      'access-control-expose-headers': 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate',
      'access-control-max-age': '86400',
      vary: 'Origin',
    });
  });

  it('gets its preflight answered for any header it asks for: the Origin is the gate, not the header list', async () => {
    const server = await startTestServer();
    const response = await preflight(server, WEBUI, {
      'Access-Control-Request-Headers': 'x-custom, authorization, mcp-protocol-version',
    });
    expect(response.status).toBe(204);
    const allowed = String(response.headers['access-control-allow-headers']).toLowerCase().split(', ');
    expect(allowed).toEqual(expect.arrayContaining(['x-custom', 'authorization', 'mcp-protocol-version']));
    // The gate stays shut for a page from elsewhere, whatever it asks for.
    const evil = await preflight(server, EVIL, { 'Access-Control-Request-Headers': 'x-custom' });
    expect(evil.status).toBe(403);
    expect(evil.headers['access-control-allow-headers']).toBeUndefined();
  });

  it('then initializes, lists the tools and writes with POSTs that carry its Origin', async () => {
    const server = await startTestServer();
    const headers = { Origin: WEBUI };

    const init = await postRpc(server.port, INITIALIZE, headers);
    expect(init.status).toBe(200);
    expect(init.headers['access-control-allow-origin']).toBe(WEBUI);
    expect(init.headers['access-control-expose-headers']).toContain('Mcp-Session-Id');
    expect(rpcMessage(init).result).toMatchObject({ serverInfo: { name: 'engram' } });

    const initialized = await postRpc(
      server.port,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      headers,
    );
    expect(initialized.status).toBe(202);

    const list = await postRpc(server.port, rpc('tools/list', {}, 3), {
      ...headers,
      'Mcp-Protocol-Version': '2025-06-18',
    });
    expect(list.headers['access-control-allow-origin']).toBe(WEBUI);
    expect((rpcMessage(list).result as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual([
      'memory_open',
      'memory_write',
      'memory_drop',
    ]);

    const write = await postRpc(server.port, WRITE, { ...headers, 'Mcp-Protocol-Version': '2025-06-18' });
    expect(rpcMessage(write).result).toEqual({
      content: [{ type: 'text', text: 'topics/me (11 bytes): Who I am' }],
      isError: false,
    });
    expect(await server.memory.index(LOCAL)).toEqual([{ name: 'topics/me', size: 11, description: 'Who I am' }]);
  });

  it.each(['http://localhost:5173', 'http://127.0.0.1', 'http://[::1]:8080'])(
    'allows the loopback origin %s',
    async (origin) => {
      const server = await startTestServer();
      expect((await preflight(server, origin)).status).toBe(204);
      const response = await postRpc(server.port, rpc('tools/list'), { Origin: origin });
      expect(response.status).toBe(200);
      expect(response.headers['access-control-allow-origin']).toBe(origin);
    },
  );

  it("answers Chrome's private-network preflight for an allowed origin", async () => {
    const server = await startTestServer();
    const response = await preflight(server, WEBUI, { 'Access-Control-Request-Private-Network': 'true' });
    expect(response.headers['access-control-allow-private-network']).toBe('true');
  });
});

describe('a page from anywhere else under --auth none', () => {
  it('has its preflight refused with 403 and no CORS headers', async () => {
    const server = await startTestServer();
    const response = await preflight(server, EVIL);
    expect(response.status).toBe(403);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    expect(rpcMessage(response).error?.message).toBe(
      'Forbidden: pages from https://evil.example may not use this memory. To allow them, restart engram serve ' +
        'with --allow-origin https://evil.example (or use --auth token).',
    );
  });

  it('refuses a page opened from a file (Origin null) with a hint that works, not --allow-origin null', async () => {
    const server = await startTestServer();
    const response = await preflight(server, 'null');
    expect(response.status).toBe(403);
    expect(rpcMessage(response).error?.message).toBe(
      'Forbidden: pages opened from a file or in a sandbox (Origin null) may not use this memory. ' +
        'Serve the page from http://localhost or http://127.0.0.1 instead, or restart engram serve with --auth token.',
    );
  });

  it.each([EVIL, 'null', 'https://127.0.0.1:8080', 'http://localhost.evil.example', 'http://127.0.0.1.nip.io:8080'])(
    'cannot read or write with a POST from %s, even one that needs no preflight',
    async (origin) => {
      const server = await startTestServer();
      await server.memory.write(LOCAL, { name: 'topics/secret', description: 'Private', new: 'PIN 1234' });
      const read = await postRpc(
        server.port,
        rpc('tools/call', { name: 'memory_open', arguments: { names: ['topics/secret'] } }),
        {
          Origin: origin,
        },
      );
      expect(read.status).toBe(403);
      expect(read.body).not.toContain('PIN');
      const write = await raw(server.port, {
        method: 'POST',
        headers: { Origin: origin, 'Content-Type': 'text/plain' },
        body: WRITE,
      });
      expect(write.status).toBe(403);
      expect(await server.memory.index(LOCAL)).toEqual([{ name: 'topics/secret', size: 9, description: 'Private' }]);
    },
  );

  it('is allowed when named with --allow-origin, and only that origin', async () => {
    const server = await startTestServer({ allowOrigins: ['http://192.168.1.20:8080'] });
    expect((await preflight(server, 'http://192.168.1.20:8080')).status).toBe(204);
    expect((await postRpc(server.port, WRITE, { Origin: 'http://192.168.1.20:8080' })).status).toBe(200);
    expect((await postRpc(server.port, WRITE, { Origin: 'http://192.168.1.21:8080' })).status).toBe(403);
    expect((await preflight(server, WEBUI)).status).toBe(204);
  });
});

describe('DNS rebinding: a foreign Host while listening on loopback', () => {
  it.each(['evil.example', 'evil.example:8787', '192.168.1.20', 'localhost.evil.example'])(
    'is refused with 403 for Host %s, before anything is read or written',
    async (host) => {
      const server = await startTestServer();
      const write = await postRpc(server.port, WRITE, { Host: host });
      expect(write.status).toBe(403);
      expect(rpcMessage(write).error?.message).toBe(
        `Forbidden: this server answers only to localhost, 127.0.0.1 (any 127.x.y.z) and [::1], not to Host ${JSON.stringify(host)}. To reach it under another name, start engram serve with --public-url set to the address people use.`,
      );
      expect((await raw(server.port, { method: 'OPTIONS', headers: { Host: host, Origin: WEBUI } })).status).toBe(403);
      expect((await raw(server.port, { path: '/healthz', headers: { Host: host } })).status).toBe(403);
      expect(await server.memory.index(LOCAL)).toEqual([]);
    },
  );

  it.each(['localhost', 'localhost:8787', '127.0.0.1:8787', '[::1]:8787'])(
    'accepts the loopback Host %s',
    async (host) => {
      const server = await startTestServer();
      expect((await postRpc(server.port, rpc('tools/list'), { Host: host })).status).toBe(200);
    },
  );

  it('does not apply when the server listens on every address (with tokens)', async () => {
    const server = await startTestServer({ auth: 'token', host: '0.0.0.0' });
    const { token } = await server.access.create({ user: 'ada' });
    const response = await postRpc(server.port, rpc('tools/list'), {
      Host: 'engram.lan:8787',
      Authorization: `Bearer ${token}`,
    });
    expect(response.status).toBe(200);
  });
});

describe('origins under --auth token', () => {
  it('lets any origin call, the token being the protection', async () => {
    const server = await startTestServer({ auth: 'token' });
    const { token } = await server.access.create({ user: 'ada' });
    expect((await preflight(server, 'https://chat.example')).status).toBe(204);
    const response = await postRpc(server.port, rpc('tools/list'), {
      Origin: 'https://chat.example',
      Authorization: `Bearer ${token}`,
    });
    expect(response.status).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBe('https://chat.example');
  });

  it('lets a page read the 401 and its WWW-Authenticate challenge', async () => {
    const server = await startTestServer({ auth: 'token' });
    const response = await postRpc(server.port, rpc('tools/list'), { Origin: WEBUI });
    expect(response.status).toBe(401);
    expect(response.headers['access-control-allow-origin']).toBe(WEBUI);
    expect(response.headers['access-control-expose-headers']).toContain('WWW-Authenticate');
    expect(response.headers['www-authenticate']).toBe('Bearer realm="engram"');
  });

  it('narrows to the --allow-origin ones when given', async () => {
    const server = await startTestServer({ auth: 'token', allowOrigins: ['https://chat.example'] });
    const { token } = await server.access.create({ user: 'ada' });
    expect((await preflight(server, 'https://chat.example')).status).toBe(204);
    expect((await preflight(server, EVIL)).status).toBe(403);
    const response = await postRpc(server.port, WRITE, { Origin: EVIL, Authorization: `Bearer ${token}` });
    expect(response.status).toBe(403);
    expect(await server.memory.index({ user: 'ada', label: 'test' })).toEqual([]);
  });
});
