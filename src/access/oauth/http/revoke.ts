/**
 * `POST /revoke` (RFC 7009): a form with the token to revoke; an access or refresh token
 * ends its whole grant. The answer is 200 whether or not the token was known, so the
 * endpoint tells nobody which tokens exist.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OAuthTokens } from '../tokens.js';
import { OAuthError } from '../types.js';
import { readForm, sendOAuthError } from './answers.js';

export function serveRevoke(tokens: OAuthTokens) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const params = await readForm(req, res);
    if (params === undefined) return;
    const token = params.get('token');
    if (!token) {
      sendOAuthError(res, new OAuthError('invalid_request', 'token is missing: send the token to revoke.'));
      return;
    }
    await tokens.revoke(token);
    res.writeHead(200, { 'Cache-Control': 'no-store', 'Content-Length': 0 });
    res.end();
  };
}
