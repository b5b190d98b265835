/**
 * POST /register (RFC 7591) over HTTP: a public client is registered and answered with
 * 201; every refusal has its status and OAuth error code (the body's type, its JSON, its
 * size, each limit of the registration, the cap on registrations, one address registering
 * on and on) and registers nothing.
 */

import { describe, expect, it } from 'vitest';
import { raw } from './fixtures.js';
import { postJson, startOAuthServer } from './oauth-fixtures.js';

const CLAUDE = {
  client_name: 'Claude',
  redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
};

describe('POST /register', () => {
  it('registers a public client: 201, the registration, never cached; any page may call it', async () => {
    const server = await startOAuthServer();
    const response = await postJson(server.port, '/register', CLAUDE, { Origin: 'https://claude.ai' });
    expect(response.status).toBe(201);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['access-control-allow-origin']).toBe('https://claude.ai');
    const registration = JSON.parse(response.body);
    expect(registration).toEqual({
      client_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      client_id_issued_at: expect.any(Number),
      client_name: 'Claude',
      redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    expect(await server.clients.resolve(registration.client_id)).toMatchObject({ name: 'Claude', kind: 'registered' });
  });

  it.each(['client_secret_post', 'client_secret_basic'])(
    'registers a client that asks for %s as a public one, and says so: no secret, method none',
    async (method) => {
      const server = await startOAuthServer();
      const response = await postJson(server.port, '/register', { ...CLAUDE, token_endpoint_auth_method: method });
      expect(response.status).toBe(201);
      const registration = JSON.parse(response.body);
      expect(registration.token_endpoint_auth_method).toBe('none');
      expect(registration).not.toHaveProperty('client_secret');
      expect(await server.clients.resolve(registration.client_id)).toMatchObject({
        name: 'Claude',
        kind: 'registered',
      });
    },
  );

  it.each([
    [
      'a client authentication method other than a secret',
      { ...CLAUDE, token_endpoint_auth_method: 'private_key_jwt' },
      400,
      'invalid_client_metadata',
      /public clients only/,
    ],
    ['no redirect URI', { client_name: 'x' }, 400, 'invalid_redirect_uri', /redirect_uris must be a list of 1-10/],
    [
      'an http redirect URI off this computer',
      { redirect_uris: ['http://claude.ai/cb'] },
      400,
      'invalid_redirect_uri',
      /use https/,
    ],
    ['a fragment', { redirect_uris: ['https://claude.ai/cb#x'] }, 400, 'invalid_redirect_uri', /fragment/],
    [
      '11 redirect URIs',
      { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://claude.ai/${i}`) },
      400,
      'invalid_redirect_uri',
      /1-10/,
    ],
    [
      'a long name',
      { ...CLAUDE, client_name: 'x'.repeat(101) },
      400,
      'invalid_client_metadata',
      /at most 100 characters/,
    ],
    ['the implicit grant', { ...CLAUDE, grant_types: ['implicit'] }, 400, 'invalid_client_metadata', /"implicit"/],
    ['response type token', { ...CLAUDE, response_types: ['token'] }, 400, 'invalid_client_metadata', /"token"/],
    ['a JSON array', [CLAUDE], 400, 'invalid_client_metadata', /JSON object/],
  ])('refuses %s: %i %s, and registers nothing', async (_, body, status, error, description) => {
    const server = await startOAuthServer();
    const response = await postJson(server.port, '/register', body);
    expect(response.status).toBe(status);
    expect(response.headers['cache-control']).toBe('no-store');
    const answer = JSON.parse(response.body);
    expect(answer.error).toBe(error);
    expect(answer.error_description).toMatch(description);
    expect(await server.store.oauth.countClients()).toBe(0);
  });

  it.each([
    ['a form', 'application/x-www-form-urlencoded', 'client_name=x', 'send the request as application/json.'],
    ['no type', '', '{}', 'send the request as application/json.'],
    ['bad JSON', 'application/json', '{"redirect_uris": [', 'the request body is not valid JSON.'],
    [
      'JSON nested too deep',
      'application/json',
      `${'['.repeat(100)}${']'.repeat(100)}`,
      'the request body is not valid JSON.',
    ],
  ])('refuses %s with invalid_client_metadata, registering nothing', async (_, type, body, description) => {
    const server = await startOAuthServer();
    const response = await raw(server.port, {
      method: 'POST',
      path: '/register',
      headers: type ? { 'Content-Type': type } : {},
      body,
    });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toEqual({ error: 'invalid_client_metadata', error_description: description });
    expect(await server.store.oauth.countClients()).toBe(0);
  });

  it('refuses a body over 32 KiB with 413, registering nothing', async () => {
    const server = await startOAuthServer();
    const response = await postJson(server.port, '/register', { ...CLAUDE, padding: 'x'.repeat(33 * 1024) });
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toEqual({
      error: 'invalid_request',
      error_description: 'the request body is larger than 32768 bytes.',
    });
    expect(await server.store.oauth.countClients()).toBe(0);
  });

  it('at the cap, the oldest registration nobody allowed gives way to the new one (the 503 is in oauth-register-flood)', async () => {
    const server = await startOAuthServer({ maxRegistrations: 1 });
    const first = JSON.parse((await postJson(server.port, '/register', CLAUDE)).body);
    const response = await postJson(server.port, '/register', CLAUDE);
    expect(response.status).toBe(201);
    expect(await server.store.oauth.countClients()).toBe(1);
    expect(await server.store.oauth.findClient(first.client_id)).toBeUndefined();
    expect(await server.store.oauth.findClient(JSON.parse(response.body).client_id)).toBeDefined();
  });

  it('slows down one address that registers on and on (429, Retry-After), registering nothing, while others register', async () => {
    const server = await startOAuthServer({ trustProxy: true });
    const from = (address: string) => ({ 'X-Forwarded-For': address });
    for (let i = 0; i < 10; i++) {
      expect((await postJson(server.port, '/register', CLAUDE, from('203.0.113.7'))).status).toBe(201);
    }
    const refused = await postJson(server.port, '/register', CLAUDE, from('203.0.113.7'));
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(JSON.parse(refused.body)).toEqual({
      error: 'temporarily_unavailable',
      error_description:
        'too many registrations from this address: try again in 60 seconds, or register once and keep the ' +
        'client_id (a client may also use the HTTPS URL of its metadata document as client_id).',
    });
    expect(await server.store.oauth.countClients()).toBe(10);
    expect((await postJson(server.port, '/register', CLAUDE, from('198.51.100.2'))).status).toBe(201);
    expect(await server.store.oauth.countClients()).toBe(11);
  });

  it('refuses GET with 405', async () => {
    const server = await startOAuthServer();
    const response = await raw(server.port, { path: '/register' });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('POST, OPTIONS');
  });
});
