/**
 * `/authorize` (DESIGN §8): GET shows the consent page for a checked request (or says on
 * a page of our own why it is refused; only a client of the config file is sent its
 * refusals back, see access/oauth/authorization.ts); POST is the consent form: only from our own page (Origin,
 * Sec-Fetch-Site and the CSRF token), the request checked again, then Deny sends the
 * browser back with access_denied, and Allow signs in (the password typed, or the session
 * cookie of an earlier sign-in), creates the grant and sends the browser back with the code.
 * Nothing is issued by a refused form, a wrong password or a throttled sign-in. Every
 * request counts against its client address's rate limit, and a sign-in on the form whose
 * password is wrong also against the user it names (rate-limit.ts): past one, a page says
 * how long to wait.
 *
 * The session cookie is `SameSite=Strict`, as the web UI's (DESIGN §9): a browser never
 * sends it with a request another site started, so no other site can act as the user.
 * The consent page is reached by a navigation the app started, which Strict leaves
 * without the cookie; that page then loads itself again (consent-page.ts
 * renderReloadPage), a navigation of our own that carries it, so a signed-in user is
 * recognised without weakening the cookie to Lax.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { clientAddress } from '../../../http/client-address.js';
import { readBody } from '../../../http/limits.js';
import { isLoopbackHostname } from '../../../http/origins.js';
import { isEngramError } from '../../../memory/model/errors.js';
import { normalizeUser } from '../../../memory/model/users.js';
import type { Accounts } from '../../accounts/accounts.js';
import { rateLimitHeaders, waitWords } from '../../rate-limits/answers.js';
import type { RateCheck, RateLimits } from '../../rate-limits/rate-limits.js';
import { AUTHORIZATION_PARAMS, type Authorization, type GrantAccess } from '../authorization.js';
import { type AuthorizationRequest, SCOPE_WRITE } from '../types.js';
import {
  type ConsentView,
  renderConsentPage,
  renderErrorPage,
  renderReloadPage,
  SIGN_IN_FIELD,
  sendPage,
} from './consent-page.js';
import { readCookie, setCookie } from './cookies.js';
import { CSRF_FIELD, createCsrfGuard } from './csrf.js';
import { addressCheck, rateLimitedWords } from './rate-limit.js';

/** The browser session's cookie, shared with the web UI. */
export const SESSION_COOKIE = 'engram_session';

/** What the consent step needs of the accounts service. */
export type ConsentAccounts = Pick<Accounts, 'signIn' | 'openSession' | 'sessionUser' | 'endSession'>;

export interface AuthorizeRouteOptions {
  readonly authorization: Pick<Authorization, 'check' | 'approve' | 'deny'>;
  readonly accounts: ConsentAccounts;
  /** The server's public URL (--public-url, or the listening origin): only its origin may post the form; https makes the cookies Secure. */
  readonly publicUrl: URL;
  /** Sign-in failures and rate limits count against the address a proxy in front reports (--trust-proxy), not its own. */
  readonly trustProxy: boolean;
  /** Every request counts against its address (`auth`), a sign-in also against its user (`sign-in`); none when undefined. */
  readonly rateLimits?: RateLimits | undefined;
}

/** Largest consent form read: the request's parameters, a user name and a password. */
const FORM_CAP = 64 * 1024;

const CANNOT_CONNECT = 'Engram cannot connect this app';

/** The parameter that marks the consent page's reload of itself (ignored as OAuth parameter: RFC 6749 §3.1). */
const RELOADED = 'reloaded';

type Params = Record<string, string | string[]>;

/** Parameters by name, a repeated one as the list of its values; only `names` when given. */
function paramsOf(search: URLSearchParams, names?: readonly string[]): Params {
  const params: Params = {};
  for (const name of new Set(search.keys())) {
    if (names !== undefined && !names.includes(name)) continue;
    const values = search.getAll(name);
    params[name] = values.length === 1 ? (values[0] as string) : values;
  }
  return params;
}

/** Where the browser returns, as a person reads it. */
function returnsTo(redirectUri: string): string {
  const url = new URL(redirectUri);
  if (url.host === '') return `${url.protocol.slice(0, -1)} (an app on this device)`;
  return isLoopbackHostname(url.hostname) ? `this computer (${url.host})` : url.host;
}

function redirect(res: ServerResponse, status: 302 | 303, location: string, cookies: readonly string[] = []): void {
  res.writeHead(status, {
    Location: location,
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    ...(cookies.length > 0 ? { 'Set-Cookie': [...cookies] } : {}),
    'Content-Length': 0,
  });
  res.end();
}

