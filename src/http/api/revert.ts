/**
 * `/api/revert`: undo what one assistant did (memory/revert.ts). `GET /api/revert?actor=
 * &since=&until=` previews it; `POST /api/revert` applies it, with the conflicts chosen
 * and the preview's version (refused if the memory no longer matches it); `GET` and
 * `POST /api/revert/{id}/undo` preview and apply undoing a revert. Times are ISO 8601.
 */

import type { Memory } from '../../memory/memory.js';
import { EngramError } from '../../memory/model/errors.js';
import type { RevertChoice, RevertRange } from '../../memory/revert.js';
import { jsonBody } from './request.js';
import type { Route } from './route.js';
import { revertPreviewJson, revertResultJson } from './shapes.js';

const APPLY_EXAMPLE =
  '{"actor": "claude-desktop", "since": "2026-12-01T09:00:00Z", "until": "…" (optional), ' +
  '"include": ["topics/a"] or "all" (optional: the conflicts to revert anyway), "version": "…" (the preview\'s)}';
const UNDO_EXAMPLE = '{"include": ["topics/a"] or "all" (optional), "version": "…" (the preview\'s, optional)}';

/** An ISO 8601 time of the request, in ms since the epoch; INVALID_ARGUMENT otherwise. */
function timeOf(value: unknown, field: string, example: string): number {
  const at = typeof value === 'string' && /^\d{4}-\d\d-\d\d/.test(value) ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(at)) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `"${field}" must be an ISO 8601 time, like 2026-12-01T09:00:00Z: send ${example}; nothing was changed.`,
    );
  }
  return at;
}

function rangeOf(actor: unknown, since: unknown, until: unknown, example: string): RevertRange {
  if (typeof actor !== 'string' || actor === '') {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `"actor" must name whose changes to revert (GET /api/activity/actors lists them): send ${example}.`,
    );
  }
  return {
    actor,
    since: timeOf(since, 'since', example),
    ...(until === undefined || until === null ? {} : { until: timeOf(until, 'until', example) }),
  };
}

/** The fields of a JSON object body, only those named in `allowed`. */
function fieldsOf(text: string, allowed: readonly string[], example: string): Record<string, unknown> {
  const body = text === '' ? {} : jsonBody(text, example);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new EngramError('INVALID_ARGUMENT', `the request body is not an object: send ${example}.`);
  }
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) {
      throw new EngramError('INVALID_ARGUMENT', `"${key}" is not a field of this request: send ${example}.`);
    }
  }
  return body as Record<string, unknown>;
}

function choiceOf(fields: Record<string, unknown>, example: string): RevertChoice {
  const { include, version } = fields;
  const names = Array.isArray(include) && include.every((item) => typeof item === 'string');
  if (include !== undefined && include !== 'all' && !names) {
    throw new EngramError('INVALID_ARGUMENT', `"include" must be a list of entry names, or "all": send ${example}.`);
  }
  if (version !== undefined && typeof version !== 'string') {
    throw new EngramError('INVALID_ARGUMENT', `"version" must be the preview's version, a string: send ${example}.`);
  }
  return { include: include as RevertChoice['include'], version };
}

export function revertRoutes(memory: Memory): Route[] {
  return [
    {
      method: 'GET',
      template: '/api/revert',
      query: ['actor', 'since', 'until'],
      handle: async ({ caller, query }) => {
        const example = '?actor=NAME&since=ISO-TIME (and &until=ISO-TIME)';
        const range = rangeOf(query.get('actor'), query.get('since'), query.get('until'), example);
        return { body: revertPreviewJson(await memory.revert.preview(caller, range)) };
      },
    },
    {
      method: 'POST',
      template: '/api/revert',
      body: 'json',
      handle: async ({ caller, body }) => {
        const fields = fieldsOf(body, ['actor', 'since', 'until', 'include', 'version'], APPLY_EXAMPLE);
        const range = rangeOf(fields.actor, fields.since, fields.until, APPLY_EXAMPLE);
        const result = await memory.revert.apply(caller, range, choiceOf(fields, APPLY_EXAMPLE));
        return { body: revertResultJson(result) };
      },
    },
    {
      method: 'GET',
      template: '/api/revert/{id}/undo',
      handle: async ({ caller, id }) => ({ body: revertPreviewJson(await memory.revert.previewUndo(caller, id)) }),
    },
    {
      method: 'POST',
      template: '/api/revert/{id}/undo',
      body: 'json',
      handle: async ({ caller, id, body }) => {
        const choice = choiceOf(fieldsOf(body, ['include', 'version'], UNDO_EXAMPLE), UNDO_EXAMPLE);
        return { body: revertResultJson(await memory.revert.undo(caller, id, choice)) };
      },
    },
  ];
}
