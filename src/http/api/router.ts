/**
 * The REST API under `/api`, for the web UI and scripts. A request goes through the same
 * gates as `/mcp` (app.ts has already checked Host and Origin): route, method, token,
 * the token's or browser's rate limit (../rate-limit.ts), read-only, query, body type and size; then one Memory call, answered as JSON. Refusals
 * are `{ "error": { "code", "message" } }` with a fitting status.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OAuthTokens } from '../../access/oauth/tokens.js';
import { rateLimitHeaders } from '../../access/rate-limits/answers.js';
import type { RateLimits } from '../../access/rate-limits/rate-limits.js';
import type { Access } from '../../access/tokens/access.js';
import type { Caller, Memory } from '../../memory/memory.js';
import { isEngramError } from '../../memory/model/errors.js';
import { formatCount } from '../../memory/model/text.js';
import type { Transfer } from '../../transfer/transfer.js';
import { answerOptions } from '../cors.js';
import { answerInternalError } from '../internal-error.js';
import { readBody } from '../limits.js';
import { apiRateLimitedMessage, tokenSubject } from '../rate-limit.js';
import { accessRoutes } from './access.js';
import { activityRoutes } from './activity.js';
import { type ApiAuthenticate, CSRF_HEADER, WEB_ACTOR } from './browser-auth.js';
import { diffRoutes } from './diff.js';
import { entryRoutes } from './entries.js';
import { retryAfterHeaders, STATUS_BY_CODE, sendApiError } from './errors.js';
import { EventStreams } from './events.js';
import { gateRefusalMessage, ImportGate } from './import-gate.js';
import { sendJson, sendJsonStream } from './json.js';
import { checkQuery, pathSegment } from './request.js';
import { revertRoutes } from './revert.js';
import { reviewRoutes } from './review.js';
import type { Route } from './route.js';
import { searchRoutes } from './search.js';
import type { SessionRoutes } from './session.js';
import { tidyRoutes } from './tidy.js';
import { transferRoutes } from './transfer.js';
import { trashRoutes } from './trash.js';
import { apiMessage, READ_ONLY_TOKEN, REVIEW_TOKEN } from './wording.js';

/** Largest body of `POST /api/import`: a whole memory, far above the 1 MiB that a tool call may take. */
export const MAX_IMPORT_BODY_BYTES = 64 * 1024 * 1024;

/** The label history records for changes made through the API without a token. */
const API_ACTOR = 'api';

export interface ApiOptions {
  readonly memory: Memory;
  /** Export, import and wipe over that memory. */
  readonly transfer: Transfer;
  /** A bearer token, or a signed-in browser's cookie (browser-auth.ts). */
  readonly authenticate: ApiAuthenticate;
  /** Signing in and out, and the signed-in browsers (session.ts). */
  readonly sessions: SessionRoutes;
  /** Static tokens (--auth token and oauth; undefined with --auth none), for the user's own tokens (access.ts). */
  readonly access?: Access | undefined;
  /** Connected apps (--auth oauth only). */
  readonly apps?: Pick<OAuthTokens, 'listAppsOf' | 'revokeAppOf' | 'setAppReviewOf'> | undefined;
  /** Cap on the body of every route but import. */
  readonly maxBodyBytes: number;
  readonly maxImportBytes: number;
  /** Imports running at once across the server (default MAX_CONCURRENT_IMPORTS); one per user. */
  readonly maxConcurrentImports?: number;
  /** The `api` limit, per token or browser session (../rate-limit.ts); none when undefined. */
  readonly rateLimits?: RateLimits | undefined;
  /** Count a request without a token or session against the address a proxy in front reports. */
  readonly trustProxy?: boolean;
  readonly log: (line: string) => void;
  /** Told when an event stream opens; the function it returns, when it closes (the metrics' gauge). */
  readonly eventStreamOpened?: (() => () => void) | undefined;
}

