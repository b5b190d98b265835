/**
 * Invariant of the HTTP fast path (docs/accelerators.md; switch ENGRAM_ACCEL_HTTP_FAST_PATH):
 * a request is answered byte for byte as the installed SDK answers it, with the same
 * effects, or left to the SDK untouched.
 *
 * The fast path of MCP over HTTP answers exactly what the SDK answers: every hot request
 * is sent alone to one server (the fast path) and as a batch of one to a twin server
 * (batches always go to the SDK, which answers a batch of one request with that one
 * response), and the JSON-RPC messages must match byte for byte, as must the actors
 * recorded in history. Every request outside the hot, simple case is declined, untouched,
 * for the SDK to answer as before (fast-path-declines.test.ts, without a server), and the
 * app's SDK answers it.
 */

import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { postRpc, type RawResponse, startTestServer, type TestServer } from '../http/fixtures.js';

/** A JSON-RPC request body; ids may be strings as well as numbers. */
function rpc(method: string, params?: unknown, id: number | string = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
}

const call = (name: string, args?: Record<string, unknown>, id: number | string = 1) =>
  rpc('tools/call', args === undefined ? { name } : { name, arguments: args }, id);

/** The hot requests, in an order that exercises every kind of answer; each depends on the ones before. */
const SCRIPT: readonly string[] = [
  rpc('ping', undefined, 1),
  rpc('ping', {}, 'ping-2'),
  rpc('tools/list', undefined, 2),
  rpc('tools/list', {}, 'list-2'),
  call('memory_open', {}, 3),
  call('memory_write', { name: 'people/allozaur', description: 'WebUI maintainer', new: 'Met at FOSDEM.' }, 4),
  call('memory_write', { name: 'people/allozaur', new: 'Likes "Svelte" — ünïcode.\n' }, 'write-2'),
  call('memory_open', { names: ['people/allozaur'] }, 5),
  call('memory_open', undefined, 6),
  call('memory_open', { names: ['people/nobody'] }, 7),
  call('memory_open', { names: 5 }, 8),
  call('memory_write', { name: 'Not A Name', new: 'x' }, 9),
  call('memory_forget', { name: 'people/allozaur' }, 10),
  call('memory_drop', { name: 'people/allozaur' }, -11),
];

/** The JSON-RPC message carried by an SSE answer. */
function sseData(response: RawResponse): string {
  return response.body
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice('data: '.length))
    .join('');
}

/** Sends `message` alone to `fast` and as a batch of one to `sdk`; expects the same JSON-RPC message back. */
async function expectSameAnswer(
  fast: TestServer,
  sdk: TestServer,
  message: string,
  headers: Record<string, string>,
): Promise<string> {
  const viaFastPath = await postRpc(fast.port, message, headers);
  const viaSdk = await postRpc(sdk.port, `[${message}]`, headers);
  expect(viaSdk.status).toBe(200);
  expect(viaSdk.headers['content-type']).toBe('text/event-stream');
  expect(viaFastPath.status).toBe(200);
  expect(viaFastPath.headers['content-type']).toBe('application/json');
  expect(viaFastPath.headers['content-length']).toBe(String(Buffer.byteLength(viaFastPath.body)));
  expect(viaFastPath.body).toBe(sseData(viaSdk));
  return viaFastPath.body;
}

