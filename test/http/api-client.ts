/**
 * What the REST API tests share: one call to `/api` as a script or the web UI makes it
 * (JSON in, JSON out, optional bearer token), and the callers tests act as when they set
 * up memory directly.
 */

import { expect } from 'vitest';
import type { Caller, Memory } from '../../src/memory/memory.js';
import { type RawRequest, type RawResponse, raw } from './fixtures.js';
import type { TestApp } from './in-process.js';

/** Where a call goes: the port of a server on loopback (fixtures.ts), or an app called in-process (in-process.ts). */
export type ApiTarget = number | Pick<TestApp, 'request'>;

export interface ApiCall {
  /** Sent as JSON with `Content-Type: application/json`; a string is sent as it is. */
  readonly body?: unknown;
  readonly token?: string;
  readonly headers?: Record<string, string | number>;
}

export interface ApiResponse extends RawResponse {
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON the route answers
  readonly json: any;
}

/** The local user of `--auth none`, acting from a test. */
export const LOCAL: Caller = { user: 'local', label: 'test' };

export async function api(target: ApiTarget, method: string, path: string, call: ApiCall = {}): Promise<ApiResponse> {
  const headers: Record<string, string | number> = {};
  if (call.body !== undefined) headers['Content-Type'] = 'application/json';
  if (call.token !== undefined) headers.Authorization = `Bearer ${call.token}`;
  const body = call.body === undefined || typeof call.body === 'string' ? call.body : JSON.stringify(call.body);
  const request: RawRequest = {
    method,
    path,
    headers: { ...headers, ...call.headers },
    ...(body === undefined ? {} : { body }),
  };
  const response = typeof target === 'number' ? await raw(target, request) : await target.request(request);
  return { ...response, json: response.body === '' ? undefined : JSON.parse(response.body) };
}

/** The `{ error: { code, message } }` every refusal answers. */
export function apiError(code: string, message: string | RegExp) {
  return { error: { code, message: typeof message === 'string' ? message : expect.stringMatching(message) } };
}

/** Names, descriptions and bodies of the caller's live entries, to compare memory before and after. */
export async function contents(memory: Memory, caller: Caller = LOCAL) {
  const names = (await memory.index(caller)).map((row) => row.name);
  const { found } = await memory.open(caller, names);
  return found.map(({ name, description, body }) => ({ name, description, body }));
}
