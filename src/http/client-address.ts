/**
 * Who is on the other end of a request, for the request log and for slowing down failed
 * sign-ins per client address. Behind a reverse proxy (Caddy, nginx, a tunnel) the socket's
 * peer is the proxy, and only the proxy's `X-Forwarded-For` tells the truth, so it is read
 * only with `--trust-proxy`: without it, any client could write it.
 *
 * With `--trust-proxy` the socket's peer is the one trusted proxy, and the client is the
 * rightmost `X-Forwarded-For` entry: the one that proxy appended (or wrote) for the peer
 * it saw. Entries to its left were written by whoever sent the request and may be forged;
 * using the leftmost would let anyone pick the address their failed sign-ins count against.
 * Behind a chain of proxies this is the address the nearest one saw. No forwarded header
 * ever builds a URL or decides a cookie's `Secure` flag: those come from --public-url.
 */

import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** The rightmost entry of X-Forwarded-For (over every copy of the header, in order), trimmed. */
function rightmostForwardedFor(req: IncomingMessage): string | undefined {
  const copies = req.headersDistinct['x-forwarded-for'];
  const last = copies?.[copies.length - 1]?.split(',').pop()?.trim();
  return last === '' ? undefined : last;
}

/** An address as a proxy may write it (`1.2.3.4`, `1.2.3.4:5678`, `[2001:db8::1]:443`, `2001:db8::1`), or undefined. */
function ipOf(value: string): string | undefined {
  if (isIP(value) !== 0) return value;
  const match = /^\[([^\]]+)\](?::\d+)?$/.exec(value) ?? /^([\d.]+):\d+$/.exec(value);
  return match && isIP(match[1]!) !== 0 ? match[1] : undefined;
}

/** The socket's remote address; with `trustProxy`, the client the proxy reports, if it reports a valid one. */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const peer = req.socket.remoteAddress ?? '-';
  if (!trustProxy) return peer;
  const forwarded = rightmostForwardedFor(req);
  return (forwarded !== undefined && ipOf(forwarded)) || peer;
}
