/**
 * `/api/entries`: the index, one entry with its body, its history, and restoring one of
 * its revisions — what the web UI shows and how a person undoes a model's change.
 */

import { EngramError } from '../../core/errors.js';
import { formatMissing } from '../../core/format.js';
import type { Memory } from '../../core/memory.js';
import { jsonBody } from './request.js';
import type { Route } from './route.js';
import { entryJson, revisionJson } from './shapes.js';

const RESTORE_EXAMPLE = '{"revision": N}, N a revision number from GET /api/entries/{group}/{slug}/history';

function revisionOf(body: unknown): number {
  const revision = (body as { revision?: unknown } | null)?.revision;
  const keys = typeof body === 'object' && body !== null && !Array.isArray(body) ? Object.keys(body) : [];
  if (keys.length !== 1 || typeof revision !== 'number' || !Number.isInteger(revision) || revision < 1) {
    throw new EngramError('INVALID_ARGUMENT', `the request body must be ${RESTORE_EXAMPLE}; nothing was restored.`);
  }
  return revision;
}

export function entryRoutes(memory: Memory): Route[] {
  return [
    {
      method: 'GET',
      template: '/api/entries',
      handle: async ({ caller }) => ({ body: { entries: await memory.index(caller) } }),
    },
    {
      method: 'GET',
      template: '/api/entries/{group}/{slug}',
      handle: async ({ caller, name }) => {
        const { found, missing } = await memory.open(caller, [name]);
        const entry = found[0];
        if (!entry) {
          const [absent] = missing;
          throw new EngramError(
            'NOT_FOUND',
            `${absent ? formatMissing(absent) : `${name} not found.`} GET /api/entries lists every entry.`,
          );
        }
        return { body: { entry: entryJson(entry) } };
      },
    },
    {
      method: 'GET',
      template: '/api/entries/{group}/{slug}/history',
      handle: async ({ caller, name }) => ({
        body: { revisions: (await memory.recovery.history(caller, name)).map(revisionJson) },
      }),
    },
    {
      method: 'POST',
      template: '/api/entries/{group}/{slug}/restore',
      body: 'json',
      handle: async ({ caller, name, body }) => {
        const revision = revisionOf(jsonBody(body, RESTORE_EXAMPLE));
        return { body: { entry: entryJson(await memory.recovery.restore(caller, name, revision)) } };
      },
    },
  ];
}