function isForm(req: IncomingMessage): boolean {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  return type === 'application/x-www-form-urlencoded';
}

export function createAuthorizeRoute(
  options: AuthorizeRouteOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { authorization, accounts } = options;
  const { publicUrl } = options;
  const secure = publicUrl.protocol === 'https:';
  const csrf = createCsrfGuard({ secure });

  /** The consent page of a checked request: it carries the request and the CSRF token. */
  function view(
    request: AuthorizationRequest,
    params: Params,
    token: string,
    signedInAs: string | undefined,
  ): ConsentView {
    const carried = AUTHORIZATION_PARAMS.flatMap((name) =>
      ([] as string[]).concat(params[name] ?? []).map((value): [string, string] => [name, value]),
    );
    const otherAccount = new URLSearchParams([...carried, ['prompt', 'login']]);
    return {
      appName: request.client.name,
      returnsTo: returnsTo(request.redirectUri),
      asksToWrite: request.scopes.includes(SCOPE_WRITE),
      signedInAs,
      otherAccountHref: `authorize?${otherAccount}`,
      hidden: [...carried, [CSRF_FIELD, token]],
    };
  }

  async function show(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const params = paramsOf(url.searchParams);
    const result = await authorization.check(params);
    if (result.kind === 'page') return sendPage(res, 400, renderErrorPage(CANNOT_CONNECT, result.message));
    if (result.kind === 'redirect') return redirect(res, 302, result.url);
    const cookies = req.headers.cookie;
    const session = readCookie(cookies, SESSION_COOKIE);
    if (
      session === undefined &&
      !url.searchParams.has(RELOADED) &&
      req.headers['sec-fetch-site'] === 'cross-site' &&
      req.headers['sec-fetch-mode'] === 'navigate'
    ) {
      // Marked, so that a browser that would call its own reload cross-site is not sent round for ever.
      const again = new URLSearchParams(url.searchParams);
      again.append(RELOADED, '1');
      return sendPage(res, 200, renderReloadPage(`authorize?${again}`));
    }
    const signedInAs = params.prompt === 'login' ? undefined : await accounts.sessionUser(session);
    const { token, cookie } = csrf.issue(cookies);
    const page = renderConsentPage(view(result.request, params, token, signedInAs));
    sendPage(res, 200, page, cookie === undefined ? {} : { 'Set-Cookie': cookie });
  }

  async function submit(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const site = req.headers['sec-fetch-site'];
    const origin = req.headers.origin;
    if ((site !== undefined && site !== 'same-origin') || (origin !== undefined && origin !== publicUrl.origin)) {
      return sendPage(
        res,
        403,
        renderErrorPage(CANNOT_CONNECT, 'This form was sent from another site, not from Engram’s own page.'),
      );
    }
    if (!isForm(req)) {
      return sendPage(res, 415, renderErrorPage(CANNOT_CONNECT, 'This is not the consent form Engram’s page sends.'));
    }
    const body = await readBody(req, FORM_CAP);
    if (body.kind === 'too-large') {
      return sendPage(res, 413, renderErrorPage(CANNOT_CONNECT, 'The form sent is too large.'), {
        Connection: 'close',
      });
    }
    const form = new URLSearchParams(body.text);
    const cookies = req.headers.cookie;
    const token = form.get(CSRF_FIELD);
    if (token === null || !csrf.verify(cookies, token)) {
      return sendPage(
        res,
        403,
        renderErrorPage(CANNOT_CONNECT, 'This form has expired or did not come from Engram’s own page.'),
      );
    }
    const params = paramsOf(form, AUTHORIZATION_PARAMS);
    const result = await authorization.check(params);
    if (result.kind === 'page') return sendPage(res, 400, renderErrorPage(CANNOT_CONNECT, result.message));
    if (result.kind === 'redirect') return redirect(res, 303, result.url);
    const { request } = result;
    const decision = form.get('decision');
    if (decision === 'deny') return redirect(res, 303, authorization.deny(request));

    /** The page again, with what went wrong; the CSRF cookie stands. */
    const again = (status: number, problem: string, signedInAs: string | undefined, user?: string) => {
      const page: ConsentView = {
        ...view(request, params, token, signedInAs),
        problem,
        ...(user === undefined ? {} : { user }),
      };
      sendPage(res, status, renderConsentPage(page));
    };
    if (decision !== 'allow') return again(400, 'Choose Allow or Deny.', undefined);

    const setCookies: string[] = [];
    const bySession = form.get(SIGN_IN_FIELD) === 'session';
    const signedOut = 'You have been signed out. Sign in again.';
    const wrong = 'Wrong user name or password.';
    let user: string | undefined;
    if (bySession) {
      user = await accounts.sessionUser(readCookie(cookies, SESSION_COOKIE));
      if (user === undefined) return again(400, signedOut, undefined);
    } else {
      const typed = form.get('user') ?? '';
      const password = form.get('password') ?? '';
      if (typed.trim() === '' || password === '') {
        return again(400, 'Enter your user name and password.', undefined, typed);
      }
      const named = normalizeUser(typed) ?? typed;
      if (await refusedByRate(res, [['sign-in', named]])) return;
      try {
        const attempt = () => accounts.signIn(typed, password, clientAddress(req, options.trustProxy));
        const limits = options.rateLimits;
        // The user's limit counts wrong passwords only: a correct one is let through and given back.
        user =
          limits === undefined
            ? await attempt()
            : await limits.countingFailures('sign-in', named, attempt, isUnauthorized);
      } catch (error) {
        if (isUnauthorized(error)) return again(400, wrong, undefined, typed);
        if (isEngramError(error) && error.code === 'TOO_MANY_ATTEMPTS') {
          const seconds = error.detail?.reason === 'sign-in-throttled' ? error.detail.retryAfterSeconds : 60;
          return sendPage(
            res,
            429,
            renderErrorPage(
              'Too many failed sign-ins',
              `Too many wrong passwords were tried lately. Wait ${waitWords(seconds)}, then try again.`,
            ),
            { 'Retry-After': String(seconds) },
          );
        }
        throw error;
      }
      // Signing in replaces the browser's earlier session, whoever it was for.
      const earlier = readCookie(cookies, SESSION_COOKIE);
      if (earlier !== undefined) await accounts.endSession(earlier);
      const opened = await accounts.openSession(user, req.headers['user-agent'] ?? '').catch((error: unknown) => {
        // The account was removed since the password was checked: refused as a sign-in after it.
        if (isUnauthorized(error)) return undefined;
        throw error;
      });
      if (opened === undefined) return again(400, wrong, undefined, typed);
      setCookies.push(
        setCookie(SESSION_COOKIE, opened.secret, {
          secure,
          sameSite: 'Strict',
          maxAgeSeconds: (opened.session.expires - opened.session.created) / 1000,
        }),
      );
    }
    let location: string;
    try {
      location = await authorization.approve(request, user, grantAccess(form));
    } catch (error) {
      // The account was removed since the session or password was checked: refused as it would be after.
      if (isUnauthorized(error)) return again(400, bySession ? signedOut : wrong, undefined);
      throw error;
    }
    redirect(res, 303, location, setCookies);
  }

  /** Counts the request under `checks`; when past a limit, answers a page saying when to come back. */
  async function refusedByRate(res: ServerResponse, checks: readonly RateCheck[]): Promise<boolean> {
    const refused = await options.rateLimits?.refusal(checks);
    if (refused === undefined) return false;
    sendPage(
      res,
      429,
      renderErrorPage('Too many attempts', capitalized(rateLimitedWords(refused))),
      rateLimitHeaders(refused),
    );
    return true;
  }

  return async (req, res) => {
    const url = new URL(req.url ?? '/', publicUrl);
    // Every request counts against its address; a sign-in on the form also against its user (submit).
    if (await refusedByRate(res, [addressCheck(req, options.trustProxy)])) return;
    if (req.method === 'GET') return show(req, res, url);
    if (req.method === 'POST') return submit(req, res);
    sendPage(res, 405, renderErrorPage(CANNOT_CONNECT, 'Open this page with GET, or send its form with POST.'), {
      Allow: 'GET, POST',
    });
  };
}

/** Whether `error` is a refusal of who is asking (a wrong password, or no account). */
function isUnauthorized(error: unknown): boolean {
  return isEngramError(error) && error.code === 'UNAUTHORIZED';
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * The access the consent form chose: its `access` field (write, review or read); the
 * `read_only` box of the page before review mode, still honoured; read-write otherwise.
 */
function grantAccess(form: URLSearchParams): GrantAccess {
  if (form.get('read_only') !== null) return 'read';
  const access = form.get('access');
  return access === 'review' || access === 'read' ? access : 'write';
}
