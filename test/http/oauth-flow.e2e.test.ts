/**
 * The whole OAuth flow as ChatGPT and Claude run it, against `engram serve --auth oauth`
 * as an operator starts it (the built CLI, a child process), with the MCP SDK's own
 * client (v1 `auth()` behind StreamableHTTPClientTransport) and the consent page played
 * in Chromium: discovery from the 401 (resource metadata, then authorization server
 * metadata), registration (Dynamic Client Registration, or a Client ID Metadata Document
 * served by the test over HTTPS from the test CA), the person signing in and allowing,
 * the code exchanged, the tools called as the app (its name in `engram history`), a
 * refresh, and `engram token revoke` ending it: the next call gets 401 and the SDK cannot
 * refresh. With registration, on SQLite and on PostgreSQL where one is available; with a
 * metadata document, on SQLite.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser } from 'playwright-core';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { postgresBackend, SQLITE_BACKEND, type TestBackend } from '../helpers/backends.js';
import { sharedChromium } from '../helpers/chromium.js';
import { findTestPostgres } from '../helpers/postgres.js';
import { startHttpsServer, testCertificateFiles } from '../helpers/tls.js';
import {
  type ConsentSeen,
  type EngramOAuthServer,
  loggingFetch,
  PASSWORD,
  personInBrowser,
  type RedirectTarget,
  startEngramOAuth,
  startRedirectTarget,
  TestOAuthProvider,
} from './oauth-e2e.js';

const postgres = await findTestPostgres();
const BACKENDS: TestBackend[] = [SQLITE_BACKEND, ...(postgres === undefined ? [] : [postgresBackend(postgres)])];

let browser: Browser;
beforeAll(async () => {
  browser = await sharedChromium();
}, 60_000);

interface App {
  readonly server: EngramOAuthServer;
  readonly target: RedirectTarget;
  readonly provider: TestOAuthProvider;
  /** The person's view of each consent page they answered. */
  readonly seen: ConsentSeen[];
  /** The app's name as Engram shows it and records it in history. */
  readonly shownAs: string;
  /** Every request the SDK made, as `METHOD /path STATUS`. */
  readonly log: string[];
  /** Whether the person is at the browser to answer the consent page; when not, the SDK is left waiting. */
  present: boolean;
}

/**
 * An app whose user, when sent to the consent page, signs in as Ada and allows. `name` is
 * what it would register with; `shownAs` is how Engram names it (its metadata document's
 * name, when it has one).
 */
async function app(
  server: EngramOAuthServer,
  name: string,
  options: { readonly clientMetadataUrl?: string; readonly shownAs?: string } = {},
): Promise<App> {
  const { clientMetadataUrl, shownAs = name } = options;
  const target = await startRedirectTarget();
  const person = personInBrowser(browser, target, { user: 'Ada', password: PASSWORD, decision: 'allow' });
  const made: App = {
    server,
    target,
    seen: person.seen,
    shownAs,
    log: [],
    present: true,
    provider: new TestOAuthProvider(
      target.redirectUri,
      name,
      (url) => (made.present ? person.consent(url) : Promise.resolve(undefined)),
      clientMetadataUrl,
    ),
  };
  return made;
}

function transport(app: App): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(app.server.mcpUrl, {
    authProvider: app.provider,
    fetch: loggingFetch(app.log),
  });
}

/** A connected MCP client, closed when the test ends. */
async function connect(app: App): Promise<Client> {
  const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
  onTestFinished(() => client.close().catch(() => {}));
  await client.connect(transport(app));
  return client;
}

/**
 * The POSTs made since `from`: the GETs are the metadata the SDK fetches again before each
 * token request, and its attempt to open an event stream, which may come at any moment.
 */
function since(app: App, from: number): string[] {
  return app.log.slice(from).filter((line) => line.startsWith('POST '));
}

/**
 * The first connection: refused with 401, the SDK discovers, registers unless its client id
 * is a metadata document URL, and sends the person to the consent page, who allows; the
 * code comes back to the redirect URI and is exchanged for tokens.
 */
