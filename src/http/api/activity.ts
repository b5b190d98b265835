/**
 * `GET /api/activity` and `GET /api/activity/actors`: what changed across the caller's
 * whole memory, which assistant wrote it and when, newest first, a page at a time
 * (memory/activity.ts); and the actors with their counts, for the web UI's filter.
 */

import { ACTIVITY_LIMIT_CAP } from '../../memory/activity.js';
import type { Memory } from '../../memory/memory.js';
import { EngramError } from '../../memory/model/errors.js';
import type { Route } from './route.js';
import { activityItemJson, actorJson } from './shapes.js';

export function activityRoutes(memory: Memory): Route[] {
  return [
    {
      method: 'GET',
      template: '/api/activity',
      query: ['limit', 'before', 'actor'],
      handle: async ({ caller, query }) => {
        const limit = limitOf(query.get('limit'));
        const before = query.get('before') ?? undefined;
        const actor = query.get('actor') ?? undefined;
        const page = await memory.activity.list(caller, { limit, before, actor });
        return {
          body: { items: page.items.map(activityItemJson), ...(page.next === undefined ? {} : { next: page.next }) },
        };
      },
    },
    {
      method: 'GET',
      template: '/api/activity/actors',
      handle: async ({ caller }) => ({ body: { actors: (await memory.activity.actors(caller)).map(actorJson) } }),
    },
  ];
}

/** `?limit=N`, a whole number (the Activity service bounds it); absent, the default. */
function limitOf(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (!/^[0-9]{1,9}$/.test(value)) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `?limit=${value} is not understood: use a whole number from 1 to ${ACTIVITY_LIMIT_CAP}, or leave it out.`,
    );
  }
  return Number(value);
}
