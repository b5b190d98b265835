/**
 * Who is calling over HTTP. With `--auth none` every request acts as the local user;
 * with `--auth token` a request must carry `Authorization: Bearer <token>`, checked by
 * the Access service on every request (so a revoked token fails at once). With `--auth
 * oauth` the bearer is an OAuth access token (OAuthTokens, bound to this server's /mcp)
 * or a static token; without a valid one the 401 points to the protected resource
 * metadata (RFC 9728 §5.1), where an MCP client discovers how to get one.
 */

import type { Authorization, AuthorizationOptions } from '../access/oauth/authorization.js';
import type { OAuthClients } from '../access/oauth/clients.js';
import type { ConsentAccounts } from '../access/oauth/http/authorize.js';
import { resourceMetadataUrlOf, resourceOf } from '../access/oauth/http/metadata.js';
import { SECRET_PREFIXES } from '../access/oauth/secrets.js';
import type { OAuthTokens } from '../access/oauth/tokens.js';
import { SCOPES } from '../access/oauth/types.js';
import type { Access } from '../access/tokens/access.js';
import type { App } from '../app.js';
import type { Caller } from '../memory/model/caller.js';
import { isEngramError } from '../memory/model/errors.js';

export type AuthSettings =
  | { readonly mode: 'none'; readonly user: string }
  | { readonly mode: 'token'; readonly access: Access }
  | {
      readonly mode: 'oauth';
      /** Static tokens keep working, for clients that send a bearer header of their own. */
      readonly access: Access;
      readonly tokens: OAuthTokens;
      readonly clients: OAuthClients;
      /** The consent step for this server's issuer and resource, which the app knows once it listens. */
      readonly authorization: (server: Pick<AuthorizationOptions, 'issuer' | 'resource'>) => Authorization;
      /** Who signs in on the consent page. */
      readonly accounts: ConsentAccounts;
    };

/**
 * Who may call `engram serve` (--auth): anyone on this computer as `user`, bearer tokens,
 * or OAuth too, with the client service serve completed (it fetches metadata documents).
 */
export type ServeAuth =
  | { readonly mode: 'none'; readonly user: string }
  | { readonly mode: 'token' }
  | { readonly mode: 'oauth'; readonly clients: OAuthClients };

/** What each mode checks callers with, taken from the services the composition root built (app.ts). */
export function authSettings(services: Pick<App, 'access' | 'accounts' | 'oauth'>, auth: ServeAuth): AuthSettings {
  if (auth.mode === 'none') return auth;
  if (auth.mode === 'token') return { mode: 'token', access: services.access };
  const { clients } = auth;
  return {
    mode: 'oauth',
    access: services.access,
    tokens: services.oauth.tokens,
    clients,
    authorization: (server) => services.oauth.authorization(clients, server),
    accounts: services.accounts,
  };
}

/** The label of a caller no token names, where its door has no better one. */
export const ANONYMOUS_LABEL = 'http';

export type AuthOutcome =
  | {
      readonly ok: true;
      /** Whose memory and what rights; the label is the token's (ANONYMOUS_LABEL without a token). */
      readonly caller: Caller;
      /**
       * True when no token names the caller (`--auth none`): each door then records its
       * own label instead (the MCP client's name over MCP, `api` for the REST API).
       */
      readonly anonymous: boolean;
    }
  /** Answered 401 with `challenge` as the `WWW-Authenticate` header (RFC 6750). */
  | { readonly ok: false; readonly message: string; readonly challenge: string };

export type Authenticate = (authorization: string | undefined) => Promise<AuthOutcome>;

const MISSING_TOKEN =
  'This server needs a token: send the header "Authorization: Bearer <token>". ' +
  'Its owner creates tokens with engram token create --user NAME.';

function bearerToken(authorization: string | undefined): string | undefined {
  return authorization?.match(/^Bearer +(\S+) *$/i)?.[1];
}

const MISSING_AUTHORIZATION =
  'This server needs authorization: connect with OAuth (MCP clients discover how from this answer), or send a ' +
  'token of engram token create as the header "Authorization: Bearer <token>".';
const INVALID_AUTHORIZATION =
  'The token was not accepted: it is wrong, expired or revoked. Connect again with OAuth (or refresh the token), ' +
  'or ask the owner of this server for a token (engram token create --user NAME).';

/** OAuth access tokens, then static tokens; the 401 challenge names the resource metadata and the scopes. */
function createOAuthAuthenticate(settings: Extract<AuthSettings, { mode: 'oauth' }>, publicUrl: URL): Authenticate {
  const resource = resourceOf(publicUrl);
  const challenge = `Bearer resource_metadata="${resourceMetadataUrlOf(publicUrl)}", scope="${SCOPES.join(' ')}"`;
  return async (authorization) => {
    const token = bearerToken(authorization);
    if (token === undefined) return { ok: false, message: MISSING_AUTHORIZATION, challenge };
    // A static token may start like an access token by chance: it is tried too when the access token is unknown.
    const caller = token.startsWith(SECRET_PREFIXES.access)
      ? await settings.tokens.authenticate(token, resource)
      : undefined;
    if (caller !== undefined) return { ok: true, caller, anonymous: false };
    try {
      return { ok: true, caller: await settings.access.authenticate(token), anonymous: false };
    } catch (error) {
      if (!isEngramError(error) || error.code !== 'UNAUTHORIZED') throw error;
      return { ok: false, message: INVALID_AUTHORIZATION, challenge: `${challenge}, error="invalid_token"` };
    }
  };
}

/**
 * How requests are authenticated; `publicUrl` (--public-url, or the listening origin)
 * names the resource OAuth tokens must be bound to and where its metadata is.
 */
export function createAuthenticate(settings: AuthSettings, publicUrl: URL | undefined): Authenticate {
  if (settings.mode === 'oauth') {
    if (publicUrl === undefined) throw new Error('--auth oauth needs the public URL of the server');
    return createOAuthAuthenticate(settings, publicUrl);
  }
  if (settings.mode === 'none') {
    const outcome: AuthOutcome = {
      ok: true,
      caller: { user: settings.user, label: ANONYMOUS_LABEL, readOnly: false },
      anonymous: true,
    };
    return async () => outcome;
  }
  const { access } = settings;
  return async (authorization) => {
    const token = bearerToken(authorization);
    if (token === undefined) return { ok: false, message: MISSING_TOKEN, challenge: 'Bearer realm="engram"' };
    try {
      return { ok: true, caller: await access.authenticate(token), anonymous: false };
    } catch (error) {
      if (!isEngramError(error) || error.code !== 'UNAUTHORIZED') throw error;
      return { ok: false, message: error.message, challenge: 'Bearer realm="engram", error="invalid_token"' };
    }
  };
}