async function authorize(app: App): Promise<void> {
  const { server, provider } = app;
  const first = transport(app);
  await expect(new Client({ name: 'oauth-e2e', version: '1.0.0' }).connect(first)).rejects.toThrow(UnauthorizedError);
  const registers = provider.clientMetadataUrl === undefined;
  expect(app.log).toEqual([
    'POST /mcp 401',
    'GET /.well-known/oauth-protected-resource/mcp 200',
    'GET /.well-known/oauth-authorization-server 200',
    ...(registers ? ['POST /register 201'] : []),
  ]);
  const [asked] = provider.authorizationUrls;
  expect(`${asked?.origin}${asked?.pathname}`).toBe(`${server.origin}/authorize`);
  expect(Object.fromEntries(asked?.searchParams ?? [])).toEqual({
    response_type: 'code',
    client_id: provider.client?.client_id,
    code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    code_challenge_method: 'S256',
    redirect_uri: app.target.redirectUri,
    state: provider.lastState,
    scope: 'memory:read memory:write',
    resource: `${server.origin}/mcp`,
  });
  const [page] = app.seen;
  expect(page?.heading).toBe(`Connect ${app.shownAs} to your Engram memory`);
  expect(page?.text).toContain(`your browser goes back to this computer (${new URL(app.target.redirectUri).host})`);
  expect(Object.fromEntries(provider.returns[0] ?? [])).toEqual({
    code: expect.stringMatching(/^engram_code_/),
    state: provider.lastState,
    iss: server.origin,
  });

  const before = app.log.length;
  await first.finishAuth(provider.code);
  expect(since(app, before)).toEqual(['POST /token 200']);
  expect(provider.saved).toMatchObject({
    token_type: 'Bearer',
    expires_in: 3600,
    scope: 'memory:read memory:write',
    access_token: expect.stringMatching(/^engram_at_/),
    refresh_token: expect.stringMatching(/^engram_rt_/),
  });
}

/** The tools as the app: exactly three, a write, a read; `engram history` names the app. */
async function useTools(app: App, client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name).sort()).toEqual(['memory_drop', 'memory_open', 'memory_write']);
  const written = await client.callTool({
    name: 'memory_write',
    arguments: { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' },
  });
  expect(written.isError).toBeFalsy();
  const opened = await client.callTool({ name: 'memory_open', arguments: { names: ['topics/me'] } });
  expect(opened.isError).toBeFalsy();
  expect(JSON.stringify(opened.content)).toContain('Name: Ada.');
  const history = JSON.parse(await app.server.cli(['history', 'topics/me', '--user', 'ada', '--json'])) as {
    actor: string;
  }[];
  expect(history.map((revision) => revision.actor)).toEqual([app.shownAs]);
}

/**
 * Refresh, both ways the SDK does it: asked again with saved tokens, and when /mcp refuses
 * the access token it holds (as when it has expired); each rotates the refresh token.
 */
async function refresh(app: App, client: Client): Promise<void> {
  const { provider } = app;
  const spent = provider.saved?.refresh_token;
  let before = app.log.length;
  expect(await auth(provider, { serverUrl: app.server.mcpUrl, fetchFn: loggingFetch(app.log) })).toBe('AUTHORIZED');
  expect(since(app, before)).toEqual(['POST /token 200']);
  expect(provider.saved?.refresh_token).toMatch(/^engram_rt_/);
  expect(provider.saved?.refresh_token).not.toBe(spent);

  const rotated = provider.saved?.refresh_token;
  provider.saved = { ...provider.saved!, access_token: 'engram_at_no-longer-valid' };
  before = app.log.length;
  expect((await client.callTool({ name: 'memory_open', arguments: {} })).isError).toBeFalsy();
  expect(since(app, before)).toEqual(['POST /mcp 401', 'POST /token 200', 'POST /mcp 200']);
  expect(provider.saved?.refresh_token).not.toBe(rotated);
  expect(provider.authorizationUrls).toHaveLength(1);
}

