/**
 * `/api/export` and `/api/import`: the whole memory as one document (docs/export-format.md),
 * downloaded (streamed as it is read) or brought back (read as it arrives, import-document.ts),
 * merge or replace, with a dry run;
 * `/api/import?from=KIND` brings in another system's memory instead (import-from.ts).
 * `/api/wipe` drops every entry to the trash, only when the body confirms it in words, so
 * no stray or mistyped call empties a memory; without trash retention it says they were
 * purged, as `engram wipe --json` does.
 */

import { EngramError } from '../../memory/model/errors.js';
import type { Transfer } from '../../transfer/transfer.js';
import { importDocument } from './import-document.js';
import { bridgeKind, importFromRequest } from './import-from.js';
import { choice, flag, jsonBody } from './request.js';
import type { Route } from './route.js';

const WIPE_EXAMPLE = '{"confirm": "wipe"}';

function confirmWipe(body: unknown): void {
  const keys = typeof body === 'object' && body !== null && !Array.isArray(body) ? Object.keys(body) : [];
  if (keys.length !== 1 || (body as { confirm?: unknown }).confirm !== 'wipe') {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `to wipe, the request body must be ${WIPE_EXAMPLE}; nothing was dropped.`,
    );
  }
}

export function transferRoutes(transfer: Transfer): Route[] {
  return [
    {
      method: 'GET',
      template: '/api/export',
      query: ['history'],
      handle: async ({ caller, query }) => ({
        stream: transfer.exportText(caller, { withHistory: flag(query, 'history') }),
        headers: { 'Content-Disposition': 'attachment; filename="engram-export.json"' },
      }),
    },
    {
      method: 'POST',
      template: '/api/import',
      query: ['mode', 'overwrite', 'dryRun', 'allGroups', 'from', 'split'],
      body: 'document',
      handle: async ({ caller, query, document }) => {
        if (!document) throw new Error('POST /api/import is read as a document');
        const options = {
          mode: choice(query, 'mode', ['merge', 'replace']),
          overwrite: flag(query, 'overwrite'),
          dryRun: flag(query, 'dryRun'),
          allGroups: flag(query, 'allGroups'),
        };
        const from = query.get('from');
        if (from !== null) {
          const split = flag(query, 'split');
          return importFromRequest(transfer, caller, bridgeKind(from), document, { ...options, split });
        }
        if (query.has('split')) {
          throw new EngramError('INVALID_ARGUMENT', '?split=1 goes with ?from=KIND; nothing was imported.');
        }
        return importDocument(transfer, caller, document, options);
      },
    },
    {
      method: 'POST',
      template: '/api/wipe',
      body: 'json',
      handle: async ({ caller, body }) => {
        confirmWipe(jsonBody(body, WIPE_EXAMPLE));
        const dropped = await transfer.wipe(caller);
        return { body: transfer.policy.trashRetentionDays === 0 ? { dropped, purged: true } : { dropped } };
      },
    },
  ];
}
