/**
 * `/api/export` and `/api/import`: the whole memory as one document (docs/export-format.md),
 * downloaded (streamed as it is read) or brought back, merge or replace, with a dry run.
 */

import type { Memory } from '../../core/memory.js';
import { choice, flag } from './request.js';
import type { Route } from './route.js';

export function transferRoutes(memory: Memory): Route[] {
  return [
    {
      method: 'GET',
      template: '/api/export',
      query: ['history'],
      handle: async ({ caller, query }) => ({
        stream: memory.transfer.exportText(caller, { withHistory: flag(query, 'history') }),
        headers: { 'Content-Disposition': 'attachment; filename="engram-export.json"' },
      }),
    },
    {
      method: 'POST',
      template: '/api/import',
      query: ['mode', 'overwrite', 'dryRun', 'allGroups'],
      body: 'document',
      handle: async ({ caller, query, body }) => {
        const options = {
          mode: choice(query, 'mode', ['merge', 'replace']),
          overwrite: flag(query, 'overwrite'),
          dryRun: flag(query, 'dryRun'),
          allGroups: flag(query, 'allGroups'),
        };
        return { body: await memory.transfer.import(caller, memory.transfer.parse(body), options) };
      },
    },
  ];
}
