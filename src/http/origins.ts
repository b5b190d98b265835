/**
 * Browser safety: which web pages may call the server (the `Origin` header), which
 * names it may be reached by (the `Host` header, against DNS rebinding), and which
 * addresses it may listen on without authentication. A page refused is also logged with
 * the --allow-origin that would let it in: the browser shows the person only that the page
 * failed, never Engram's words, so the server's log is where they can find why. The origin
 * in that hint is quoted as a shell word: a page may send any origin a URL parses to
 * (`http://$(id).com`), and pasting the hint must never run a command.
 */

import { isIP } from 'node:net';
import { EngramError } from '../memory/model/errors.js';
import { shellWord } from '../memory/model/shell-word.js';

export type AuthMode = 'none' | 'token' | 'oauth';

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

/**
 * A request reaching a loopback-bound server by any other name is a DNS rebinding attempt,
 * except by the name of its public URL (a reverse proxy or tunnel on this computer passes
 * it on), with its port or none when it is the scheme's usual one.
 */
export function isAllowedHost(hostHeader: string | undefined, publicUrl?: URL): boolean {
  if (hostHeader !== undefined && publicUrl !== undefined && isPublicHost(hostHeader, publicUrl)) return true;
  const match = hostHeader === undefined ? null : LOOPBACK_HOST.exec(hostHeader);
  return match !== null && (match[1] === undefined || Number(match[1]) <= 65_535);
}

function isPublicHost(hostHeader: string, publicUrl: URL): boolean {
  const host = hostHeader.toLowerCase();
  const usualPort = publicUrl.protocol === 'https:' ? '443' : '80';
  return host === publicUrl.host || host === `${publicUrl.hostname}:${publicUrl.port || usualPort}`;
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
  return `Forbidden: ${pagesFrom(origin)} may not use this memory. ${originHint(origin, auth)}`;
}

function pagesFrom(origin: string): string {
  return origin === 'null' ? 'pages opened from a file or in a sandbox (Origin null)' : `pages from ${origin}`;
}

/** What would let pages of this origin in, as a command line safe to paste (the origin quoted). */
function originHint(origin: string, auth: AuthMode): string {
  if (origin === 'null') {
    return `Serve the page from http://localhost or http://127.0.0.1 instead${auth === 'none' ? ', or restart engram serve with --auth token' : ''}.`;
  }
  return `To allow them, restart engram serve with --allow-origin ${shellWord(origin)}${auth === 'none' ? ' (or use --auth token)' : ''}.`;
}

/** An Origin as the log may show it: printable ASCII with no spaces, at most 200 characters; else "?" (no forged lines). */
function loggableOrigin(origin: string): string {
  return /^[\x21-\x7e]{1,200}$/.test(origin) ? origin : '?';
}

/** The log line of a page refused for its Origin, with what would let it in (as forbiddenOriginMessage says it). */
export function refusedOriginLogLine(origin: string, auth: AuthMode): string {
  const shown = loggableOrigin(origin);
  if (shown !== 'null' && !isOrigin(shown)) {
    return `refused a request with Origin ${shown}: it is not an origin (scheme://host:port), so no --allow-origin can name it.`;
  }
  return `refused ${pagesFrom(shown)} (the browser does not show why): ${originHint(shown, auth)}`;
}

