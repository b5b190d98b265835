/**
 * Resource indicators (RFC 8707) compared as URLs, not as strings: a client may spell
 * this server's `/mcp` with an upper-case host, the default port or a trailing slash.
 */

/** A resource indicator in a comparable form: scheme and host lower-cased, default port dropped, no trailing slash. */
export function canonicalResource(value: string): string | undefined {
  if (value.includes('#')) return undefined;
  try {
    const url = new URL(value);
    return `${url.origin}${url.pathname.replace(/\/$/, '')}${url.search}`;
  } catch {
    return undefined;
  }
}

/** Whether two resource indicators name the same resource. */
export function sameResource(a: string, b: string): boolean {
  const canonical = canonicalResource(a);
  return canonical !== undefined && canonical === canonicalResource(b);
}
