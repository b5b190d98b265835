/**
 * Browser safety: which web pages may call the server (the `Origin` header), which
 * names it may be reached by (the `Host` header, against DNS rebinding), and which
 * addresses it may listen on without authentication.
 */

import { isIP } from 'node:net';
import { EngramError } from '../core/errors.js';

export type AuthMode = 'none' | 'token';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** localhost, 127.0.0.0/8 and ::1, with or without IPv6 brackets. */
export function isLoopbackHostname(hostname: string): boolean {
  const name = hostname.toLowerCase();
  if (LOOPBACK_NAMES.has(name)) return true;
  return isIP(name) === 4 && name.startsWith('127.');
}

/**
 * The `Host` values a loopback-bound server answers to, and nothing that merely parses to
 * one (`localhost\evil.example`, `evil@localhost`, `127.1`): `localhost` (any case),
 * `127.x.y.z` in plain dotted decimal, or `[::1]`, each with an optional port 1-65535.
 */
const LOOPBACK_HOST = /^(?:localhost|\[::1\]|127(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})(?::([1-9]\d{0,4}))?$/i;

/** A request reaching a loopback-bound server by any other name is a DNS rebinding attempt. */
export function isAllowedHost(hostHeader: string | undefined): boolean {
  const match = hostHeader === undefined ? null : LOOPBACK_HOST.exec(hostHeader);
  return match !== null && (match[1] === undefined || Number(match[1]) <= 65_535);
}

/** `http://localhost:*`, `http://127.0.0.1:*`, `http://[::1]:*`: pages served from this computer. */
export function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' && url.origin === origin && LOOPBACK_NAMES.has(url.hostname);
  } catch {
    return false;
  }
}

/**
 * Why a page's Origin is refused, and what would let it in. `null` is what pages opened
 * from a file or in a sandbox send: it cannot be allowed by name (every such page,
 * wherever it came from, sends it), so the hint is another way in, never --allow-origin null.
 */
export function forbiddenOriginMessage(origin: string, auth: AuthMode): string {
  if (origin === 'null') {
    return (
      'Forbidden: pages opened from a file or in a sandbox (Origin null) may not use this memory. ' +
      `Serve the page from http://localhost or http://127.0.0.1 instead${auth === 'none' ? ', or restart engram serve with --auth token' : ''}.`
    );
  }
  return (
    `Forbidden: pages from ${origin} may not use this memory. To allow them, restart engram serve with ` +
    `--allow-origin ${origin}${auth === 'none' ? ' (or use --auth token)' : ''}.`
  );
}

/** Checks an `--allow-origin` value and returns it in the form browsers send. */
export function parseAllowedOrigin(value: string): string {
  if (value.trim() === 'null') {
    throw new EngramError(
      'INVALID_ARGUMENT',
      '--allow-origin null cannot be allowed: browsers send Origin null from every page opened from a file or in ' +
        'a sandbox, wherever it came from. Serve the page from http://localhost or http://127.0.0.1 instead ' +
        '(always allowed), or use --auth token.',
    );
  }
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== value.replace(/\/$/, '')) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `--allow-origin ${JSON.stringify(value)} is not an origin: give the scheme, host and port of the page ` +
        'that calls Engram, with no path, for example --allow-origin http://192.168.1.20:8080',
    );
  }
  return url.origin;
}

/**
 * Which `Origin` may call. Without auth only this computer's pages and the listed ones
 * may (a page you happen to visit must not read or write your memory); with tokens any
 * page may (the token protects), unless origins are listed.
 */
export function originPolicy(auth: AuthMode, allowed: readonly string[]): (origin: string) => boolean {
  const listed = new Set(allowed);
  if (auth === 'token') return listed.size === 0 ? () => true : (origin) => listed.has(origin);
  return (origin) => isLoopbackOrigin(origin) || listed.has(origin);
}

/** Refuses to listen beyond this computer without authentication. */
export function assertSafeBinding(host: string, auth: AuthMode): void {
  if (auth === 'none' && !isLoopbackHostname(host)) {
    throw new EngramError(
      'UNAUTHORIZED',
      `refusing to serve on ${host} without authentication: anyone who can reach it could read and change your memory. ` +
        'Either keep the default --host 127.0.0.1, or start with --auth token and create tokens with ' +
        'engram token create --user NAME.',
    );
  }
}
