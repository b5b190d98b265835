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
 *
 * What is counted per address (registrations, rate limits) counts an IPv6 address as its
 * /64 network (addressGroup), which one party holds whole.
 */

import type { IncomingMessage } from 'node:http';
import { isIP, isIPv6 } from 'node:net';

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

/**
 * Whom something counted per address counts against: an IPv4 address (also one written
 * IPv4-mapped, ::ffff:a.b.c.d), or the first 64 bits of an IPv6 address, since each party
 * holds at least a /64 and would otherwise get a fresh count for every address in it.
 */
export function addressGroup(address: string): string {
  if (!isIPv6(address)) return address;
  // The URL parser writes every spelling of an IPv6 address in one canonical, compressed form.
  const canonical = new URL(`http://[${address.split('%')[0]}]/`).hostname.slice(1, -1);
  if (canonical.startsWith('::ffff:')) return address;
  const [head = '', tail] = canonical.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  return `${[...headGroups, ...zeros, ...tailGroups].slice(0, 4).join(':')}::/64`;
}