/** scheme://host[:port], as browsers send it. */
function isOrigin(value: string): boolean {
  try {
    return new URL(value).origin === value;
  } catch {
    return false;
  }
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
 * may (a page you happen to visit must not read or write your memory); with tokens
 * (static or OAuth) any page may (the token protects), unless origins are listed.
 */
export function originPolicy(auth: AuthMode, allowed: readonly string[]): (origin: string) => boolean {
  const listed = new Set(allowed);
  if (auth !== 'none') return listed.size === 0 ? () => true : (origin) => listed.has(origin);
  return (origin) => isLoopbackOrigin(origin) || listed.has(origin);
}

/** A request refused for the name it was sent to (Host) or the page that sent it (Origin). */
export interface GateRefusal {
  readonly status: 403;
  readonly code: 'FORBIDDEN_HOST' | 'FORBIDDEN_ORIGIN';
  readonly message: string;
}

export interface BrowserGateOptions {
  readonly auth: AuthMode;
  /** Origins allowed besides the defaults (originPolicy). */
  readonly allowOrigins?: readonly string[] | undefined;
  /** The server listens on loopback only: a request by any other name (but the public URL's) is refused. */
  readonly loopbackOnly: boolean;
  readonly publicUrl?: URL | undefined;
  /** Receives one line for each page refused for its Origin (refusedOriginLogLine). */
  readonly log?: ((line: string) => void) | undefined;
}

export interface BrowserGate {
  /** The refusal of a request by a name this server does not answer to (DNS rebinding); undefined to go on. */
  host(hostHeader: string | undefined): GateRefusal | undefined;
  /** The refusal of a page whose origin may not call; undefined to go on (no Origin: not a page). */
  origin(origin: string | undefined): GateRefusal | undefined;
}

/**
 * The Host and Origin rules, as every door applies them: HTTP (app.ts) and the WebSocket
 * upgrade (websocket.ts) ask this one gate, so the two cannot drift apart, and each page
 * it refuses is logged the same way.
 */
export function browserGate(options: BrowserGateOptions): BrowserGate {
  const originAllowed = originPolicy(options.auth, options.allowOrigins ?? []);
  const { publicUrl } = options;
  // A loopback public URL (the listening origin, say) is already among the names the message gives.
  const publicHost = publicUrl === undefined || isAllowedHost(publicUrl.host) ? '' : `, ${publicUrl.host}`;
  return {
    host(hostHeader) {
      if (!options.loopbackOnly || isAllowedHost(hostHeader, publicUrl)) return undefined;
      return {
        status: 403,
        code: 'FORBIDDEN_HOST',
        message:
          `Forbidden: this server answers only to localhost, 127.0.0.1 (any 127.x.y.z)${publicHost} and [::1], ` +
          `not to Host ${JSON.stringify(hostHeader ?? '')}. To reach it under another name, start engram serve ` +
          'with --public-url set to the address people use.',
      };
    },
    origin(origin) {
      if (origin === undefined || originAllowed(origin)) return undefined;
      options.log?.(refusedOriginLogLine(origin, options.auth));
      return { status: 403, code: 'FORBIDDEN_ORIGIN', message: forbiddenOriginMessage(origin, options.auth) };
    },
  };
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

/**
 * Checks a `--public-url` value (or the config file's `publicUrl`): the origin clients
 * reach the server by, with no path, query or fragment (`https://memory.example.com/` is
 * `https://memory.example.com`). OAuth's issuer and every metadata URL are built from it.
 */
export function parsePublicUrl(value: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  const bare = url && url.username === '' && url.password === '' && url.pathname === '/' && !/[?#]/.test(value);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || !bare) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `--public-url ${JSON.stringify(value)} is not an origin: give the scheme, host and port (if not the usual one) ` +
        'by which clients reach Engram, with no path, query or fragment, for example --public-url https://memory.example.com',
    );
  }
  return new URL(url.origin);
}

/**
 * The rules of a public deployment: an `http://` public URL only for a loopback server
 * reached on this computer (tests, a client on the same computer); anywhere else (a
 * proxy or tunnel in front of a loopback server, or a server listening beyond loopback)
 * sign-ins, codes and tokens would cross the network in clear text, and OAuth's metadata
 * would name an address no client can trust. And OAuth on an address beyond this
 * computer only with an `https://` public URL. There is no flag to allow an http:// one.
 */
export function assertSafePublicUrl(host: string, auth: AuthMode | 'oauth', publicUrl: URL | undefined): void {
  if (publicUrl?.protocol === 'http:' && !(isLoopbackHostname(host) && isLoopbackHostname(publicUrl.hostname))) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `refusing --public-url ${publicUrl.origin} on ${host}: an http:// public URL is accepted only for a server on ` +
        'loopback (--host 127.0.0.1) reached on this computer (http://localhost, http://127.0.0.1 or http://[::1]). ' +
        'Give the https:// URL clients reach, with TLS put in front: a reverse proxy such as Caddy or nginx (add ' +
        '--trust-proxy), a tunnel such as cloudflared or ngrok (the https:// address it prints), or Engram’s own ' +
        '--tls-cert FILE --tls-key FILE.',
    );
  }
  if (isLoopbackHostname(host)) return;
  if (auth === 'oauth' && publicUrl === undefined) {
    throw new EngramError(
      'UNAUTHORIZED',
      `refusing to serve --auth oauth on ${host} without an https public URL: sign-ins, codes and tokens must not ` +
        'cross the network in clear text. Pass --public-url https://YOUR-HOST (the address clients reach, with TLS ' +
        'from a reverse proxy in front or from --tls-cert FILE --tls-key FILE), or keep the default --host 127.0.0.1.',
    );
  }
}
