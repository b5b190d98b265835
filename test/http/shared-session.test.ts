/**
 * One sign-in serves the web UI and the consent page of connected apps: a browser signed
 * in through `POST /api/session` is recognised on `/authorize` (no password asked), and
 * signing out of the web UI signs it out there too.
 */

import { expect, it } from 'vitest';
import { api } from './api-client.js';
import { raw } from './fixtures.js';
import { CHALLENGE, startOAuthServer } from './oauth-fixtures.js';

const PASSWORD = 'correct horse battery staple';

it('a web UI sign-in is the consent page’s sign-in, and its sign-out too', async () => {
  const server = await startOAuthServer({
    configured: [
      { id: 'claude', kind: 'configured', name: 'Claude', redirectUris: ['https://claude.ai/api/mcp/auth_callback'] },
    ],
  });
  await server.accounts.create('alice', PASSWORD);
  const ownPage = { Origin: server.origin, 'X-Engram-CSRF': '1' };
  const signedIn = await api(server.port, 'POST', '/api/session', {
    body: { user: 'alice', password: PASSWORD },
    headers: ownPage,
  });
  const cookie = (signedIn.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '';
  const query = new URLSearchParams({
    client_id: 'claude',
    redirect_uri: 'https://claude.ai/api/mcp/auth_callback',
    response_type: 'code',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    scope: 'memory:read memory:write',
    state: 'xyz',
  });
  const consent = () => raw(server.port, { path: `/authorize?${query}`, headers: { Cookie: cookie } });

  expect((await consent()).body).toContain('<p>Signed in as <strong>alice</strong>.');
  await api(server.port, 'DELETE', '/api/session', { headers: { Cookie: cookie, ...ownPage } });
  const after = (await consent()).body;
  expect(after).not.toContain('Signed in as');
  expect(after).toContain('name="password"');
});