describe('the fast path answers as the SDK does', () => {
  it.each([undefined, ...SUPPORTED_PROTOCOL_VERSIONS])('with MCP-Protocol-Version %s', async (version) => {
    const fast = await startTestServer({ mcpFastPath: true });
    const sdk = await startTestServer();
    const headers: Record<string, string> = version === undefined ? {} : { 'MCP-Protocol-Version': version };
    const answers: string[] = [];
    for (const message of SCRIPT) answers.push(await expectSameAnswer(fast, sdk, message, headers));

    // The script reached every kind of answer.
    expect(answers[0]).toBe('{"result":{},"jsonrpc":"2.0","id":1}');
    expect(answers[1]).toBe('{"result":{},"jsonrpc":"2.0","id":"ping-2"}');
    expect(JSON.parse(answers[2]!).result.tools.map((tool: { name: string }) => tool.name)).toEqual([
      'memory_open',
      'memory_write',
      'memory_drop',
    ]);
    expect(answers[7]).toContain('Met at FOSDEM.');
    expect(answers[9]).toContain('"isError":true');
    expect(answers[10]).toContain('"isError":true');
    expect(JSON.parse(answers[12]!)).toEqual({
      jsonrpc: '2.0',
      id: 10,
      error: {
        code: -32602,
        message: 'Unknown tool "memory_forget". The tools are memory_open, memory_write, memory_drop.',
      },
    });
    const actors = async (server: TestServer) =>
      (await server.store.history('local', 'people/allozaur')).map((revision) => revision.actor);
    expect(await actors(fast)).toEqual(['http', 'http', 'http']);
    expect(await actors(sdk)).toEqual(await actors(fast));
  });

  it('acts for the token and refuses a read-only token’s write the same way', async () => {
    const fast = await startTestServer({ auth: 'token', mcpFastPath: true });
    const sdk = await startTestServer({ auth: 'token' });
    const tokens = async (server: TestServer) => ({
      writer: (await server.access.create({ user: 'ada', label: 'llama.cpp WebUI' })).token,
      reader: (await server.access.create({ user: 'ada', label: 'viewer', readOnly: true })).token,
    });
    const fastTokens = await tokens(fast);
    const sdkTokens = await tokens(sdk);
    const both = async (message: string, role: 'writer' | 'reader') => {
      const viaFastPath = await postRpc(fast.port, message, { Authorization: `Bearer ${fastTokens[role]}` });
      const viaSdk = await postRpc(sdk.port, `[${message}]`, { Authorization: `Bearer ${sdkTokens[role]}` });
      expect(viaFastPath.headers['content-type']).toBe('application/json');
      expect(viaFastPath.body).toBe(sseData(viaSdk));
      return viaFastPath.body;
    };

    await both(call('memory_write', { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' }), 'writer');
    expect(await both(call('memory_write', { name: 'topics/me', new: 'Likes tea.' }), 'reader')).toContain(
      '"isError":true',
    );
    expect(await both(call('memory_open', { names: ['topics/me'] }), 'reader')).toContain('Name: Ada.');
    const actors = async (server: TestServer) =>
      (await server.store.history('ada', 'topics/me')).map((revision) => revision.actor);
    expect(await actors(fast)).toEqual(['llama.cpp WebUI']);
    expect(await actors(sdk)).toEqual(['llama.cpp WebUI']);
  });
});

describe('what the fast path declines reaches the SDK through the app', () => {
  it('answers initialize, a batch and a 2025 request with an unknown version as the SDK does', async () => {
    const server = await startTestServer();
    const initialize = rpc('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'test', version: '1' },
    });
    const initialized = await postRpc(server.port, initialize);
    expect(initialized.headers['content-type']).toBe('text/event-stream');
    expect(sseData(initialized)).toContain('"serverInfo":{"name":"engram"');

    const batch = await postRpc(server.port, `[${rpc('ping')}]`);
    expect(batch.headers['content-type']).toBe('text/event-stream');

    const unknownVersion = await postRpc(server.port, call('memory_open', {}), {
      'MCP-Protocol-Version': '1999-01-01',
    });
    expect(unknownVersion.status).toBe(400);
    expect(unknownVersion.body).toContain('Unsupported protocol version: 1999-01-01');
  });

  it('refuses, as the SDK does, a client that does not accept SSE, and a body that is not declared JSON', async () => {
    const server = await startTestServer();
    const notAcceptable = await postRpc(server.port, call('memory_open', {}), { Accept: 'application/json' });
    expect(notAcceptable.status).toBe(406);
    const wrongType = await postRpc(server.port, call('memory_open', {}), { 'Content-Type': 'text/plain' });
    expect(wrongType.status).toBe(415);
  });
});
