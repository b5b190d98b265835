/**
 * The HTTP benchmark's SDK peer (bench/sdk-peer.ts) must be what its rows say it is:
 * Engram's own tools answered by Engram's own tool handler through the MCP SDK v1's
 * stateless Streamable HTTP, a real MCP client getting from it what the handler gives, and
 * callers found as `engram serve` finds them (no token, the local user; a token, its user;
 * a wrong one refused) — else "Engram / SDK peer" would compare Engram with something else.
 */

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect, it, onTestFinished } from 'vitest';
import { createSdkPeer, LOCAL_CALLER } from '../../bench/sdk-peer.js';
import { createApp } from '../../src/app.js';
import { mcpTools } from '../../src/memory/tools/definitions.js';
import { createToolHandler } from '../../src/memory/tools/handler.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';

async function startPeer() {
  const app = createApp({ store: openMemoryStore() });
  const server = createServer(createSdkPeer(app));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  return { app, url };
}

async function connect(url: URL, token?: string) {
  const client = new Client({ name: 'bench-sdk-peer-test', version: '1.0.0' });
  const headers = token === undefined ? undefined : { Authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  onTestFinished(() => client.close());
  return client;
}

const textOf = (result: unknown) => (result as { content: { text: string }[] }).content.map((c) => c.text).join('');

it('serves Engram’s three tools as defined, and answers each call with what Engram’s tool handler answers', async () => {
  const { app, url } = await startPeer();
  const client = await connect(url);
  expect((await client.listTools()).tools).toEqual(mcpTools());

  const written = await client.callTool({
    name: 'memory_write',
    arguments: { name: 'topics/tea', description: 'Tea', new: 'Green, no sugar.' },
  });
  expect(written.isError).toBe(false);
  expect(textOf(written)).toMatch(/^topics\/tea \(\d+ bytes\): Tea$/);

  const opened = await client.callTool({ name: 'memory_open', arguments: { names: ['topics/tea'] } });
  const handler = createToolHandler(app.memory);
  const direct = await handler(LOCAL_CALLER, 'memory_open', { names: ['topics/tea'] });
  expect({ text: textOf(opened), isError: opened.isError }).toEqual({ text: direct.text, isError: false });
  expect(textOf(opened)).toContain('Green, no sugar.');

  const missing = await client.callTool({ name: 'memory_open', arguments: { names: ['topics/coffee'] } });
  expect(missing.isError).toBe(true);
  expect(textOf(missing)).toBe((await handler(LOCAL_CALLER, 'memory_open', { names: ['topics/coffee'] })).text);
});

it('acts for the user a token names, checked by Engram’s token check, and refuses a wrong token with 401', async () => {
  const { app, url } = await startPeer();
  const { token } = await app.access.create({ user: 'ada', label: 'phone' });
  const ada = await connect(url, token);
  await ada.callTool({
    name: 'memory_write',
    arguments: { name: 'people/bob', description: 'Bob', new: 'Likes tea.' },
  });
  expect((await app.memory.open({ user: 'ada', label: 'test' }, ['people/bob'])).found).toHaveLength(1);
  expect((await app.memory.open(LOCAL_CALLER, ['people/bob'])).found).toHaveLength(0);

  const refused = await fetch(url, {
    method: 'POST',
    headers: {
      Authorization: 'Bearer engram_wrong',
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  expect(refused.status).toBe(401);
  expect(refused.headers.get('www-authenticate')).toContain('invalid_token');
});

it('answers only POST /mcp, as a stateless server does', async () => {
  const { url } = await startPeer();
  expect((await fetch(url)).status).toBe(405);
  expect((await fetch(new URL('/other', url), { method: 'POST', body: '{}' })).status).toBe(404);
  const garbled = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: '{not json',
  });
  expect(garbled.status).toBe(400);
});
