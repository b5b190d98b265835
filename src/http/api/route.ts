/**
 * What a REST route is: a method and a path template, the query parameters it takes,
 * whether it reads a body (a small JSON one, or a whole export document), and a handler
 * that calls the Memory service and says what to send back as JSON.
 */

import type { ServerResponse } from 'node:http';
import type { Caller } from '../../memory/memory.js';
import type { BodySource } from './import-stream.js';

export interface ApiRequest {
  readonly caller: Caller;
  /** The entry the path names as `{group}/{slug}`, as sent (Memory checks it); empty if none. */
  readonly name: string;
  readonly query: URLSearchParams;
  /** What the path names as `{id}` (a token or an app), percent-decoded; empty if none. */
  readonly id: string;
  /** The caller sent a bearer token (a script, or a token pasted into the web UI), not a signed-in browser's cookie. */
  readonly bearer: boolean;
  /** The request body, for routes that read a `json` one; empty otherwise. */
  readonly body: string;
  /** The body of a `document` route, unread: the route reads it as it arrives (import-stream.ts). */
  readonly document?: BodySource;
  /** The If-Match header as sent: the revision a save is based on (entries.ts). */
  readonly ifMatch: string | undefined;
}

export interface ApiResult {
  readonly body?: unknown;
  /** JSON text in pieces, sent as they come instead of `body`: for answers of any size (export). */
  readonly stream?: AsyncIterable<string>;
  readonly headers?: Record<string, string>;
  /** 200 unless said otherwise (201 for a created entry). */
  readonly status?: number;
  /**
   * Answers by itself instead, for as long as it takes (server-sent events, events.ts);
   * `stillAllowed` checks the request's credentials again, as they were checked to get here.
   * Settles once the answer is under way; the router awaits it, so a failure is its 500.
   */
  readonly respond?: (res: ServerResponse, stillAllowed: () => Promise<boolean>) => Promise<void>;
}

export interface Route {
  /** GET reads; every other method changes memory, so read-only tokens are refused it. */
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path, `{group}` and `{slug}` standing for an entry name, `{id}` for a token's or app's id; also what the log shows. */
  readonly template: string;
  /** Query parameters the route takes; any other is refused, so a typo never goes unnoticed. */
  readonly query?: readonly string[];
  /** `json`: a small JSON body, read whole; `document`: an import, under the larger import cap, read by the route as it arrives. */
  readonly body?: 'json' | 'document';
  handle(request: ApiRequest): Promise<ApiResult>;
}
