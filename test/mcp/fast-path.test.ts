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
 * for the SDK to answer as before.
 */

import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import {
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { createFastPath } from '../../src/mcp/fast-path.js';
import type { Caller } from '../../src/memory/memory.js';
import { DEFAULT_POLICY } from '../../src/memory/model/policy.js';
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

describe('the fast path declines everything else', () => {
  const calls: unknown[] = [];
  const fastPath = createFastPath<string>({
    handler: async (caller, tool, args) => {
      calls.push({ caller, tool, args });
      return { text: 'done', isError: false };
    },
    policy: DEFAULT_POLICY,
    caller: (who): Caller => ({ user: who, label: 'http', readOnly: false }),
  });
  const headersOf = (extra: IncomingHttpHeaders = {}): IncomingHttpHeaders => ({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-06-18',
    ...extra,
  });
  /** A response that fails the test if the fast path writes anything to it. */
  const untouchable = new Proxy({} as ServerResponse, {
    get: (_target, property) => {
      throw new Error(`the fast path touched the response (${String(property)}) of a request it should decline`);
    },
  });
  const attempt = (body: unknown, headers: IncomingHttpHeaders = headersOf()) =>
    fastPath({ headers } as IncomingMessage, untouchable, body, 'ada');

  const request = (method: string, params?: unknown, id: unknown = 1) => ({
    jsonrpc: '2.0',
    id,
    method,
    ...(params === undefined ? {} : { params }),
  });
  const open = { name: 'memory_open', arguments: {} };

  it.each<[string, unknown]>([
    ['a batch', [request('ping')]],
    ['initialize', request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: open })],
    ['a notification', { jsonrpc: '2.0', method: 'notifications/initialized' }],
    ['a response', { jsonrpc: '2.0', id: 1, result: {} }],
    ['another method', request('resources/list')],
    ['a null id', request('ping', undefined, null)],
    ['a fractional id', request('ping', undefined, 1.5)],
    ['an object id', request('ping', undefined, { id: 1 })],
    ['another JSON-RPC version', { ...request('ping'), jsonrpc: '1.0' }],
    ['a member beyond JSON-RPC', { ...request('ping'), extra: true }],
    ['ping with _meta', request('ping', { _meta: { progressToken: 1 } })],
    ['tools/list with a cursor', request('tools/list', { cursor: 'next' })],
    ['tools/call without params', request('tools/call')],
    ['tools/call with _meta', request('tools/call', { ...open, _meta: { progressToken: 1 } })],
    ['tools/call as a task', request('tools/call', { ...open, task: { ttl: 1000 } })],
    ['tools/call with a name that is not a string', request('tools/call', { name: 5 })],
    ['tools/call with arguments in an array', request('tools/call', { name: 'memory_open', arguments: [] })],
    ['tools/call with null arguments', request('tools/call', { name: 'memory_open', arguments: null })],
    [
      'a 2026 per-request envelope',
      request('tools/call', {
        ...open,
        _meta: {
          [PROTOCOL_VERSION_META_KEY]: '2026-07-28',
          [CLIENT_INFO_META_KEY]: { name: 'x', version: '1' },
        },
      }),
    ],
    ['a body that is not an object', 'ping'],
  ])('declines %s', (_case, body) => {
    expect(attempt(body)).toBeUndefined();
    expect(calls).toEqual([]);
  });

  it.each<[string, IncomingHttpHeaders]>([
    ['no Accept header', headersOf({ accept: undefined })],
    ['an Accept header without text/event-stream', headersOf({ accept: 'application/json' })],
    ['an Accept header without application/json', headersOf({ accept: 'text/event-stream' })],
    ['no Content-Type', headersOf({ 'content-type': undefined })],
    ['a Content-Type other than JSON', headersOf({ 'content-type': 'text/plain' })],
    ['a 2026 protocol version header', headersOf({ 'mcp-protocol-version': '2026-07-28' })],
    ['an unknown protocol version header', headersOf({ 'mcp-protocol-version': '1999-01-01' })],
    ['an Mcp-Method header', headersOf({ 'mcp-method': 'tools/call' })],
    ['an Mcp-Name header', headersOf({ 'mcp-name': 'memory_open' })],
  ])('declines a tools/call with %s', (_case, headers) => {
    expect(attempt(request('tools/call', open), headers)).toBeUndefined();
    expect(calls).toEqual([]);
  });

  it('answers a hot call for the caller built from whoever the HTTP layer authenticated', async () => {
    const written: { head?: unknown[]; body?: string } = {};
    const res = {
      writeHead: (...head: unknown[]) => {
        written.head = head;
      },
      end: (body: string) => {
        written.body = body;
      },
    } as unknown as ServerResponse;
    await fastPath({ headers: headersOf() } as IncomingMessage, res, request('tools/call', open, 'c1'), 'ada');
    expect(calls.splice(0)).toEqual([
      { caller: { user: 'ada', label: 'http', readOnly: false }, tool: 'memory_open', args: {} },
    ]);
    expect(written.body).toBe(
      '{"result":{"content":[{"type":"text","text":"done"}],"isError":false},"jsonrpc":"2.0","id":"c1"}',
    );
    expect(written.head).toEqual([
      200,
      { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(written.body ?? '') },
    ]);
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
