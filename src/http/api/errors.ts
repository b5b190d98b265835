/**
 * How the REST API refuses: always `{ "error": { "code", "message" } }` as JSON, with the
 * HTTP status that fits. Every EngramError code maps to its status in one table, so a new
 * code cannot be added without deciding how the API answers it. A database that is only
 * busy, and a sign-in slowed down after failures, say when to try again (Retry-After).
 */

import type { ServerResponse } from 'node:http';
import type { ErrorCode, ErrorDetail } from '../../memory/model/errors.js';
import { sendJson } from './json.js';

/** Refusals the HTTP layer makes before any Memory call (they are not EngramErrors). */
export type HttpRefusalCode =
  | 'FORBIDDEN_HOST'
  | 'FORBIDDEN_ORIGIN'
  | 'METHOD_NOT_ALLOWED'
  | 'UNSUPPORTED_MEDIA_TYPE'
  /** Creating a token with a token: only a signed-in person may (access.ts). */
  | 'SIGN_IN_REQUIRED'
  /** Past a rate limit (access/rate-limits): 429 with Retry-After and the RateLimit fields. */
  | 'RATE_LIMITED'
  | 'INTERNAL';

export type ApiErrorCode = ErrorCode | HttpRefusalCode;

export const STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  INVALID_ARGUMENT: 400,
  INVALID_NAME: 400,
  NOTHING_TO_DO: 400,
  UNAUTHORIZED: 401,
  READ_ONLY_GROUP: 403,
  READ_ONLY_TOKEN: 403,
  NOT_FOUND: 404,
  UNKNOWN_TOOL: 404,
  CONFLICT: 409,
  PROPOSAL_CONFLICT: 409,
  NO_MATCH: 409,
  AMBIGUOUS: 409,
  TOO_LARGE: 413,
  TOO_MANY_ENTRIES: 413,
  TOO_MANY_PROPOSALS: 429,
  BUSY: 429,
  TOO_MANY_ATTEMPTS: 429,
  STALE_REVISION: 412,
  INVALID_CONFIG: 500,
  STORE_BUSY: 503,
  STORE_READ_ONLY: 503,
  STORE_FULL: 507,
  STORE_REPLACED: 503,
  STORE_UNAVAILABLE: 503,
};

/** Seconds a client should wait before trying again, for the refusals that pass on their own. */
const RETRY_AFTER_SECONDS: Partial<Record<ApiErrorCode, number>> = { STORE_BUSY: 1 };

/** `Retry-After` for a refusal that passes on its own (a busy database, a throttled sign-in); none for the others. */
export function retryAfterHeaders(code: ApiErrorCode, detail?: ErrorDetail): Record<string, string> {
  const seconds = detail?.reason === 'sign-in-throttled' ? detail.retryAfterSeconds : RETRY_AFTER_SECONDS[code];
  return seconds === undefined ? {} : { 'Retry-After': String(seconds) };
}

export function sendApiError(
  res: ServerResponse,
  status: number,
  code: ApiErrorCode,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { error: { code, message } }, { ...retryAfterHeaders(code), ...headers });
}
