/**
 * `POST /register`: Dynamic Client Registration (RFC 7591) for connectors such as
 * Claude's. The body is JSON within the OAuth body cap; what it may hold is the client
 * service's to decide (core/oauth/clients.ts). 201 with the registration, or 400 with
 * invalid_redirect_uri / invalid_client_metadata.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OAuthClients } from '../../core/oauth/clients.js';
import { isOAuthError } from '../../core/oauth/types.js';
import { readJson, sendOAuthError, sendOAuthJson } from './answers.js';

export function serveRegister(clients: OAuthClients) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readJson(req, res, 'invalid_client_metadata');
    if (body === undefined) return;
    try {
      sendOAuthJson(res, 201, await clients.register(body.value));
    } catch (error) {
      if (!isOAuthError(error)) throw error;
      sendOAuthError(res, error);
    }
  };
}
