/**
 * Discovery under --auth oauth: /mcp without a valid token answers 401 with the challenge
 * MCP clients follow (resource metadata and scopes, invalid_token when a token was sent),
 * the RFC 9728 and RFC 8414 documents are exactly as specified and built from the public
 * URL, any page may read them (CORS), and the static tokens of engram token create still
 * work on /mcp and /api. Without --auth oauth none of this is served.
 */

import { describe, expect, it } from 'vitest';
import { postRpc, raw, rpc, rpcMessage, startTestServer } from './fixtures.js';
import { startOAuthServer } from './oauth-fixtures.js';

const WRITE = rpc('tools/call', {
  name: 'memory_write',
  arguments: { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' },
});

function protectedResource(base: string) {
  return {
    resource: `${base}/mcp`,
    authorization_servers: [base],
    scopes_supported: ['memory:read', 'memory:write'],
    bearer_methods_supported: ['header'],
  };
}

function authorizationServer(base: string) {
  return {
    issuer: base,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    registration_endpoint: `${base}/register`,
    revocation_endpoint: `${base}/revoke`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: ['memory:read', 'memory:write'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

describe('the 401 challenge of /mcp', () => {
  it('without a token: the resource metadata and the scopes', async () => {
    const server = await startOAuthServer();
    const response = await postRpc(server.port, WRITE);
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe(
      `Bearer resource_metadata="${server.origin}/.well-known/oauth-protected-resource/mcp", scope="memory:read memory:write"`,
    );
    expect(rpcMessage(response).error?.message).toBe(
      'This server needs authorization: connect with OAuth (MCP clients discover how from this answer), or send a ' +
        'token of engram token create as the header "Authorization: Bearer <token>".',
    );
    expect(await server.memory.index({ user: 'ada', label: 'test' })).toEqual([]);
  });

  it.each(['engram_at_unknown', 'engram_unknown', 'whatever'])(
    'with the unknown token %s: invalid_token',
    async (token) => {
      const server = await startOAuthServer();
      const response = await postRpc(server.port, WRITE, { Authorization: `Bearer ${token}` });
      expect(response.status).toBe(401);
      expect(response.headers['www-authenticate']).toBe(
        `Bearer resource_metadata="${server.origin}/.well-known/oauth-protected-resource/mcp", scope="memory:read memory:write", error="invalid_token"`,
      );
      expect(rpcMessage(response).error?.message).toMatch(
        /^The token was not accepted: it is wrong, expired or revoked/,
      );
    },
  );

  it('names the public URL when one is given', async () => {
    const server = await startOAuthServer({ publicUrl: new URL('http://localhost:4321') });
    const response = await postRpc(server.port, WRITE);
    expect(response.headers['www-authenticate']).toBe(
      'Bearer resource_metadata="http://localhost:4321/.well-known/oauth-protected-resource/mcp", scope="memory:read memory:write"',
    );
  });
});

describe('metadata', () => {
  it.each([
    ['/.well-known/oauth-protected-resource', protectedResource],
    ['/.well-known/oauth-protected-resource/mcp', protectedResource],
    ['/.well-known/oauth-authorization-server', authorizationServer],
    ['/.well-known/openid-configuration', authorizationServer],
  ])('GET %s answers exactly its document, built from the listening origin', async (path, expected) => {
    const server = await startOAuthServer();
    const response = await raw(server.port, { path });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(response.body)).toEqual(expected(server.origin));
  });

  it('builds every URL from --public-url, never from the Host or X-Forwarded headers', async () => {
    const server = await startOAuthServer({ publicUrl: new URL('http://localhost:4321') });
    const headers = { 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'https' };
    const resource = await raw(server.port, { path: '/.well-known/oauth-protected-resource/mcp', headers });
    expect(JSON.parse(resource.body)).toEqual(protectedResource('http://localhost:4321'));
    const metadata = await raw(server.port, { path: '/.well-known/oauth-authorization-server', headers });
    expect(JSON.parse(metadata.body)).toEqual(authorizationServer('http://localhost:4321'));
  });

  it('lets any web page read it, and answers its preflight', async () => {
    const server = await startOAuthServer({ allowOrigins: ['https://only.example'] });
    const path = '/.well-known/oauth-authorization-server';
    const response = await raw(server.port, { path, headers: { Origin: 'https://claude.ai' } });
    expect(response.status).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBe('https://claude.ai');
    const preflight = await raw(server.port, {
      method: 'OPTIONS',
      path: '/token',
      headers: { Origin: 'https://claude.ai', 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://claude.ai');
    expect(preflight.headers['access-control-allow-methods']).toContain('POST');
  });

  it('answers HEAD without a body and refuses POST with 405', async () => {
    const server = await startOAuthServer();
    const path = '/.well-known/oauth-protected-resource';
    const head = await raw(server.port, { method: 'HEAD', path });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    const post = await raw(server.port, { method: 'POST', path });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD, OPTIONS');
    expect(JSON.parse(post.body)).toEqual({ error: 'invalid_request', error_description: 'use GET on this endpoint.' });
  });

  it.each(['token', 'none'] as const)('is not served with --auth %s', async (auth) => {
    const server = await startTestServer({ auth });
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-authorization-server', '/token']) {
      expect((await raw(server.port, { path })).status).toBe(404);
    }
  });
});

describe('static tokens under --auth oauth', () => {
  it('work on /mcp, with their label in history, and on /api', async () => {
    const server = await startOAuthServer();
    const { token } = await server.access.create({ user: 'ada', label: 'llama.cpp WebUI' });
    const response = await postRpc(server.port, WRITE, { Authorization: `Bearer ${token}` });
    expect(response.status).toBe(200);
    const history = await server.memory.recovery.history({ user: 'ada', label: 'test' }, 'topics/me');
    expect(history.at(-1)?.actor).toBe('llama.cpp WebUI');
    const api = await raw(server.port, { path: '/api/entries', headers: { Authorization: `Bearer ${token}` } });
    expect(api.status).toBe(200);
  });

  it('a web page from any origin may call /mcp with a token, unless origins are listed', async () => {
    const server = await startOAuthServer();
    const { token } = await server.access.create({ user: 'ada' });
    const response = await postRpc(server.port, WRITE, {
      Authorization: `Bearer ${token}`,
      Origin: 'https://chat.example',
    });
    expect(response.status).toBe(200);
    const listed = await startOAuthServer({ allowOrigins: ['https://only.example'] });
    const refused = await postRpc(listed.port, WRITE, {
      Authorization: `Bearer ${token}`,
      Origin: 'https://chat.example',
    });
    expect(refused.status).toBe(403);
  });
});