/** What the request log learns: who called, and the route (never the entry name in the path). */
export interface ApiExchange {
  user?: string;
  route?: string;
  /** Who acted, as history records it (a token's label, `web`, `api`). */
  actor?: string;
  /** The code of the EngramError the request was refused with, if any (store errors are counted in /metrics). */
  failure?: string;
}

export interface Api {
  serve(req: IncomingMessage, res: ServerResponse, path: string, exchange: ApiExchange): Promise<void>;
  /** The body cap for a request to `path`, known before the body is sent (Expect: 100-continue). */
  maxBodyBytesFor(path: string): number;
  /** Ends the streams of /api/events (and refuses new ones): the server is closing. */
  closeStreams(): void;
}

export function isApiPath(path: string): boolean {
  return path === '/api' || path.startsWith('/api/');
}

interface CompiledRoute {
  readonly route: Route;
  readonly pattern: RegExp;
}

function compile(route: Route): CompiledRoute {
  const source = route.template.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\\{(group|slug|id)\\\}/g, '([^/]+)');
  return { route, pattern: new RegExp(`^${source}$`) };
}

function contentTypeIsJson(req: IncomingMessage): boolean {
  return req.headers['content-type']?.split(';')[0]?.trim().toLowerCase() === 'application/json';
}

export function createApi(options: ApiOptions): Api {
  const { memory, authenticate, log } = options;
  const events = new EventStreams(memory, undefined, options.eventStreamOpened);
  const routes = [
    ...entryRoutes(memory),
    ...diffRoutes(memory),
    ...trashRoutes(memory),
    ...reviewRoutes(memory),
    ...transferRoutes(options.transfer),
    ...accessRoutes(options.access, options.apps),
    ...searchRoutes(memory),
    ...activityRoutes(memory),
    ...revertRoutes(memory),
    ...tidyRoutes(memory),
    ...events.routes(),
  ].map(compile);
  const bodyCap = (route: Route) => (route.body === 'document' ? options.maxImportBytes : options.maxBodyBytes);
  const importGate = new ImportGate(options.maxConcurrentImports);
  // Undefined when /api is not limited: no request then pays for finding whom it counts against.
  const apiLimits = options.rateLimits?.has('api') ? options.rateLimits : undefined;

  async function answer(req: IncomingMessage, res: ServerResponse, path: string, exchange: ApiExchange) {
    if (await options.sessions(req, res, path, exchange)) return;
    const matches = routes.filter(({ pattern }) => pattern.test(path));
    const [first] = matches;
    if (!first) {
      sendApiError(res, 404, 'NOT_FOUND', `Not found: ${path} is not an API route. docs/api.md lists them.`);
      return;
    }
    exchange.route = first.route.template;
    const methods = matches.map(({ route }) => route.method).join(', ');
    const allow = `${methods}, OPTIONS`;
    if (req.method === 'OPTIONS') {
      answerOptions(req, res, allow);
      return;
    }
    const match = matches.find(({ route }) => route.method === req.method);
    if (!match) {
      const message = `Method not allowed: ${req.method} ${first.route.template}; use ${methods}.`;
      sendApiError(res, 405, 'METHOD_NOT_ALLOWED', message, { Allow: allow });
      return;
    }
    const { route } = match;
    const auth = await authenticate(req);
    if (!auth.ok && 'forbidden' in auth) {
      sendApiError(res, 403, 'FORBIDDEN_ORIGIN', auth.forbidden);
      return;
    }
    if (!auth.ok) {
      sendApiError(res, 401, 'UNAUTHORIZED', auth.message, { 'WWW-Authenticate': auth.challenge });
      return;
    }
    exchange.user = auth.caller.user;
    const refused = await apiLimits?.refusal([
      ['api', tokenSubject(req, req.headers.authorization, options.trustProxy ?? false)],
    ]);
    if (refused !== undefined) {
      sendApiError(res, 429, 'RATE_LIMITED', apiRateLimitedMessage(refused), rateLimitHeaders(refused));
      return;
    }
    // Without tokens, history names the web UI (which sends its CSRF header) or `api` (scripts).
    const label = req.headers[CSRF_HEADER] === '1' ? WEB_ACTOR : API_ACTOR;
    const caller: Caller = auth.anonymous ? { ...auth.caller, label } : auth.caller;
    exchange.actor = caller.label;
    if (route.method !== 'GET' && caller.readOnly) {
      sendApiError(res, 403, 'READ_ONLY_TOKEN', READ_ONLY_TOKEN);
      return;
    }
    if (route.method !== 'GET' && caller.review) {
      sendApiError(res, 403, 'READ_ONLY_TOKEN', REVIEW_TOKEN);
      return;
    }
    const query = new URL(req.url ?? '/', 'http://engram').searchParams;
    checkQuery(query, route.query ?? [], `${route.method} ${route.template}`);
    const bearer = req.headers.authorization !== undefined;
    if (route.body !== 'document') return serveRoute(req, res, path, match, caller, query, bearer);
    const gate = importGate.enter(caller.user);
    if ('refused' in gate) {
      sendApiError(res, 429, 'BUSY', gateRefusalMessage(gate.refused), { 'Retry-After': '5', Connection: 'close' });
      return;
    }
    try {
      await serveRoute(req, res, path, match, caller, query, bearer);
    } finally {
      gate.leave();
    }
  }

  /** Reads the route's body, calls it, and sends what it answers. */
  async function serveRoute(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    { route, pattern }: CompiledRoute,
    caller: Caller,
    query: URLSearchParams,
    bearer: boolean,
  ) {
    let body = '';
    if (route.body) {
      if (!contentTypeIsJson(req)) {
        const message = `Unsupported media type: send the body of ${route.method} ${route.template} as JSON, with the header Content-Type: application/json.`;
        sendApiError(res, 415, 'UNSUPPORTED_MEDIA_TYPE', message);
        return;
      }
    }
    if (route.body === 'json') {
      const read = await readBody(req, bodyCap(route));
      if (read.kind === 'too-large') {
        const message = `Request body too large: ${route.template} takes at most ${formatCount(bodyCap(route))} bytes.`;
        sendApiError(res, 413, 'TOO_LARGE', message, { Connection: 'close' });
        return;
      }
      body = read.text;
    }
    const document = route.body === 'document' ? { req, maxBytes: bodyCap(route) } : undefined;
    const captures = (pattern.exec(path) ?? []).slice(1).map(pathSegment);
    const byId = route.template.includes('{id}');
    const [group, slug] = byId ? [] : captures;
    const name = group === undefined || slug === undefined ? '' : `${group}/${slug}`;
    const id = byId ? (captures[0] ?? '') : '';
    const ifMatch = req.headers['if-match'];
    const result = await route.handle({
      caller,
      name,
      id,
      query,
      body,
      ...(document ? { document } : {}),
      ifMatch,
      bearer,
    });
    if (result.respond) await result.respond(res, async () => (await authenticate(req)).ok);
    else if (result.stream) await sendJsonStream(res, result.status ?? 200, result.stream, result.headers);
    else sendJson(res, result.status ?? 200, result.body, result.headers);
  }

  return {
    async serve(req, res, path, exchange) {
      try {
        await answer(req, res, path, exchange);
      } catch (error) {
        if (isEngramError(error)) exchange.failure = error.code;
        if (isEngramError(error) && !res.destroyed && !res.headersSent) {
          sendApiError(
            res,
            STATUS_BY_CODE[error.code],
            error.code,
            apiMessage(error),
            retryAfterHeaders(error.code, error.detail),
          );
          return;
        }
        answerInternalError(res, error, log, (message) => sendApiError(res, 500, 'INTERNAL', message));
      }
    },
    maxBodyBytesFor(path) {
      const route = routes.find(({ pattern }) => pattern.test(path))?.route;
      return route ? bodyCap(route) : options.maxBodyBytes;
    },
    closeStreams: () => events.close(),
  };
}
