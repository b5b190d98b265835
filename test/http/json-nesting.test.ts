/**
 * JSON nested far deeper than any request needs is a client's mistake, answered 400 on
 * /mcp (whichever path would serve it: the fast path or the MCP SDK) and on /api, never
 * a 500; the server goes on serving.
 */

import { describe, expect, it } from 'vitest';
import { api, apiError, LOCAL } from './api-client.js';
import { postRpc, rpc, rpcMessage, startTestServer } from './fixtures.js';

const DEEP = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
const TOO_DEEP = 'Invalid request: the JSON is nested more than 64 levels deep.';

describe('JSON nested 50,000 deep', () => {
  it.each([
    ['initialize (served by the MCP SDK)', `{"jsonrpc":"2.0","id":1,"method":"initialize","params":${DEEP}}`],
    [
      'tools/call (served by the fast path)',
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_open","arguments":{"names":${DEEP}}}}`,
    ],
  ])('is refused with 400 on /mcp: %s', async (_, body) => {
    const server = await startTestServer();
    const response = await postRpc(server.port, body);
    expect(response.status).toBe(400);
    expect(rpcMessage(response)).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: TOO_DEEP }, id: null });
    expect(server.logs.join('\n')).not.toMatch(/internal error|Maximum call stack/);
    expect(rpcMessage(await postRpc(server.port, rpc('ping'))).result).toEqual({});
  });

  it('is refused with 400 on /api', async () => {
    const server = await startTestServer();
    await server.memory.write(LOCAL, { name: 'topics/x', description: 'X', new: 'one' });
    const response = await api(server.port, 'POST', '/api/entries/topics/x/restore', { body: `{"revision":${DEEP}}` });
    expect(response.status).toBe(400);
    expect(response.json).toEqual(
      apiError('INVALID_ARGUMENT', /^the request body is JSON nested more than 64 levels deep/),
    );
  });
});
