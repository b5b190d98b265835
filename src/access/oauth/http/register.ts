/**
 * `POST /register`: Dynamic Client Registration (RFC 7591) for connectors such as
 * Claude's. The body is JSON within the OAuth body cap; what it may hold is the client
 * service's to decide (access/oauth/clients.ts). 201 with the registration, or 400 with
 * invalid_redirect_uri / invalid_client_metadata.
 *
 * Anyone may register, and registrations are capped in total, so one address that
 * registers on and on would fill the cap for everyone: past a few registrations an
 * address waits before its next one, longer each time (429 with Retry-After). An IPv6
 * address counts as its /64 network, which one party holds whole (one home, one server).
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { addressGroup, clientAddress } from '../../../http/client-address.js';
import { SignInThrottle } from '../../accounts/sign-in-throttle.js';
import type { OAuthClients } from '../clients.js';
import { isOAuthError } from '../types.js';
import { readJson, sendOAuthError, sendOAuthJson } from './answers.js';

/**
 * Registrations one address makes freely, then waits of a minute, doubling, up to an hour;
 * forgotten after a quiet hour. A client registers once (some once per sign-in), so a
 * person never meets the wait; a flood from one address gets a handful an hour.
 */
const REGISTRATIONS_PER_ADDRESS = {
  freeFailures: 10,
  baseDelayMs: 60_000,
  maxDelayMs: 60 * 60_000,
  quietMs: 60 * 60_000,
  maxKeys: 10_000,
};

export interface RegisterOptions {
  /** Count registrations against the address a proxy in front reports (--trust-proxy). */
  readonly trustProxy: boolean;
  /** Clock in milliseconds; tests inject one. */
  readonly now?: () => number;
}

export function serveRegister(clients: OAuthClients, options: RegisterOptions) {
  const perAddress = new SignInThrottle(REGISTRATIONS_PER_ADDRESS);
  const now = options.now ?? Date.now;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const address = addressGroup(clientAddress(req, options.trustProxy));
    const wait = perAddress.waitSeconds(address, now());
    if (wait > 0) {
      sendOAuthJson(
        res,
        429,
        {
          error: 'temporarily_unavailable',
          error_description:
            `too many registrations from this address: try again in ${wait} seconds, or register once and ` +
            'keep the client_id (a client may also use the HTTPS URL of its metadata document as client_id).',
        },
        { 'Retry-After': String(wait) },
      );
      return;
    }
    const body = await readJson(req, res, 'invalid_client_metadata');
    if (body === undefined) return;
    try {
      const registration = await clients.register(body.value);
      perAddress.fail(address, now());
      sendOAuthJson(res, 201, registration);
    } catch (error) {
      if (!isOAuthError(error)) throw error;
      sendOAuthError(res, error);
    }
  };
}
