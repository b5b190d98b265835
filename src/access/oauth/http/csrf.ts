/**
 * CSRF protection of the consent form (DESIGN §8), by double submit: the page's GET sets
 * a random token in a cookie and puts the same token in a hidden field of the form; a
 * POST counts only when it carries both and they are equal (compared in constant time).
 * Another site can make a browser send the cookie, but cannot read it, so it cannot
 * write the field. Over https the cookie is named `__Host-…`, which a sibling host cannot
 * set for ours (cookie tossing); over http the server is on loopback (DESIGN §8), where
 * no sibling host exists. The route also refuses a POST whose Origin or Sec-Fetch-Site
 * is not its own (authorize.ts): two locks, either sufficient.
 *
 * The token is kept across consent pages while its cookie lasts, so two tabs of the
 * consent page (two apps connecting at once) do not void each other's form.
 */

import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readCookie, setCookie } from './cookies.js';

/** The hidden form field that carries the token. */
export const CSRF_FIELD = 'csrf';

/** 32 random bytes, base64url. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export interface CsrfGuard {
  /** The token for a new page: the browser's own if it has a good one, else a new one with the cookie that sets it. */
  issue(cookieHeader: string | undefined): { readonly token: string; readonly cookie: string | undefined };
  /** Whether a POST's cookie and form field carry the same good token. */
  verify(cookieHeader: string | undefined, field: string | undefined): boolean;
}

export function createCsrfGuard(options: { readonly secure: boolean }): CsrfGuard {
  const name = options.secure ? '__Host-engram_csrf' : 'engram_csrf';
  const current = (cookieHeader: string | undefined) => {
    const token = readCookie(cookieHeader, name);
    return token !== undefined && TOKEN.test(token) ? token : undefined;
  };
  return {
    issue(cookieHeader) {
      const kept = current(cookieHeader);
      if (kept !== undefined) return { token: kept, cookie: undefined };
      const token = randomBytes(32).toString('base64url');
      // Strict: only our own pages send it back; it lasts as long as the browser session.
      return { token, cookie: setCookie(name, token, { secure: options.secure, sameSite: 'Strict' }) };
    },
    verify(cookieHeader, field) {
      const token = current(cookieHeader);
      if (token === undefined || field === undefined || !TOKEN.test(field)) return false;
      return timingSafeEqual(Buffer.from(token), Buffer.from(field));
    },
  };
}
