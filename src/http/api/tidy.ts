/**
 * Tidying through the REST API (memory/tidy.ts): `GET /api/duplicates?limit=N` lists the
 * pairs of entries that may be one (50 by default, at most 200); `POST /api/merge` with
 * `{ from, into, fromRevision, intoRevision }` merges `from` into `into` — `into` receives
 * its description and body under a heading, `from` goes to the trash — refused when either
 * entry changed since those revisions. The merge is undone by `POST /api/revert/{id}/undo`.
 */

import type { Memory } from '../../memory/memory.js';
import { EngramError } from '../../memory/model/errors.js';
import type { MergeRequest } from '../../memory/tidy.js';
import { jsonBody } from './request.js';
import type { Route } from './route.js';
import { duplicatesJson, mergeResultJson } from './shapes.js';

const MERGE_EXAMPLE =
  '{"from": "topics/coffees", "into": "topics/coffee", "fromRevision": 2, "intoRevision": 5} ' +
  '(the revisions GET /api/duplicates shows)';

const MERGE_FIELDS = ['from', 'into', 'fromRevision', 'intoRevision'] as const;

/** The merge a request body asks for, every field given and of its type; INVALID_ARGUMENT otherwise. */
function mergeRequestOf(text: string): MergeRequest {
  const body = jsonBody(text, MERGE_EXAMPLE);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new EngramError('INVALID_ARGUMENT', `the request body is not an object: send ${MERGE_EXAMPLE}.`);
  }
  const fields = body as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!(MERGE_FIELDS as readonly string[]).includes(key)) {
      throw new EngramError('INVALID_ARGUMENT', `"${key}" is not a field of a merge: send ${MERGE_EXAMPLE}.`);
    }
  }
  const { from, into, fromRevision, intoRevision } = fields;
  for (const [key, value] of [
    ['from', from],
    ['into', into],
  ] as const) {
    if (typeof value !== 'string') {
      throw new EngramError('INVALID_ARGUMENT', `"${key}" must be an entry's name: send ${MERGE_EXAMPLE}.`);
    }
  }
  for (const [key, value] of [
    ['fromRevision', fromRevision],
    ['intoRevision', intoRevision],
  ] as const) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new EngramError(
        'INVALID_ARGUMENT',
        `"${key}" must be the revision of the entry you looked at, a whole number from 1: send ${MERGE_EXAMPLE}.`,
      );
    }
  }
  return { from, into, fromRevision, intoRevision } as MergeRequest;
}

/** `?limit=N`, a whole number (the service bounds it, refusing as duplicates-limit); absent, the default. */
function limitOf(value: string | null): number | undefined {
  if (value === null) return undefined;
  return /^[0-9]{1,9}$/.test(value) ? Number(value) : Number.NaN;
}

export function tidyRoutes(memory: Memory): Route[] {
  return [
    {
      method: 'GET',
      template: '/api/duplicates',
      query: ['limit'],
      handle: async ({ caller, query }) => ({
        body: duplicatesJson(await memory.tidy.duplicates(caller, { limit: limitOf(query.get('limit')) })),
      }),
    },
    {
      method: 'POST',
      template: '/api/merge',
      body: 'json',
      handle: async ({ caller, body }) => ({
        body: mergeResultJson(await memory.tidy.merge(caller, mergeRequestOf(body))),
      }),
    },
  ];
}
