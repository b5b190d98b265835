/**
 * Calls to Engram's REST API (/api, docs/api.md) from the web UI. Every call carries
 * `X-Engram-CSRF: 1`, which the server requires of every change made with the session
 * cookie (a foreign page cannot send it). A pasted token is kept in sessionStorage (this
 * tab only, gone when it closes) and sent as a bearer header: tokens belong to users who
 * may have no password, so they are not exchanged for a session, and no script of ours
 * ever sees the session cookie (HttpOnly).
 */

import { namePath } from '../paths';
import type { Entry } from './types';

const TOKEN_KEY = 'engram.token';

export interface ApiFailure {
  readonly code: string;
  readonly message: string;
  readonly current?: Entry;
  /** What the refusal is about, for the page to word it (an import's items over the cap, …). */
  readonly detail?: { readonly reason: string; readonly [key: string]: unknown };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly failure: ApiFailure,
  ) {
    super(failure.message);
  }
}

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** The API path of an entry; throws for a name that could steer it elsewhere (paths.ts). */
export function entryPath(name: string): string {
  return `/api/entries/${namePath(name)}`;
}

export async function call<T>(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const token = storedToken();
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: {
      Accept: 'application/json',
      'X-Engram-CSRF': '1',
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!response.ok) {
    const error = (json as { error?: ApiFailure } | undefined)?.error;
    throw new ApiError(
      response.status,
      error ?? { code: 'INTERNAL', message: `The server answered ${response.status}.` },
    );
  }
  return json as T;
}
