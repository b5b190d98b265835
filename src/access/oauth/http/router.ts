/**
 * The OAuth endpoints of `engram serve --auth oauth` (DESIGN §8), routed before the
 * Origin check of memory routes: discovery, registration, token and revocation hold no
 * memory and are protected by PKCE and their tokens, so any web page may call them (the
 * MCP SDK in a browser discovers and registers with fetch), and each answers CORS for
 * every Origin. The consent page (/authorize) is a page the browser navigates to, not an
 * endpoint pages call: it is routed here too, with its own checks and no CORS.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerOptions, corsHeaders } from '../../../http/cors.js';
import type { RateLimits } from '../../rate-limits/rate-limits.js';
import type { Authorization, AuthorizationOptions } from '../authorization.js';
import type { OAuthClients } from '../clients.js';
import type { OAuthTokens } from '../tokens.js';
import { sendMethodNotAllowed, sendOAuthJson } from './answers.js';
import { type ConsentAccounts, createAuthorizeRoute } from './authorize.js';
import { authorizationServerMetadata, issuerOf, protectedResourceMetadata, resourceOf } from './metadata.js';
import { refusedByRate } from './rate-limit.js';
import { serveRegister } from './register.js';
import { serveRevoke } from './revoke.js';
import { serveToken } from './token.js';

export interface OAuthRoutesOptions {
  readonly clients: OAuthClients;
  readonly tokens: OAuthTokens;
  /** --public-url, or the listening origin: every URL the metadata names starts with it. */
  readonly publicUrl: URL;
  /** The consent step, for the issuer and resource the public URL names. */
  readonly authorization: (server: Pick<AuthorizationOptions, 'issuer' | 'resource'>) => Authorization;
  readonly accounts: ConsentAccounts;
  /** Sign-in failures and rate limits count against the client address a proxy in front reports (--trust-proxy). */
  readonly trustProxy: boolean;
  /** The limits of /token, /register and /authorize (rate-limit.ts); none when undefined. */
  readonly rateLimits?: RateLimits | undefined;
}

/** Serves the request if its path is an OAuth endpoint; false when it is not one. */
export type OAuthRoutes = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<boolean>;

interface Endpoint {
  /** The methods it takes, as the Allow header lists them (the first one is named in a 405). */
  readonly allow: string;
  readonly serve: (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;
  /** Counted by the `auth` rate limit of the client address (the endpoints that sign in or issue). */
  readonly limited?: boolean;
}

function document(value: unknown): Endpoint {
  return { allow: 'GET, HEAD, OPTIONS', serve: (_req, res) => sendOAuthJson(res, 200, value) };
}

export function createOAuthRoutes(options: OAuthRoutesOptions): OAuthRoutes {
  const resourceMetadata = document(protectedResourceMetadata(options.publicUrl));
  const serverMetadata = document(authorizationServerMetadata(options.publicUrl));
  /** Endpoints any web page may call. */
  const endpoints = new Map<string, Endpoint>([
    ['/.well-known/oauth-protected-resource', resourceMetadata],
    ['/.well-known/oauth-protected-resource/mcp', resourceMetadata],
    ['/.well-known/oauth-authorization-server', serverMetadata],
    ['/.well-known/openid-configuration', serverMetadata],
    [
      '/register',
      {
        allow: 'POST, OPTIONS',
        serve: serveRegister(options.clients, { trustProxy: options.trustProxy }),
        limited: true,
      },
    ],
    ['/token', { allow: 'POST, OPTIONS', serve: serveToken(options.tokens), limited: true }],
    ['/revoke', { allow: 'POST, OPTIONS', serve: serveRevoke(options.tokens) }],
  ]);

  const authorize = createAuthorizeRoute({
    authorization: options.authorization({
      issuer: issuerOf(options.publicUrl),
      resource: resourceOf(options.publicUrl),
    }),
    accounts: options.accounts,
    publicUrl: options.publicUrl,
    trustProxy: options.trustProxy,
    rateLimits: options.rateLimits,
  });

  return async (req, res, path) => {
    if (path === '/authorize') {
      await authorize(req, res);
      return true;
    }
    const endpoint = endpoints.get(path);
    if (endpoint === undefined) return false;
    const origin = req.headers.origin;
    if (origin !== undefined)
      for (const [name, value] of Object.entries(corsHeaders(origin))) res.setHeader(name, value);
    const method = req.method ?? '';
    if (method === 'OPTIONS') answerOptions(req, res, endpoint.allow);
    else if (!endpoint.allow.split(', ').includes(method)) sendMethodNotAllowed(res, endpoint.allow);
    else if (!(endpoint.limited && (await refusedByRate(req, res, options.rateLimits, options.trustProxy))))
      await endpoint.serve(req, res);
    return true;
  };
}
