/**
 * The MCP SDK's own OAuth client (v1 `auth()` behind StreamableHTTPClientTransport)
 * against `--auth oauth`: it discovers the server from the 401, registers (DCR), is sent
 * to /authorize, exchanges the code, calls the tools as the app, refreshes, and is
 * refused once the app is revoked; and, when it comes back after its registration was
 * forgotten, it is told so (401 invalid_client) and registers again. The consent step is
 * played by the test, writing the grant and code as the consent page does, for the
 * challenge and redirect URI the SDK sent.
 */

import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens as SdkTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { expect, it, onTestFinished } from 'vitest';
import { hashSecret, newSecret } from '../../src/access/oauth/secrets.js';
import type { CodeData } from '../../src/access/oauth/types.js';
import { ensureAccount } from '../helpers/account-holder.js';
import { type OAuthTestServer, startOAuthServer } from './oauth-fixtures.js';

const REDIRECT = 'http://127.0.0.1:9/callback';

interface Kept {
  client?: OAuthClientInformationMixed;
  tokens?: SdkTokens;
  verifier?: string;
  code?: string;
  authorizationUrl?: URL;
}

/** An SDK client provider that keeps everything in memory, and plays the user allowing the request. */
function provider(server: OAuthTestServer) {
  const kept: Kept = {};
  const sdkProvider: OAuthClientProvider = {
    get redirectUrl() {
      return REDIRECT;
    },
    get clientMetadata(): OAuthClientMetadata {
      return {
        client_name: 'SDK test app',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      };
    },
    clientInformation: () => kept.client,
    saveClientInformation: (client) => {
      kept.client = client;
    },
    tokens: () => kept.tokens,
    saveTokens: (tokens) => {
      kept.tokens = tokens;
    },
    saveCodeVerifier: (verifier) => {
      kept.verifier = verifier;
    },
    codeVerifier: () => kept.verifier ?? '',
    // What a client forgets when the server says its tokens, or its registration, are no good.
    invalidateCredentials: (scope) => {
      if (scope === 'all' || scope === 'client') kept.client = undefined;
      if (scope === 'all' || scope === 'tokens') kept.tokens = undefined;
      if (scope === 'all' || scope === 'verifier') kept.verifier = undefined;
    },
    async redirectToAuthorization(url) {
      kept.authorizationUrl = url;
      // What the consent page records when the user allows: a grant and its code.
      const clientId = url.searchParams.get('client_id')!;
      const now = Date.now();
      const grantId = `grant-${now}`;
      const code = newSecret('code');
      const data: CodeData = {
        redirectUri: url.searchParams.get('redirect_uri')!,
        codeChallenge: url.searchParams.get('code_challenge')!,
      };
      const client = await server.clients.resolve(clientId);
      await ensureAccount(server.store.accounts, 'ada', now);
      await server.store.oauth.saveGrant(
        {
          id: grantId,
          user: 'ada',
          clientId,
          clientName: client.name,
          readOnly: false,
          resource: url.searchParams.get('resource')!,
          created: now,
          lastUsed: undefined,
          review: false,
        },
        {
          hash: hashSecret(code),
          grantId,
          kind: 'code',
          created: now,
          expires: now + 60_000,
          used: undefined,
          data: JSON.stringify(data),
        },
      );
      kept.code = code;
    },
  };
  return { sdkProvider, kept };
}

async function connect(server: OAuthTestServer, sdkProvider: OAuthClientProvider) {
  const client = new Client({ name: 'sdk-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`), { authProvider: sdkProvider });
  onTestFinished(() => client.close().catch(() => {}));
  await client.connect(transport);
  return client;
}

/** The SDK's first connection: refused, it registers and is sent to authorize; the person allows; it gets tokens. */
async function authorizeFirst(server: OAuthTestServer, sdkProvider: OAuthClientProvider, kept: Kept) {
  const first = new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`), { authProvider: sdkProvider });
  await expect(new Client({ name: 'sdk-test', version: '1.0.0' }).connect(first)).rejects.toThrow(/Unauthorized/);
  expect(kept.client).toMatchObject({ client_name: 'SDK test app', token_endpoint_auth_method: 'none' });
  const asked = kept.authorizationUrl!;
  expect(`${asked.origin}${asked.pathname}`).toBe(`${server.origin}/authorize`);
  expect(Object.fromEntries(asked.searchParams)).toMatchObject({
    response_type: 'code',
    client_id: kept.client!.client_id,
    redirect_uri: REDIRECT,
    code_challenge_method: 'S256',
    resource: `${server.origin}/mcp`,
  });

  await first.finishAuth(kept.code!);
  expect(kept.tokens).toMatchObject({ token_type: 'Bearer', scope: 'memory:read memory:write' });
}

it('discovers, registers, authorizes, calls tools as the app, refreshes, and is refused once revoked', async () => {
  const server = await startOAuthServer();
  const { sdkProvider, kept } = provider(server);
  await authorizeFirst(server, sdkProvider, kept);

  const client = await connect(server, sdkProvider);
  const written = await client.callTool({
    name: 'memory_write',
    arguments: { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' },
  });
  expect(written.isError).toBeFalsy();
  const history = await server.memory.recovery.history({ user: 'ada', label: 'test' }, 'topics/me');
  expect(history.at(-1)?.actor).toBe('SDK test app');

  // An expired or unknown access token: the SDK refreshes with its refresh token and goes on.
  const refreshToken = kept.tokens!.refresh_token!;
  kept.tokens = { ...kept.tokens!, access_token: 'engram_at_expired' };
  const again = await connect(server, sdkProvider);
  expect((await again.callTool({ name: 'memory_open', arguments: {} })).isError).toBeFalsy();
  expect(kept.tokens.refresh_token).not.toBe(refreshToken);

  const [app] = await server.tokens.listApps();
  expect(app).toMatchObject({ name: 'SDK test app', user: 'ada' });
  await server.tokens.revokeApp(app!.id);
  await expect(again.callTool({ name: 'memory_open', arguments: {} })).rejects.toThrow();
});

it('registers again when it comes back after its registration was forgotten (revoked, then purged a day later)', async () => {
  const server = await startOAuthServer();
  const { sdkProvider, kept } = provider(server);
  await authorizeFirst(server, sdkProvider, kept);
  const forgotten = kept.client!.client_id;
  const [app] = await server.tokens.listApps();
  await server.tokens.revokeApp(app!.id);
  // The hourly purge forgets a registered client that no grant names, once a day old.
  expect(await server.store.oauth.removeUnusedClients(Date.now() + 1, Date.now() + 1)).toBe(1);

  // Its refresh is answered 401 invalid_client, so the SDK forgets its client id and registers anew.
  const refresh = await fetch(`${server.origin}/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: kept.tokens!.refresh_token!,
      client_id: forgotten,
    }),
  });
  expect(refresh.status).toBe(401);
  expect(await refresh.json()).toEqual({
    error: 'invalid_client',
    error_description: `the client ${JSON.stringify(forgotten)} is not registered here (any more): register again.`,
  });
  expect(await auth(sdkProvider, { serverUrl: `${server.origin}/mcp` })).toBe('REDIRECT');
  expect(kept.client!.client_id).not.toBe(forgotten);
  expect(kept.authorizationUrl!.searchParams.get('client_id')).toBe(kept.client!.client_id);
  expect(await auth(sdkProvider, { serverUrl: `${server.origin}/mcp`, authorizationCode: kept.code! })).toBe(
    'AUTHORIZED',
  );
  const client = await connect(server, sdkProvider);
  expect((await client.callTool({ name: 'memory_open', arguments: {} })).isError).toBeFalsy();
});
