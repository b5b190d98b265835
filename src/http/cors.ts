/**
 * CORS for browser MCP clients such as the llama.cpp WebUI: the answer to a preflight
 * (any request header the page asks for), and the headers that let an allowed page read a response (including a 401's
 * `WWW-Authenticate`). Whether an origin is allowed at all is decided in origins.ts.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';

const ALLOW_METHODS = 'POST, GET, PUT, DELETE, OPTIONS';
const ALLOW_HEADERS = 'Content-Type, Accept, Authorization, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID';
const EXPOSE_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate';
/** Browsers may reuse a preflight answer for this many seconds. */
const MAX_AGE_SECONDS = 86_400;

/** Headers for any response to an allowed origin. */
export function corsHeaders(origin: string): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers': EXPOSE_HEADERS,
    Vary: 'Origin',
  };
}

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The headers MCP needs, and every other one the page asks for: the Origin check is the
 * gate, so a client whose user adds custom headers (the llama.cpp WebUI lets them) works.
 */
function allowHeaders(requested: string | undefined): string {
  const known = new Set(ALLOW_HEADERS.toLowerCase().split(', '));
  const extra = (requested ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => HEADER_NAME.test(name) && !known.has(name.toLowerCase()));
  return [ALLOW_HEADERS, ...new Set(extra)].join(', ');
}

/** Headers for the 204 answering an allowed origin's preflight. */
function preflightHeaders(origin: string, req: IncomingMessage): Record<string, string> {
  return {
    ...corsHeaders(origin),
    'Access-Control-Allow-Methods': ALLOW_METHODS,
    'Access-Control-Allow-Headers': allowHeaders(req.headers['access-control-request-headers']),
    'Access-Control-Max-Age': String(MAX_AGE_SECONDS),
    // Chrome asks before a public page may call a private address (Private Network Access).
    ...(req.headers['access-control-request-private-network'] === 'true'
      ? { 'Access-Control-Allow-Private-Network': 'true' }
      : {}),
  };
}

/** The 204 answering OPTIONS on a route: a page's preflight gets the CORS headers, anyone else `Allow`. */
export function answerOptions(req: IncomingMessage, res: ServerResponse, allow: string): void {
  const origin = req.headers.origin;
  res.writeHead(204, origin === undefined ? { Allow: allow } : preflightHeaders(origin, req));
  res.end();
}
