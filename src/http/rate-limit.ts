/**
 * The per-token rate limits of the HTTP door (access/rate-limits): whom a request to /mcp,
 * /ws or /api counts against — the bearer token it sends, else the browser session of its
 * cookie, else (a server without auth whose limits were turned on) its client address —
 * and the refusal each reader gets: a model over MCP, a script or the web UI over /api.
 */

import type { IncomingMessage } from 'node:http';
import { SESSION_COOKIE } from '../access/oauth/http/authorize.js';
import { readCookie } from '../access/oauth/http/cookies.js';
import { allowanceWords, waitWords } from '../access/rate-limits/answers.js';
import type { RateVerdict } from '../access/rate-limits/rate-limits.js';
import { addressGroup, clientAddress } from './client-address.js';

/** Whom a request counts against under the per-token limits, given the Authorization value it presents. */
export function tokenSubject(req: IncomingMessage, authorization: string | undefined, trustProxy: boolean): string {
  const token = authorization?.replace(/^\s*bearer\s+/i, '').trim();
  if (token) return `token ${token}`;
  const session = readCookie(req.headers.cookie, SESSION_COOKIE);
  if (session !== undefined) return `session ${session}`;
  return `address ${addressGroup(clientAddress(req, trustProxy))}`;
}

/** What a model reads when its MCP request is refused (a JSON-RPC error's message). */
export function mcpRateLimitedMessage(verdict: RateVerdict): string {
  return (
    `Rate limited: this connection has sent more than the server allows (${allowanceWords(verdict, 'MCP request')}), ` +
    `so this call was not carried out. Wait ${waitWords(verdict.resetSeconds)}, then call again; ` +
    'repeating the call sooner is refused the same way.'
  );
}

/** What a script or the web UI reads when its /api request is refused. */
export function apiRateLimitedMessage(verdict: RateVerdict): string {
  if (verdict.rule.name === 'api') {
    return (
      `Too many requests: this token or browser has sent more than the server allows (${allowanceWords(verdict, 'API request')}). ` +
      `Wait ${waitWords(verdict.resetSeconds)}, then try again.`
    );
  }
  const who =
    verdict.rule.name === 'sign-in'
      ? `Too many failed sign-ins as this user (the server takes ${allowanceWords(verdict, 'failed sign-in', 'per user')})`
      : `Too many sign-in attempts from this address (the server takes ${allowanceWords(verdict, 'request', 'per address')})`;
  return `${who}. Wait ${waitWords(verdict.resetSeconds)}, then sign in again.`;
}
