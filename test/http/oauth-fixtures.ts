/**
 * What the OAuth HTTP tests share: `engram serve --auth oauth` started in-process on a
 * free port over the in-process store, and the consent step's effect written straight
 * into the store (a grant and its authorization code, as Authorization.approve records
 * them), so the token endpoint and /mcp are tested on their own; plus form and JSON posts.
 */

import { createHash } from 'node:crypto';
import { onTestFinished } from 'vitest';
import type { Accounts, ThrottleRules } from '../../src/access/accounts/accounts.js';
import type { OAuthClients } from '../../src/access/oauth/clients.js';
import { hashSecret, newSecret } from '../../src/access/oauth/secrets.js';
import type { OAuthTokens } from '../../src/access/oauth/tokens.js';
import type { CodeData, OAuthClient } from '../../src/access/oauth/types.js';
import { parseRateLimits, resolveRateLimits } from '../../src/access/rate-limits/rules.js';
import type { Access } from '../../src/access/tokens/access.js';
import { createApp } from '../../src/app.js';
import { startHttpServer } from '../../src/http/server.js';
import type { Memory } from '../../src/memory/memory.js';
import { type MemoryStore, openMemoryStore } from '../../src/storage/memory/index.js';
import { ensureAccount } from '../helpers/account-holder.js';
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
  /** When the accounts service behind the consent page slows sign-ins down. */
  readonly throttle?: Partial<ThrottleRules>;
  /** Where it logs refused sign-ins. */
  readonly log?: (line: string) => void;
  /** Honour X-Forwarded-For, as behind a proxy (--trust-proxy). */
  readonly trustProxy?: boolean;
  /** The services' clock in milliseconds (Date.now unless told). */
  readonly now?: () => number;
  /** Rate limits as --rate-limit writes them, over the defaults of --auth oauth; none when absent. */
  readonly rateLimit?: string;
}

/** Starts `engram serve --auth oauth` on a free port; it is stopped when the test ends. */
export async function startOAuthServer(options: OAuthTestServerOptions = {}): Promise<OAuthTestServer> {
  const store = openMemoryStore();
  const app = createApp({
    store,
    now: options.now,
    access: {
      clients: options.configured ?? [CLAUDE],
      maxRegistrations: options.maxRegistrations,
      passwordCost: TEST_PASSWORD_COST,
      throttle: options.throttle,
    },
    log: options.log,
  });
  const clients = app.oauth.clients();
  const server = await startHttpServer({
    app,
    version: '0.0.0-test',
    auth: { mode: 'oauth', clients },
    allowOrigins: options.allowOrigins ?? [],
    host: '127.0.0.1',
    port: 0,
    log: () => {},
    publicUrl: options.publicUrl,
    trustProxy: options.trustProxy,
    rateLimits:
      options.rateLimit === undefined
        ? undefined
        : await app.rateLimits(resolveRateLimits('oauth', [parseRateLimits(options.rateLimit)])),
  });
  onTestFinished(() => server.close());
  const { memory, access, accounts } = app;
  return {
    port: server.port,
    origin: server.origin,
    store,
    memory,
    access,
    tokens: app.oauth.tokens,
    clients,
    accounts,
  };
}

export const VERIFIER = 'a-verifier.of_enough~length-43-characters-or-more';
export const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
export const REDIRECT_URI = 'https://claude.ai/api/mcp/auth_callback';
export const CLIENT_ID = 'client-claude';
/** The client of authorizeDirectly, configured unless a test configures its own. */
const CLAUDE: OAuthClient = { id: CLIENT_ID, kind: 'configured', name: 'Claude', redirectUris: [REDIRECT_URI] };

/**
 * What the consent step stores when `user` allows: a grant of CLIENT_ID ("Claude"), read-only
 * or in review mode if asked, and its code, good for `codeTtlMs` (a minute).
 */
export async function authorizeDirectly(
  server: OAuthTestServer,
  options: {
    readonly user?: string;
    readonly readOnly?: boolean;
    readonly review?: boolean;
    readonly codeTtlMs?: number;
  } = {},
): Promise<{ readonly grantId: string; readonly code: string }> {
  const now = Date.now();
  const grantId = `grant-${Math.random().toString(36).slice(2)}`;
  const code = newSecret('code');
  const data: CodeData = { redirectUri: REDIRECT_URI, codeChallenge: CHALLENGE };
  const user = options.user ?? 'ada';
  await ensureAccount(server.store.accounts, user, now);
  await server.store.oauth.saveGrant(
    {
      id: grantId,
      user,
      clientId: CLIENT_ID,
      clientName: 'Claude',
      readOnly: options.readOnly ?? false,
      resource: `${server.origin}/mcp`,
      created: now,
      lastUsed: undefined,
      review: options.review ?? false,
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
