/**
 * Signing in to the web UI (DESIGN §8, §9): `GET /api/session` (who am I, and how this
 * server authenticates), `POST /api/session` (user and password: a browser session in the
 * SESSION_COOKIE the consent page uses too, so signing in once serves both), `DELETE
 * /api/session` (sign out), `GET /api/sessions` (the user's signed-in browsers) and
 * `DELETE /api/sessions/{id}` (sign one out). Signing in and out by cookie must come from
 * our own page (browser-auth.ts fromOwnPage), so no other site can sign a browser in to
 * an account of its choosing or out of its own. A sign-in counts against its client
 * address's rate limit, and against the user it names when its password is wrong (docs/http.md,
 * Rate limits).
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { SESSION_COOKIE } from '../../access/oauth/http/authorize.js';
import { readCookie, setCookie } from '../../access/oauth/http/cookies.js';
import { rateLimitHeaders } from '../../access/rate-limits/answers.js';
import type { RateLimits } from '../../access/rate-limits/rate-limits.js';
import { EngramError, isEngramError } from '../../memory/model/errors.js';
import { normalizeUser } from '../../memory/model/users.js';
import { addressGroup, clientAddress } from '../client-address.js';
import { readBody } from '../limits.js';
import { apiRateLimitedMessage } from '../rate-limit.js';
import { type ApiAuthenticate, fromOwnPage, type WebAccounts } from './browser-auth.js';
import { sendApiError } from './errors.js';
import { sendJson } from './json.js';
import { jsonBody } from './request.js';
import { browserSessionJson, type SessionJson } from './shapes.js';

export interface SessionRoutesOptions {
  /** `none`, `token` or `oauth`: what the sign-in page offers. */
  readonly mode: SessionJson['auth'];
  readonly authenticate: ApiAuthenticate;
  /** Undefined with --auth none: nobody signs in. */
  readonly accounts: WebAccounts | undefined;
  readonly origins: ReadonlySet<string>;
  /** https: the cookie is Secure. */
  readonly secure: boolean;
  readonly trustProxy: boolean;
  /** A sign-in counts against its client address (`auth`), and the user it names when it fails (`sign-in`); none when undefined. */
  readonly rateLimits?: RateLimits | undefined;
}

/** Serves the request if `path` is a session route (true), else leaves it (false). */
export type SessionRoutes = (
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  exchange: { user?: string; route?: string },
) => Promise<boolean>;

/** A sign-in form: a user name and a password. */
const SIGN_IN_CAP = 16 * 1024;
const SIGN_IN_EXAMPLE = '{"user": "NAME", "password": "…"}';

const NO_SIGN_IN =
  'This server has no sign-in: it runs without authentication (--auth none), and its own pages act as the local user.';
const NOT_OUR_PAGE =
  'Forbidden: signing in and out is only accepted from Engram’s own page (Origin and X-Engram-CSRF header).';
const READ_ONLY =
  'This token is read-only: it cannot sign browsers out. Sign in with a password, or use a read-write token.';

/** Whether a sign-in was refused for its user name or password: what the `sign-in` limit counts. */
function wrongPassword(error: unknown): boolean {
  return isEngramError(error) && error.code === 'UNAUTHORIZED';
}

function credentials(text: string): { user: string; password: string } {
  const body = jsonBody(text, SIGN_IN_EXAMPLE) as Record<string, unknown> | null;
  const user = body?.user;
  const password = body?.password;
  if (typeof user !== 'string' || typeof password !== 'string' || Object.keys(body ?? {}).length !== 2) {
    throw new EngramError('INVALID_ARGUMENT', `the request body must be ${SIGN_IN_EXAMPLE}.`);
  }
  return { user, password };
}

