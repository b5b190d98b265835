/**
 * Resources, prompts and the server's identity over Streamable HTTP (/mcp) with the
 * official SDK clients (v1, and v2 in both eras), and over WebSocket (/ws) with the v1
 * client: the same answers as over stdio, for the caller the token names — a read-only
 * token reads, and no token reaches another user's entries.
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { WebSocket } from 'ws';
import { CONTEXT_CLIENTS, type ContextClient } from '../helpers/context-clients.js';
import { expectIdentity, expectPrompts, expectResources, readText, refusal } from '../helpers/context-scenarios.js';
import { startTestServer } from './fixtures.js';

describe.each(CONTEXT_CLIENTS)('$label over HTTP', (kind) => {
  async function connect(url: string, token?: string): Promise<ContextClient> {
    const client = await kind.http(url, token);
    onTestFinished(() => client.close());
    return client;
  }

  it('names itself Engram, with an icon, and declares resources and prompts', async () => {
    const server = await startTestServer();
    expectIdentity(await connect(server.url));
  });

  it('lists and reads the index and entries as memory_open returns them', async () => {
    const server = await startTestServer();
    await expectResources(await connect(server.url));
  });

  it('lists and fills in the prompts, refusing a missing argument', async () => {
    const server = await startTestServer();
    await expectPrompts(await connect(server.url));
  });

  it('completes an entry name with at most 100 names, saying how many matched', async () => {
    const server = await startTestServer();
    const names = Array.from({ length: 101 }, (_, i) => `topics/n${String(i).padStart(3, '0')}`);
    const local = { user: 'local', label: 'test' };
    for (const name of names) await server.memory.write(local, { name, description: 'A note', new: 'x' });
    const client = await connect(server.url);

    const completion = await client.complete({
      ref: { type: 'ref/resource', uri: 'memory://entry/{name}' },
      argument: { name: 'name', value: 'N' },
    });

    expect(completion.completion).toEqual({ values: names.slice(0, 100), total: 101, hasMore: true });
  });

  it('reads with a read-only token, and never another user’s entries', async () => {
    const server = await startTestServer({ auth: 'token' });
    const alice = { user: 'alice', label: 'test' };
    await server.memory.write(alice, { name: 'topics/secret', description: 'Alice only', new: 'The code is 1234.' });
    const reader = (await server.access.create({ user: 'alice', label: 'viewer', readOnly: true })).token;
    const bob = (await server.access.create({ user: 'bob', label: 'bob' })).token;

    const asReader = await connect(server.url, reader);
    expect(await readText(asReader, 'memory://index')).toBe('topics/secret (18 bytes): Alice only');
    expect(await readText(asReader, 'memory://entry/topics%2Fsecret')).toContain('The code is 1234.');

    const asBob = await connect(server.url, bob);
    expect(await readText(asBob, 'memory://index')).toMatch(/^Memory is empty\./);
    const refused = await refusal(asBob.readResource({ uri: 'memory://entry/topics%2Fsecret' }));
    expect(refused).toEqual({ code: -32602, message: expect.stringContaining('topics/secret not found.') });
    expect(refused.message).not.toContain('1234');
    const completion = await asBob.complete({
      ref: { type: 'ref/resource', uri: 'memory://entry/{name}' },
      argument: { name: 'name', value: 'top' },
    });
    expect(completion.completion.values).toEqual([]);
  });
});

describe('over WebSocket', () => {
  // Node 20 has no global WebSocket: the SDK's transport takes the global one, as in a browser.
  beforeAll(() => {
    vi.stubGlobal('WebSocket', WebSocket);
  });
  afterAll(() => {
    vi.unstubAllGlobals();
  });

  it('serves the same identity, resources and prompts to the v1 client', async () => {
    const server = await startTestServer();
    const client = new Client({ name: 'context-ws', version: '1.0.0' });
    await client.connect(new WebSocketClientTransport(new URL(`ws://127.0.0.1:${server.port}/ws`)));
    onTestFinished(() => client.close());
    const context = client as unknown as ContextClient;
    expectIdentity(context);
    await expectResources(context);
    await expectPrompts(context);
  });
});
