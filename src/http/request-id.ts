/**
 * Each request's id: what its log line carries and what the answer's X-Request-Id header
 * gives back, so a person can find the line of a request they made. An id the client (or
 * the proxy in front) sent is kept when it is short and made of safe characters, so one
 * id follows a request through the proxy's log and Engram's; anything else is replaced.
 */

import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** Letters, digits and `._:-`, at most 64: safe in any log format, never a second line. */
const SAFE_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SAFE_ID.test(given) ? given : randomUUID();
}
