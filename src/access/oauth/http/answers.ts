/**
 * How the OAuth endpoints answer (RFC 6749 §5.1-5.2, RFC 7591 §3.2, RFC 7009): JSON that
 * is never cached (it carries tokens), and a refusal as `{"error", "error_description"}`
 * with the status the RFCs give its code; and how they read a request: a small body, as
 * a form whose parameters each come once (RFC 6749 §3.2) or as JSON.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody } from '../../../http/limits.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../../json/json-nesting.js';
import { OAuthError, type OAuthErrorCode } from '../types.js';

/** Largest body an OAuth endpoint reads: a registration of 10 redirect URIs of 2,000 characters fits. */
export const OAUTH_MAX_BODY_BYTES = 32 * 1024;

const STATUS_BY_ERROR: Partial<Record<OAuthErrorCode, number>> = {
  invalid_client: 401,
  temporarily_unavailable: 503,
  server_error: 500,
};

export function sendOAuthJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    Pragma: 'no-cache',
  });
  res.end(body);
}

/** A refusal in the protocol's terms: 400, or 401 for invalid_client, 503 when the server cannot take more. */
export function sendOAuthError(res: ServerResponse, error: OAuthError, headers: Record<string, string> = {}): void {
  sendOAuthJson(
    res,
    STATUS_BY_ERROR[error.error] ?? 400,
    { error: error.error, error_description: error.description },
    headers,
  );
}

/** 405 for a method the endpoint does not take. */
export function sendMethodNotAllowed(res: ServerResponse, allow: string): void {
  sendOAuthJson(
    res,
    405,
    { error: 'invalid_request', error_description: `use ${allow.split(', ')[0]} on this endpoint.` },
    { Allow: allow },
  );
}

function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** The body, or a refusal already sent (413 past the cap) and undefined. */
async function readSmallBody(req: IncomingMessage, res: ServerResponse): Promise<string | undefined> {
  const body = await readBody(req, OAUTH_MAX_BODY_BYTES);
  if (body.kind === 'read') return body.text;
  sendOAuthJson(
    res,
    413,
    { error: 'invalid_request', error_description: `the request body is larger than ${OAUTH_MAX_BODY_BYTES} bytes.` },
    { Connection: 'close' },
  );
  return undefined;
}

/**
 * An application/x-www-form-urlencoded body as its parameters; a refusal is sent (and
 * undefined returned) for another type, a body past the cap or a parameter sent twice.
 */
export async function readForm(req: IncomingMessage, res: ServerResponse): Promise<Map<string, string> | undefined> {
  if (mediaType(req) !== 'application/x-www-form-urlencoded') {
    sendOAuthError(
      res,
      new OAuthError(
        'invalid_request',
        'send the parameters as application/x-www-form-urlencoded (RFC 6749 §3.2), not ' +
          `${JSON.stringify(req.headers['content-type'] ?? 'no Content-Type')}.`,
      ),
    );
    return undefined;
  }
  const text = await readSmallBody(req, res);
  if (text === undefined) return undefined;
  const params = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(text)) {
    if (params.has(name)) {
      sendOAuthError(
        res,
        new OAuthError('invalid_request', `the parameter ${name} is sent more than once; send it once.`),
      );
      return undefined;
    }
    params.set(name, value);
  }
  return params;
}

/** A JSON body, parsed; a refusal is sent (and undefined returned) for another type, a body past the cap or bad JSON. */
export async function readJson(
  req: IncomingMessage,
  res: ServerResponse,
  code: OAuthErrorCode,
): Promise<{ readonly value: unknown } | undefined> {
  if (mediaType(req) !== 'application/json') {
    sendOAuthError(res, new OAuthError(code, 'send the request as application/json.'));
    return undefined;
  }
  const text = await readSmallBody(req, res);
  if (text === undefined) return undefined;
  if (!nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    try {
      return { value: JSON.parse(text) };
    } catch {
      // Answered below, as for JSON nested too deep.
    }
  }
  sendOAuthError(res, new OAuthError(code, 'the request body is not valid JSON.'));
  return undefined;
}
