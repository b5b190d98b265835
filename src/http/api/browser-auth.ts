/**
 * Who calls `/api`: a bearer token when the request sends one (scripts, or a token pasted
 * into the web UI), else the session cookie of a browser signed in with a password (the
 * web UI's sign-in or the consent page's: one cookie, SESSION_COOKIE, serves both). A
 * browser sends its cookie with whatever request a page makes it send, so every
 * state-changing call authenticated by the cookie must also prove it comes from our own
 * page: its Origin is this server's, and it carries `X-Engram-CSRF: 1`, a header no other
 * page can add (a cross-origin request with it needs a preflight, and a credentialed
 * preflight is never allowed here). A bearer call needs neither: a page that holds the
 * token can send it anyway. The cookie is SameSite=Strict on top, so another site never
 * gets it sent at all.
 */

import type { IncomingMessage } from 'node:http';
import type { Accounts } from '../../access/accounts/accounts.js';
import { SESSION_COOKIE } from '../../access/oauth/http/authorize.js';
import { readCookie } from '../../access/oauth/http/cookies.js';
import type { Authenticate, AuthOutcome } from '../auth.js';

/** The header the web UI adds to every call, and its one value. */
export const CSRF_HEADER = 'x-engram-csrf';

/** The label history records for a change a signed-in person made in the web UI. */
export const WEB_ACTOR = 'web';

/** What the web UI's sign-in needs of the accounts service. */
export type WebAccounts = Pick<
  Accounts,
  'signIn' | 'openSession' | 'session' | 'endSession' | 'listSessions' | 'revokeSession'
>;

export type ApiAuthOutcome =
  | AuthOutcome
  /** A cookie-authenticated change that did not come from our own page: 403, nothing done. */
  | { readonly ok: false; readonly forbidden: string };

export type ApiAuthenticate = (req: IncomingMessage) => Promise<ApiAuthOutcome>;

/** Methods that change nothing, which a cookie alone may call. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const CROSS_SITE =
  'Forbidden: this change was not sent by Engram’s own page (its Origin or the X-Engram-CSRF header is missing or ' +
  'foreign), so it was refused. Sign in on this server’s page, or send a token as "Authorization: Bearer <token>".';

/**
 * Whether `req` comes from a page of this server: Origin is one of `origins` (the public
 * URL's and the listening one) and the CSRF header is sent. Sign-in and every
 * cookie-authenticated change must pass it.
 */
export function fromOwnPage(req: IncomingMessage, origins: ReadonlySet<string>): boolean {
  const origin = req.headers.origin;
  return origin !== undefined && origins.has(origin) && req.headers[CSRF_HEADER] === '1';
}

export interface ApiAuthenticateOptions {
  /** Bearer tokens (or the local user, with --auth none). */
  readonly authenticate: Authenticate;
  /** Browser sessions; undefined with --auth none, where nobody signs in. */
  readonly accounts: WebAccounts | undefined;
  /** This server's own origins, the only ones a cookie-authenticated change may come from. */
  readonly origins: ReadonlySet<string>;
}

export function createApiAuthenticate(options: ApiAuthenticateOptions): ApiAuthenticate {
  const { authenticate, accounts, origins } = options;
  return async (req) => {
    const authorization = req.headers.authorization;
    const secret = readCookie(req.headers.cookie, SESSION_COOKIE);
    if (accounts === undefined || authorization !== undefined || secret === undefined) {
      return authenticate(authorization);
    }
    const session = await accounts.session(secret);
    if (session === undefined) return authenticate(undefined);
    if (!SAFE_METHODS.has(req.method ?? '') && !fromOwnPage(req, origins)) return { ok: false, forbidden: CROSS_SITE };
    return { ok: true, caller: { user: session.user, label: WEB_ACTOR, readOnly: false }, anonymous: false };
  };
}