export function createSessionRoutes(options: SessionRoutesOptions): SessionRoutes {
  const { accounts, authenticate } = options;
  const cookie = (value: string, maxAgeSeconds: number) =>
    setCookie(SESSION_COOKIE, value, { secure: options.secure, sameSite: 'Strict', maxAgeSeconds });
  const signedOut = () => cookie('', 0);

  async function whoAmI(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const outcome = await authenticate(req);
    const via =
      options.mode === 'none' ? 'none' : req.headers.authorization !== undefined ? 'token' : ('session' as const);
    const session: SessionJson = {
      auth: options.mode,
      signIn: accounts !== undefined,
      user: outcome.ok ? outcome.caller.user : null,
      via: outcome.ok ? via : null,
      // A review-mode token changes nothing through /api either (its changes wait for review).
      readOnly: outcome.ok ? outcome.caller.readOnly === true || outcome.caller.review === true : false,
    };
    sendJson(res, 200, session);
  }

  async function signIn(req: IncomingMessage, res: ServerResponse, accounts: WebAccounts): Promise<void> {
    if (!fromOwnPage(req, options.origins)) return sendApiError(res, 403, 'FORBIDDEN_ORIGIN', NOT_OUR_PAGE);
    if (req.headers['content-type']?.split(';')[0]?.trim().toLowerCase() !== 'application/json') {
      return sendApiError(res, 415, 'UNSUPPORTED_MEDIA_TYPE', `Send ${SIGN_IN_EXAMPLE} as application/json.`);
    }
    const body = await readBody(req, SIGN_IN_CAP);
    if (body.kind === 'too-large') {
      return sendApiError(res, 413, 'TOO_LARGE', 'The sign-in sent is too large.', { Connection: 'close' });
    }
    const { user: typed, password } = credentials(body.text);
    const address = clientAddress(req, options.trustProxy);
    const limits = options.rateLimits;
    const named = normalizeUser(typed) ?? typed;
    // The user is counted only once the address may try: a refused request is no failed sign-in.
    const refused =
      (await limits?.refusal([['auth', addressGroup(address)]])) ?? (await limits?.refusal([['sign-in', named]]));
    if (refused !== undefined) {
      return sendApiError(res, 429, 'RATE_LIMITED', apiRateLimitedMessage(refused), rateLimitHeaders(refused));
    }
    const attempt = () => accounts.signIn(typed, password, address);
    const user =
      limits === undefined ? await attempt() : await limits.countingFailures('sign-in', named, attempt, wrongPassword);
    // Signing in replaces the browser's earlier session, whoever it was for.
    const earlier = readCookie(req.headers.cookie, SESSION_COOKIE);
    if (earlier !== undefined) await accounts.endSession(earlier);
    const opened = await accounts.openSession(user, req.headers['user-agent'] ?? '');
    const maxAge = (opened.session.expires - opened.session.created) / 1000;
    const session: SessionJson = { auth: options.mode, signIn: true, user, via: 'session', readOnly: false };
    sendJson(res, 200, session, { 'Set-Cookie': cookie(opened.secret, maxAge) });
  }

  async function signOut(req: IncomingMessage, res: ServerResponse, accounts: WebAccounts): Promise<void> {
    const secret = readCookie(req.headers.cookie, SESSION_COOKIE);
    if (secret !== undefined) {
      if (!fromOwnPage(req, options.origins)) return sendApiError(res, 403, 'FORBIDDEN_ORIGIN', NOT_OUR_PAGE);
      await accounts.endSession(secret);
    }
    const session: SessionJson = { auth: options.mode, signIn: true, user: null, via: null, readOnly: false };
    sendJson(res, 200, session, { 'Set-Cookie': signedOut() });
  }

  /** The caller of a sessions route, or the refusal sent. */
  async function callerOf(req: IncomingMessage, res: ServerResponse) {
    const outcome = await authenticate(req);
    if (outcome.ok) return outcome.caller;
    if ('forbidden' in outcome) sendApiError(res, 403, 'FORBIDDEN_ORIGIN', outcome.forbidden);
    else sendApiError(res, 401, 'UNAUTHORIZED', outcome.message, { 'WWW-Authenticate': outcome.challenge });
    return undefined;
  }

  return async (req, res, path, exchange) => {
    const method = req.method ?? '';
    const notAllowed = (allow: string) =>
      sendApiError(res, 405, 'METHOD_NOT_ALLOWED', `Method not allowed: ${method} ${path}; use ${allow}.`, {
        Allow: allow,
      });
    if (path === '/api/session') {
      exchange.route = '/api/session';
      if (method === 'GET') await whoAmI(req, res);
      else if (method !== 'POST' && method !== 'DELETE') notAllowed('GET, POST, DELETE');
      else if (accounts === undefined) sendApiError(res, 400, 'INVALID_ARGUMENT', NO_SIGN_IN);
      else if (method === 'POST') await signIn(req, res, accounts);
      else await signOut(req, res, accounts);
      return true;
    }
    const id = /^\/api\/sessions(?:\/([^/]+))?$/.exec(path);
    if (id === null) return false;
    exchange.route = id[1] === undefined ? '/api/sessions' : '/api/sessions/{id}';
    const allow = id[1] === undefined ? 'GET' : 'DELETE';
    if (method !== allow) {
      notAllowed(allow);
      return true;
    }
    const caller = await callerOf(req, res);
    if (caller === undefined) return true;
    exchange.user = caller.user;
    if (accounts === undefined) {
      sendApiError(res, 400, 'INVALID_ARGUMENT', NO_SIGN_IN);
      return true;
    }
    const current = (await accounts.session(readCookie(req.headers.cookie, SESSION_COOKIE)))?.id;
    if (id[1] === undefined) {
      const sessions = await accounts.listSessions(caller.user);
      sendJson(res, 200, { sessions: sessions.map((session) => browserSessionJson(session, current)) });
      return true;
    }
    if (caller.readOnly) {
      sendApiError(res, 403, 'READ_ONLY_TOKEN', READ_ONLY);
      return true;
    }
    if (!(await accounts.revokeSession(caller.user, id[1]))) {
      sendApiError(res, 404, 'NOT_FOUND', 'No such session: GET /api/sessions lists yours.');
      return true;
    }
    sendJson(res, 200, { revoked: id[1] }, id[1] === current ? { 'Set-Cookie': signedOut() } : {});
    return true;
  };
}
