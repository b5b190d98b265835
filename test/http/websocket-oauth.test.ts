/**
 * /ws under `--auth oauth`: the upgrade without a token gets /mcp's 401 and its challenge
 * (the resource metadata an MCP client discovers OAuth from); an OAuth access token, as
 * the `access_token` parameter, serves the SDK's WebSocket client, with the app's name
 * in history; revoking the app's grant closes its open socket at the next message.
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { WebSocket } from 'ws';
import { postRpc, rpc, rpcMessage } from './fixtures.js';
import { authorizeDirectly, exchangeCode, type OAuthTestServer, startOAuthServer } from './oauth-fixtures.js';

beforeAll(() => {
  vi.stubGlobal('WebSocket', WebSocket);
});
afterAll(() => {
  vi.unstubAllGlobals();
});

async function accessToken(server: OAuthTestServer): Promise<{ grantId: string; token: string }> {
  const { grantId, code } = await authorizeDirectly(server);
  const response = await exchangeCode(server.port, code);
  return { grantId, token: (JSON.parse(response.body) as { access_token: string }).access_token };
}

const wsUrl = (port: number, token?: string) =>
  `ws://127.0.0.1:${port}/ws${token === undefined ? '' : `?access_token=${encodeURIComponent(token)}`}`;

describe('/ws under --auth oauth', () => {
  it('without a token: 401 with the challenge and words of /mcp, before the upgrade', async () => {
    const server = await startOAuthServer();
    const refused = await new Promise<{ status: number; challenge: unknown; body: string }>((resolve) => {
      const socket = new WebSocket(wsUrl(server.port), ['mcp']);
      socket.on('error', () => {});
      socket.on('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => {
          body += chunk.toString('utf8');
        });
        response.on('end', () => {
          resolve({ status: response.statusCode ?? 0, challenge: response.headers['www-authenticate'], body });
          socket.terminate();
        });
      });
    });
    const overHttp = await postRpc(server.port, rpc('tools/list'));
    expect(refused.status).toBe(401);
    expect(refused.challenge).toBe(overHttp.headers['www-authenticate']);
    expect(refused.challenge).toMatch(/^Bearer resource_metadata="/);
    expect(JSON.parse(refused.body).error.message).toBe(rpcMessage(overHttp).error?.message);
  });

  it('serves an OAuth access token given as access_token; history names the app; revoking the grant closes the socket unanswered', async () => {
    const server = await startOAuthServer();
    const { grantId, token } = await accessToken(server);
    const client = new Client({ name: 'ignored', version: '1.0.0' });
    await client.connect(new WebSocketClientTransport(new URL(wsUrl(server.port, token))));
    onTestFinished(() => client.close());
    const written = await client.callTool({
      name: 'memory_write',
      arguments: { name: 'topics/me', description: 'Me', new: 'x' },
    });
    expect(written.isError).toBe(false);
    expect((await server.store.history('ada', 'topics/me')).map((revision) => revision.actor)).toEqual(['Claude']);

    const closed = new Promise<void>((resolve) => {
      client.onclose = resolve;
    });
    await server.store.oauth.revokeByGrantId(grantId);
    await expect(client.listTools()).rejects.toThrow();
    await closed;
  });
});
