/**
 * The cookies of the consent page: reading one from the `Cookie` header, and writing a
 * `Set-Cookie` with the attributes that keep it ours (HttpOnly: no script reads it;
 * SameSite; Secure when the server is reached over https). A cookie whose name appears
 * twice is read as absent: another page on a sibling host or path may have planted one of
 * the copies, and we cannot tell which is ours.
 */

/** What a cookie value may hold (RFC 6265 §4.1.1 cookie-octet); everything we set is base64url. */
const COOKIE_VALUE = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*$/;

/** The value of the cookie `name`, or undefined when it is absent, sent twice or malformed. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  const values = header
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.startsWith(`${name}=`))
    .map((pair) => pair.slice(name.length + 1));
  const [value] = values;
  return values.length === 1 && value !== undefined && COOKIE_VALUE.test(value) ? value : undefined;
}

export interface CookieOptions {
  /** Send the cookie over https only; set when the server's public URL is https. */
  readonly secure: boolean;
  readonly sameSite: 'Strict' | 'Lax';
  /** Seconds until the browser forgets it; 0 deletes it; omitted, it lasts as long as the browser session. */
  readonly maxAgeSeconds?: number;
}

/** A `Set-Cookie` value for `name=value`, HttpOnly, on every path of this host. */
export function setCookie(name: string, value: string, options: CookieOptions): string {
  const parts = [`${name}=${value}`, 'Path=/', 'HttpOnly', `SameSite=${options.sameSite}`];
  if (options.secure) parts.push('Secure');
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`);
  return parts.join('; ');
}
