/** `/api/trash`: what was dropped, when it will be purged, and bringing an entry back. */

import type { Memory } from '../../core/memory.js';
import type { Route } from './route.js';
import { entryJson, trashJson } from './shapes.js';

export function trashRoutes(memory: Memory): Route[] {
  return [
    {
      method: 'GET',
      template: '/api/trash',
      handle: async ({ caller }) => ({ body: { trash: (await memory.recovery.trash(caller)).map(trashJson) } }),
    },
    {
      method: 'POST',
      template: '/api/trash/{group}/{slug}/undrop',
      handle: async ({ caller, name }) => ({ body: { entry: entryJson(await memory.recovery.undrop(caller, name)) } }),
    },
  ];
}
