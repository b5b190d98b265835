/**
 * The rate limits of OAuth's endpoints (access/rate-limits): every request to /token,
 * /register and /authorize counts against its client address (`auth`), and a sign-in on
 * the consent form also against the user it names (`sign-in`). Past a limit, /token and
 * /register answer 429 with `{"error": "too_many_requests", "error_description"}`: RFC
 * 6749 has no code for it (`slow_down` is the device flow's, `temporarily_unavailable`
 * the authorization endpoint's redirect), and `too_many_requests` is the code the MCP
 * SDK's own authorization server answers with and its client reads (TooManyRequestsError);
 * any other client still has the status and Retry-After. The consent page answers a page.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { addressGroup, clientAddress } from '../../../http/client-address.js';
import { allowanceWords, rateLimitHeaders, waitWords } from '../../rate-limits/answers.js';
import type { RateCheck, RateLimits, RateVerdict } from '../../rate-limits/rate-limits.js';
import { sendOAuthJson } from './answers.js';

/** The `auth` check of the request's client address (its /64 for IPv6). */
export function addressCheck(req: IncomingMessage, trustProxy: boolean): RateCheck {
  return ['auth', addressGroup(clientAddress(req, trustProxy))];
}

/** What a refused request reads: which limit, and when to try again. */
export function rateLimitedWords(verdict: RateVerdict): string {
  const what =
    verdict.rule.name === 'sign-in'
      ? `too many failed sign-ins as this user: the server takes ${allowanceWords(verdict, 'failed sign-in', 'per user')}`
      : `too many requests from this address to the sign-in and token endpoints: the server takes ${allowanceWords(verdict, 'request', 'per address')}`;
  return `${what}. Try again in ${waitWords(verdict.resetSeconds)}.`;
}

/**
 * Counts the request against its address on /token or /register; when that is past the
 * limit, answers 429 in OAuth's shape and returns true.
 */
export async function refusedByRate(
  req: IncomingMessage,
  res: ServerResponse,
  limits: RateLimits | undefined,
  trustProxy: boolean,
): Promise<boolean> {
  const refused = await limits?.refusal([addressCheck(req, trustProxy)]);
  if (refused === undefined) return false;
  sendOAuthJson(
    res,
    429,
    { error: 'too_many_requests', error_description: rateLimitedWords(refused) },
    rateLimitHeaders(refused),
  );
  return true;
}
