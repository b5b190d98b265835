/**
 * Which redirect URIs a client may register, and when a requested one matches: the
 * authorization code travels to it, so only https, http on this computer (a native app's
 * loopback listener), or a native app's private-use scheme (`com.example.app:/callback`,
 * RFC 8252 §7.1); never a fragment, credentials or characters that a parser would drop.
 * A match is exact, except that a loopback http URI matches on any port (RFC 8252 §7.3):
 * a native app listens on whatever port is free.
 */

/** Longest redirect URI accepted, in characters. */
export const REDIRECT_URI_CAP = 2_000;

/** Printable ASCII: anything else must be percent-encoded, so what is stored is exactly what is matched. */
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;
/** A private-use scheme is a reversed domain name, so it holds a dot (RFC 8252 §7.1). */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/;

/** localhost, 127.0.0.0/8 and [::1], as URL's `hostname` spells them. */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

function parse(uri: string): URL | undefined {
  try {
    return new URL(uri);
  } catch {
    return undefined;
  }
}

/** Why `uri` cannot be a redirect URI, said for the client's developer; undefined when it can. */
export function redirectUriProblem(uri: unknown): string | undefined {
  if (typeof uri !== 'string') return 'each redirect URI must be a string';
  const shown = JSON.stringify(uri.length > 80 ? `${uri.slice(0, 80)}…` : uri);
  if (uri.length > REDIRECT_URI_CAP) return `the redirect URI ${shown} is longer than ${REDIRECT_URI_CAP} characters`;
  if (!PRINTABLE_ASCII.test(uri)) {
    return `the redirect URI ${shown} holds spaces, control or non-ASCII characters: percent-encode them`;
  }
  if (uri.includes('#')) return `the redirect URI ${shown} has a fragment (#…), which redirect URIs may not have`;
  const url = parse(uri);
  if (url === undefined) return `the redirect URI ${shown} is not an absolute URI`;
  if (url.username !== '' || url.password !== '') return `the redirect URI ${shown} holds a user name or password`;
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') {
    return isLoopbackHost(url.hostname)
      ? undefined
      : `the redirect URI ${shown} uses http on a host other than localhost, 127.0.0.1 or [::1]: use https`;
  }
  if (PRIVATE_USE_SCHEME.test(url.protocol)) return undefined;
  return (
    `the redirect URI ${shown} uses the scheme ${JSON.stringify(url.protocol)}: use https, http on localhost, 127.0.0.1 or [::1], ` +
    'or a private-use scheme named after a domain you own (com.example.app:/callback)'
  );
}

/** A loopback http URI without its port, to compare two of them port-blind; undefined for any other URI. */
function loopbackWithoutPort(uri: string): string | undefined {
  const url = parse(uri);
  if (url === undefined || url.protocol !== 'http:' || !isLoopbackHost(url.hostname)) return undefined;
  url.port = '';
  return url.href;
}

/** Whether `uri` is one of `registered`: exactly, or a loopback http one on another port. */
export function matchesRedirectUri(registered: readonly string[], uri: string): boolean {
  if (registered.includes(uri)) return true;
  if (redirectUriProblem(uri) !== undefined) return false;
  const portless = loopbackWithoutPort(uri);
  return portless !== undefined && registered.some((candidate) => loopbackWithoutPort(candidate) === portless);
}
