/**
 * Who may read /metrics: a request from this machine, or one that carries the metrics
 * token (`ENGRAM_METRICS_TOKEN`, or the config file's "metricsToken") as a bearer token.
 * The metrics token reads /metrics and nothing else, and it is not a memory token: a
 * Prometheus scraping from another machine gets no way into anyone's memory, and no
 * token of a user can read the server's metrics. A request that a proxy forwarded (it
 * carries X-Forwarded-For, Forwarded or X-Real-IP) is not from this machine, though its
 * socket is: behind a reverse proxy on the same machine, every client would be. And with
 * --trust-proxy, nothing is taken as from this machine: a proxy that adds none of those
 * headers (a TCP proxy, an SSH tunnel) would hand every visitor a loopback socket.
 */

import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** The fewest characters a metrics token may have: a guessable one would open the metrics to anyone. */
export const MIN_METRICS_TOKEN_LENGTH = 24;

export type MetricsAccess = 'allowed' | 'unauthorized' | 'forbidden';

const FORWARDING_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const;

/** A loopback address of the socket's peer: 127.0.0.0/8, ::1, or 127.x mapped into IPv6. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return address === '::1';
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/**
 * Whether `req` may read the metrics: from loopback, not forwarded, with no proxy declared
 * in front (`behindProxy`: --trust-proxy); else with the metrics token, if one is set.
 */
export function metricsAccess(req: IncomingMessage, token: string | undefined, behindProxy = false): MetricsAccess {
  const forwarded = FORWARDING_HEADERS.some((name) => req.headers[name] !== undefined);
  if (!behindProxy && !forwarded && isLoopbackAddress(req.socket.remoteAddress)) return 'allowed';
  if (token === undefined) return 'forbidden';
  const given = /^Bearer ([\x21-\x7e]{1,512})$/.exec(req.headers.authorization ?? '')?.[1];
  // Compared as digests, in constant time: neither the token nor its length leaks through timing.
  if (given !== undefined && timingSafeEqual(digest(given), digest(token))) return 'allowed';
  return 'unauthorized';
}
