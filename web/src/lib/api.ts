/**
 * Calls to Engram's REST API (/api, docs/api.md) from the web UI. Every call carries
 * `X-Engram-CSRF: 1`, which the server requires of every change made with the session
 * cookie (a foreign page cannot send it). A pasted token is kept in sessionStorage (this
 * tab only, gone when it closes) and sent as a bearer header: tokens belong to users who
 * may have no password, so they are not exchanged for a session, and no script of ours
 * ever sees the session cookie (HttpOnly).
 */

import { namePath, pathSegment } from './paths';

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

export interface Session {
  readonly auth: 'none' | 'token' | 'oauth';
  readonly signIn: boolean;
  readonly user: string | null;
  readonly via: 'none' | 'session' | 'token' | null;
  readonly readOnly: boolean;
}

export interface IndexRow {
  readonly name: string;
  readonly size: number;
  readonly description: string;
  readonly updated: string;
  readonly revision: number;
  readonly actor: string;
}

export interface Limits {
  readonly entryCap: number;
  readonly userCap: number;
  readonly maxEntries: number;
  readonly descriptionCap: number;
  readonly groups: readonly string[];
}

export interface Overview {
  readonly entries: IndexRow[];
  readonly usage: { readonly bytes: number; readonly entries: number };
  readonly limits: Limits;
}

export interface Entry {
  readonly name: string;
  readonly description: string;
  readonly size: number;
  readonly revision: number;
  readonly created: string;
  readonly updated: string;
  readonly body: string;
}

/** A part of a hit: plain text, and where the words searched for are in it ([start, end) in UTF-16 units). */
export interface SearchSnippet {
  readonly field: 'name' | 'description' | 'body';
  readonly text: string;
  readonly matches: readonly (readonly [number, number])[];
}

export interface SearchHit {
  readonly name: string;
  readonly description: string;
  readonly updated: string;
  readonly snippets: readonly SearchSnippet[];
}

export interface BrowserSession {
  readonly id: string;
  readonly agent: string;
  readonly created: string;
  readonly expires: string;
  readonly lastUsed: string | null;
  readonly current: boolean;
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

export const api = {
  session: () => call<Session>('GET', '/api/session'),
  signIn: (user: string, password: string) => call<Session>('POST', '/api/session', { user, password }),
  signOut: () => call<Session>('DELETE', '/api/session'),
  sessions: () => call<{ sessions: BrowserSession[] }>('GET', '/api/sessions'),
  revokeSession: async (id: string) => call<{ revoked: string }>('DELETE', `/api/sessions/${pathSegment(id)}`),
  overview: () => call<Overview>('GET', '/api/entries'),
  search: (query: string) =>
    call<{ hits: SearchHit[] }>('GET', `/api/search?${new URLSearchParams({ q: query, limit: '50' })}`),
  entry: async (name: string) => call<{ entry: Entry }>('GET', entryPath(name)),
  create: (name: string, description: string, body: string) =>
    call<{ entry: Entry }>('POST', '/api/entries', { name, description, body }),
  save: async (name: string, revision: number, description: string, body: string) =>
    call<{ entry: Entry }>('PUT', entryPath(name), { description, body }, { 'If-Match': `"${revision}"` }),
  drop: async (name: string) => call<{ dropped: string }>('DELETE', entryPath(name)),
  undrop: async (name: string) => call<{ entry: Entry }>('POST', `/api/trash/${namePath(name)}/undrop`),
};
