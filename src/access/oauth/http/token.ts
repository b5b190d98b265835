/**
 * `POST /token` (RFC 6749 §3.2, §4.1.3, §6): a form naming its grant type,
 * authorization_code (with PKCE) or refresh_token, from a public client that names
 * itself with client_id. The door checks that the code or refresh token (and a refresh's
 * client_id) is there; the token service (access/oauth/tokens.ts) checks the rest, a code
 * exchange's only once the code is spent, so that a code has one attempt whatever is
 * wrong with it. Answers are never cached.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OAuthTokens, TokenResponse } from '../tokens.js';
import { isOAuthError, OAuthError } from '../types.js';
import { readForm, sendOAuthError, sendOAuthJson } from './answers.js';

const REQUIRED = {
  authorization_code: ['code'],
  refresh_token: ['refresh_token', 'client_id'],
} as const;

type GrantType = keyof typeof REQUIRED;

function isGrantType(value: string): value is GrantType {
  return Object.hasOwn(REQUIRED, value);
}

function exchange(tokens: OAuthTokens, grantType: GrantType, params: Map<string, string>): Promise<TokenResponse> {
  const get = (name: string) => params.get(name) ?? '';
  if (grantType === 'authorization_code') {
    return tokens.exchangeCode({
      code: get('code'),
      codeVerifier: get('code_verifier'),
      redirectUri: get('redirect_uri'),
      clientId: get('client_id'),
      resource: params.get('resource'),
    });
  }
  return tokens.refresh({
    refreshToken: get('refresh_token'),
    clientId: get('client_id'),
    scope: params.get('scope'),
    resource: params.get('resource'),
  });
}

export function serveToken(tokens: OAuthTokens) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const params = await readForm(req, res);
    if (params === undefined) return;
    try {
      const grantType = params.get('grant_type');
      if (grantType === undefined || grantType === '') {
        throw new OAuthError('invalid_request', 'grant_type is missing: authorization_code or refresh_token.');
      }
      if (!isGrantType(grantType)) {
        throw new OAuthError(
          'unsupported_grant_type',
          `grant_type ${JSON.stringify(grantType)} is not supported here: use authorization_code or refresh_token.`,
        );
      }
      const missing = REQUIRED[grantType].filter((name) => !params.get(name));
      if (missing.length > 0) {
        throw new OAuthError('invalid_request', `${grantType} needs ${missing.join(', ')}, which the request lacks.`);
      }
      sendOAuthJson(res, 200, await exchange(tokens, grantType, params));
    } catch (error) {
      if (!isOAuthError(error)) throw error;
      sendOAuthError(res, error);
    }
  };
}
