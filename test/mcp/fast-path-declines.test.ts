/**
 * The fast path of MCP over HTTP called directly, without a server: every request outside
 * the hot, simple case (a batch, another method, an unusual id, member or header) is
 * declined with the response untouched, for the SDK to answer; a hot call runs the tool
 * handler for the caller the HTTP layer authenticated. That its answers equal the SDK's is
 * fast-path.test.ts.
 */

import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { createFastPath } from '../../src/mcp/fast-path.js';
import type { Caller } from '../../src/memory/memory.js';
import { DEFAULT_POLICY } from '../../src/memory/model/policy.js';

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
