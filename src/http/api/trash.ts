/** `/api/trash`: what was dropped, when it will be purged, bringing an entry back, and purging it for good. */

import type { Memory } from '../../memory/memory.js';
import { parseName } from '../../memory/model/names.js';
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
    {
      method: 'DELETE',
      template: '/api/trash/{group}/{slug}',
      handle: async ({ caller, name }) => {
        const copies = await memory.recovery.purge(caller, name, { force: false });
        return { body: { purged: parseName(name, memory.policy), copies } };
      },
    },
  ];
}
