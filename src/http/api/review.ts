/**
 * `/api/review`: the changes a review-mode token or app proposed (memory/review.ts), for
 * the person — the web UI's Review page, or a script — to list with the diff against each
 * entry as it is now, count (the web UI's header), approve or reject. A review-mode token itself is refused every change
 * here by the router, as everywhere under /api: an app may not approve its own proposals.
 */

import type { Memory } from '../../memory/memory.js';
import type { Route } from './route.js';
import { entryJson, proposalJson } from './shapes.js';

export function reviewRoutes(memory: Memory): Route[] {
  return [
    {
      method: 'GET',
      template: '/api/review',
      handle: async ({ caller }) => ({ body: { proposals: (await memory.review.list(caller)).map(proposalJson) } }),
    },
    {
      method: 'GET',
      template: '/api/review/count',
      handle: async ({ caller }) => ({ body: { count: await memory.review.count(caller) } }),
    },
    {
      method: 'GET',
      template: '/api/review/{id}',
      handle: async ({ caller, id }) => ({ body: proposalJson(await memory.review.show(caller, id)) }),
    },
    {
      method: 'POST',
      template: '/api/review/{id}/approve',
      handle: async ({ caller, id }) => {
        const { proposal, entry } = await memory.review.approve(caller, id);
        return { body: { approved: proposal.id, name: proposal.name, entry: entry ? entryJson(entry) : null } };
      },
    },
    {
      method: 'POST',
      template: '/api/review/{id}/reject',
      handle: async ({ caller, id }) => {
        const proposal = await memory.review.reject(caller, id);
        return { body: { rejected: proposal.id, name: proposal.name } };
      },
    },
  ];
}
