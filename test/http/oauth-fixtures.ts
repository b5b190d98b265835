/**
 * What the OAuth HTTP tests share: `engram serve --auth oauth` started in-process on a
 * free port over the in-process store, and the consent step's effect written straight
 * into the store (a grant and its authorization code, as Authorization.approve records
 * them), so the token endpoint and /mcp are tested on their own; plus form and JSON posts.
 */

import { createHash } from 'node:crypto';
import { onTestFinished } from 'vitest';
import { type Accounts, type AccountsOptions, createAccounts } from '../../src/access/accounts/accounts.js';
import { Authorization } from '../../src/access/oauth/authorization.js';
import { OAuthClients } from '../../src/access/oauth/clients.js';
import { hashSecret, newSecret } from '../../src/access/oauth/secrets.js';
import { OAuthTokens } from '../../src/access/oauth/tokens.js';
import type { CodeData, OAuthClient } from '../../src/access/oauth/types.js';
import { type Access, createAccess } from '../../src/access/tokens/access.js';
import { startHttpServer } from '../../src/http/server.js';
import { createMemory, type Memory } from '../../src/memory/memory.js';
import { DEFAULT_POLICY } from '../../src/memory/model/policy.js';
import { createToolHandler } from '../../src/memory/tools/handler.js';
import { type MemoryStore, openMemoryStore } from '../../src/storage/memory/index.js';
import { TEST_PASSWORD_COST } from '../helpers/password-cost.js';
import { type RawResponse, raw } from './fixtures.js';

export interface OAuthTestServer {
  readonly port: number;
  /** http://127.0.0.1:<port>: the public URL when none is given. */
  readonly origin: string;
  readonly store: MemoryStore;
  readonly memory: Memory;
  readonly access: Access;
  readonly tokens: OAuthTokens;
  readonly clients: OAuthClients;
  /** Who signs in on the consent page. */
  readonly accounts: Accounts;
}

export interface OAuthTestServerOptions {
  readonly publicUrl?: URL;
  readonly maxRegistrations?: number;
  /** The clients of the config file (by default the one authorizeDirectly grants to). */
  readonly configured?: readonly OAuthClient[];
  readonly allowOrigins?: readonly string[];
  /** How the accounts service behind the consent page logs, throttles and tells time. */
  readonly accounts?: AccountsOptions;
  /** Honour X-Forwarded-For, as behind a proxy (--trust-proxy). */
  readonly trustProxy?: boolean;
  /** The token service's clock in milliseconds (Date.now unless told). */
  readonly now?: () => number;
}

/** Starts `engram serve --auth oauth` on a free port; it is stopped when the test ends. */
export async function startOAuthServer(options: OAuthTestServerOptions = {}): Promise<OAuthTestServer> {
  const store = openMemoryStore();
  const memory = createMemory({ store });
  const access = createAccess(store.tokens);
  const clients = new OAuthClients(store.oauth, {
    configured: options.configured ?? [CLAUDE],
    ...(options.maxRegistrations ? { maxRegistrations: options.maxRegistrations } : {}),
  });
  const tokens = new OAuthTokens(store.oauth, {
    ...(options.now ? { now: options.now } : {}),
    isKnownClient: (clientId) => clients.isKnown(clientId),
  });
  const accounts = createAccounts(store, { passwordCost: TEST_PASSWORD_COST, ...options.accounts });
  const server = await startHttpServer({
    handler: createToolHandler(memory),
    memory,
    policy: DEFAULT_POLICY,
    version: '0.0.0-test',
    auth: {
      mode: 'oauth',
      access,
      tokens,
      clients,
      authorization: (urls) => new Authorization(store.oauth, clients, urls),
      accounts,
    },
    // The web UI's sign-in, whose session the consent page shares.
    accounts,
    allowOrigins: options.allowOrigins ?? [],
    host: '127.0.0.1',
    port: 0,
    log: () => {},
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
    ...(options.trustProxy ? { trustProxy: true } : {}),
  });
  onTestFinished(() => server.close());
  return { port: server.port, origin: server.origin, store, memory, access, tokens, clients, accounts };
}

export const VERIFIER = 'a-verifier.of_enough~length-43-characters-or-more';
export const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
export const REDIRECT_URI = 'https://claude.ai/api/mcp/auth_callback';
export const CLIENT_ID = 'client-claude';
/** The client of authorizeDirectly, configured unless a test configures its own. */
const CLAUDE: OAuthClient = { id: CLIENT_ID, kind: 'configured', name: 'Claude', redirectUris: [REDIRECT_URI] };

/** What the consent step stores when `user` allows: a grant of CLIENT_ID ("Claude") and its code, good for `codeTtlMs` (a minute). */
export async function authorizeDirectly(
  server: OAuthTestServer,
  options: { readonly user?: string; readonly readOnly?: boolean; readonly codeTtlMs?: number } = {},
): Promise<{ readonly grantId: string; readonly code: string }> {
  const now = Date.now();
  const grantId = `grant-${Math.random().toString(36).slice(2)}`;
  const code = newSecret('code');
  const data: CodeData = { redirectUri: REDIRECT_URI, codeChallenge: CHALLENGE };
  await server.store.oauth.saveGrant(
    {
      id: grantId,
      user: options.user ?? 'ada',
      clientId: CLIENT_ID,
      clientName: 'Claude',
      readOnly: options.readOnly ?? false,
      resource: `${server.origin}/mcp`,
      created: now,
      lastUsed: undefined,
    },
    {
      hash: hashSecret(code),
      grantId,
      kind: 'code',
      created: now,
      expires: now + (options.codeTtlMs ?? 60_000),
      used: undefined,
      data: JSON.stringify(data),
    },
  );
  return { grantId, code };
}

/** POSTs a form, as OAuth clients call /token and /revoke. */
export function postForm(
  port: number,
  path: string,
  params: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  return raw(port, {
    method: 'POST',
    path,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params).toString(),
  });
}

export function postJson(port: number, path: string, value: unknown, headers: Record<string, string> = {}) {
  return raw(port, {
    method: 'POST',
    path,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(value),
  });
}

/** The code exchange a client makes after the consent step. */
export function exchangeCode(port: number, code: string, more: Record<string, string> = {}): Promise<RawResponse> {
  return postForm(port, '/token', {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    client_id: CLIENT_ID,
    code_verifier: VERIFIER,
    ...more,
  });
}
