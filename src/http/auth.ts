/**
 * Who is calling over HTTP. With `--auth none` every request acts as the local user;
 * with `--auth token` a request must carry `Authorization: Bearer <token>`, checked by
 * the Access service on every request (so a revoked token fails at once).
 */

import type { Access } from '../core/access.js';
import type { Caller } from '../core/caller.js';
import { isEngramError } from '../core/errors.js';

export type AuthSettings =
  | { readonly mode: 'none'; readonly user: string }
  | { readonly mode: 'token'; readonly access: Access };

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

export function createAuthenticate(settings: AuthSettings): Authenticate {
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