/**
 * `engram token list` shows the app; `engram token revoke ID` ends it: the next call gets
 * 401, the SDK's refresh is refused, and it can only send the person to authorize again,
 * with nothing issued meanwhile.
 */
async function revoke(app: App, client: Client): Promise<void> {
  const { server, provider } = app;
  const [listed, ...others] = await server.apps();
  expect(others).toEqual([]);
  expect(listed).toMatchObject({
    kind: 'app',
    user: 'ada',
    label: app.shownAs,
    clientId: provider.client?.client_id,
    readOnly: false,
    scopes: ['memory:read', 'memory:write'],
  });
  expect(await server.cli(['token', 'revoke', listed!.id])).toContain(`Revoked the connected app ${listed!.id}`);

  app.present = false;
  const before = app.log.length;
  await expect(client.callTool({ name: 'memory_open', arguments: {} })).rejects.toThrow(UnauthorizedError);
  expect(since(app, before)).toEqual(['POST /mcp 401', 'POST /token 400']);
  expect(provider.authorizationUrls).toHaveLength(2);
  expect(provider.returns).toHaveLength(1);
  expect(await server.apps()).toEqual([]);
  // The browser session of Ada's sign-in stays; no grant, code or token does.
  expect(await server.issued()).toEqual({ grants: 0, secrets: 0, sessions: 1 });
  expect(server.stderr()).not.toContain(PASSWORD);
}

describe.each(BACKENDS)('on $label', (backend) => {
  it('the SDK discovers, registers (DCR), is allowed in Chromium, calls the tools as the app, refreshes, and is refused once revoked', async () => {
    const server = await startEngramOAuth({ backend });
    const chatgpt = await app(server, 'ChatGPT');
    await authorize(chatgpt);
    expect(chatgpt.provider.client).toMatchObject({
      client_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      client_name: 'ChatGPT',
      redirect_uris: [chatgpt.target.redirectUri],
      token_endpoint_auth_method: 'none',
    });
    const client = await connect(chatgpt);
    await useTools(chatgpt, client);
    await refresh(chatgpt, client);
    await revoke(chatgpt, client);
  }, 60_000);
});

describe('a Client ID Metadata Document', () => {
  it('served over HTTPS names the client: the SDK uses its URL as client_id, without registering, through to revocation', async () => {
    const fetched: string[] = [];
    let document: unknown;
    const site = await startHttpsServer((req: IncomingMessage, res: ServerResponse) => {
      fetched.push(`${req.method} ${req.url} ${req.headers['user-agent']}`);
      if (req.url !== '/oauth/claude.json') return void res.writeHead(404).end();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(document));
    });
    const documentUrl = `${site.origin}/oauth/claude.json`;
    document = {
      client_id: documentUrl,
      client_name: 'Claude',
      // A loopback redirect URI matches on any port (RFC 8252): the app listens where it can.
      redirect_uris: ['http://127.0.0.1/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
    const server = await startEngramOAuth({
      config: { allowPrivateClientMetadata: true },
      env: { NODE_EXTRA_CA_CERTS: testCertificateFiles().ca },
    });
    // The name the SDK would register with is not the one shown: the document's is.
    const claude = await app(server, 'Claude (unregistered)', { clientMetadataUrl: documentUrl, shownAs: 'Claude' });
    await authorize(claude);
    expect(claude.provider.client).toMatchObject({ client_id: documentUrl });
    expect(fetched).toEqual(['GET /oauth/claude.json Engram (OAuth client metadata)']);
    expect(Number((await server.database.query<{ n: number }>('SELECT count(*) AS n FROM oauth_clients'))[0]?.n)).toBe(
      0,
    );

    const client = await connect(claude);
    await useTools(claude, client);
    await refresh(claude, client);
    await revoke(claude, client);
  }, 60_000);
});
