/**
 * `GET /api/search?q=…&limit=…`: full-text search of the caller's live entries, for the
 * web UI as one types and for scripts (memory/search.ts). Snippets are plain text with the
 * places of the matched words: the page escapes and highlights them itself.
 */

import type { Memory } from '../../memory/memory.js';
import { EngramError } from '../../memory/model/errors.js';
import { SEARCH_LIMIT_CAP } from '../../memory/search.js';
import type { Route } from './route.js';
import { searchHitJson } from './shapes.js';

export function searchRoutes(memory: Memory): Route[] {
  return [
    {
      method: 'GET',
      template: '/api/search',
      query: ['q', 'limit'],
      handle: async ({ caller, query }) => {
        const q = query.get('q');
        if (q === null) {
          throw new EngramError('INVALID_ARGUMENT', 'GET /api/search takes the words to find as ?q=WORDS.');
        }
        const hits = await memory.search(caller, q, { limit: limitOf(query.get('limit')) });
        return { body: { hits: hits.map(searchHitJson) } };
      },
    },
  ];
}

/** `?limit=N`, a whole number (Memory bounds it); absent, the default. */
function limitOf(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (!/^[0-9]{1,9}$/.test(value)) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `?limit=${value} is not understood: use a whole number from 1 to ${SEARCH_LIMIT_CAP}, or leave it out.`,
    );
  }
  return Number(value);
}
