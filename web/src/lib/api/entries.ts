/** The entries: the index, search, reading one, and creating, saving and dropping them. */

import { call, entryPath } from './client';
import type { Entry, Overview, SearchHit } from './types';

export const entriesApi = {
  overview: () => call<Overview>('GET', '/api/entries'),
  search: (query: string) =>
    call<{ hits: SearchHit[] }>('GET', `/api/search?${new URLSearchParams({ q: query, limit: '50' })}`),
  entry: async (name: string) => call<{ entry: Entry }>('GET', entryPath(name)),
  create: (name: string, description: string, body: string) =>
    call<{ entry: Entry }>('POST', '/api/entries', { name, description, body }),
  save: async (name: string, revision: number, description: string, body: string) =>
    call<{ entry: Entry }>('PUT', entryPath(name), { description, body }, { 'If-Match': `"${revision}"` }),
  drop: async (name: string) => call<{ dropped: string }>('DELETE', entryPath(name)),
};
