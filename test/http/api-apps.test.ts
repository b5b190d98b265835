/**
 * A user's connected apps over REST with `--auth oauth` (`GET /api/apps`,
 * `DELETE /api/apps/{id}`): their own listed and revoked, another user's unknown to them.
 * On the OAuth test server (oauth-fixtures.ts); /api/apps with --auth token: api-tokens.test.ts.
 */

import { describe, expect, it } from 'vitest';
import { api } from './api-client.js';
import { authorizeDirectly, startOAuthServer } from './oauth-fixtures.js';

describe('/api/apps', () => {
  it("lists the user's own connected apps and revokes one; another user's is unknown to them and stays", async () => {
    const server = await startOAuthServer();
    // The in-process OAuth server signs no browser in to /api: ada calls with a token of hers.
    const { token } = await server.access.create({ user: 'ada' });
    const ada = { token };
    const mine = await authorizeDirectly(server, { user: 'ada', readOnly: true });
    const theirs = await authorizeDirectly(server, { user: 'bob' });
    const listed = await api(server.port, 'GET', '/api/apps', ada);
    expect(listed.json).toEqual({
      apps: [
        {
          id: mine.grantId,
          name: 'Claude',
          clientId: 'client-claude',
          scopes: ['memory:read'],
          review: false,
          created: expect.any(String),
          lastUsed: null,
        },
      ],
    });
    const refused = await api(server.port, 'DELETE', `/api/apps/${theirs.grantId}`, ada);
    expect(refused.status).toBe(404);
    expect((await server.tokens.listAppsOf('bob')).map((app) => app.id)).toEqual([theirs.grantId]);
    const revoked = await api(server.port, 'DELETE', `/api/apps/${mine.grantId}`, ada);
    expect(revoked.json).toEqual({ revoked: mine.grantId });
    expect((await api(server.port, 'GET', '/api/apps', ada)).json).toEqual({ apps: [] });
  });
});
