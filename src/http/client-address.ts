/**
 * Who is on the other end of a request, for the request log and for slowing down failed
 * sign-ins per client address; and whether the browser reached us over https, for the
 * `Secure` flag of cookies. Behind a reverse proxy (Caddy, nginx, a tunnel) the socket's
 * peer is the proxy, and only the proxy's `X-Forwarded-*` headers tell the truth, so they
 * are read only with `--trust-proxy`: without it, any client could write them.
 *
 * With `--trust-proxy` the socket's peer is the one trusted proxy, and the client is the
 * rightmost `X-Forwarded-For` entry: the one that proxy appended (or wrote) for the peer
 * it saw. Entries to its left were written by whoever sent the request and may be forged;
 * using the leftmost would let anyone pick the address their failed sign-ins count against.
 * Behind a chain of proxies this is the address the nearest one saw. `X-Forwarded-Proto`
 * is read the same way. Neither is ever used to build a URL: those come from --public-url.
 */

import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';

/** The rightmost value of a comma-separated forwarding header (every copy of it, in order), trimmed. */
function rightmost(req: IncomingMessage, header: string): string | undefined {
  const copies = req.headersDistinct[header];
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
  const forwarded = rightmost(req, 'x-forwarded-for');
  return (forwarded !== undefined && ipOf(forwarded)) || peer;
}

/** The request came over TLS to us, or (with `trustProxy`) to the proxy in front, as it says in X-Forwarded-Proto. */
export function isSecureRequest(req: IncomingMessage, trustProxy: boolean): boolean {
  if ((req.socket as Partial<TLSSocket>).encrypted === true) return true;
  return trustProxy && rightmost(req, 'x-forwarded-proto')?.toLowerCase() === 'https';
}
