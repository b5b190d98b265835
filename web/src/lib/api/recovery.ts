/** Getting back what was changed or dropped: an entry's history and diffs, restoring a revision, the trash. */

import { namePath } from '../paths';
import { call, entryPath } from './client';
import type { DiffAnswer, Entry, Revision, TrashItem } from './types';

export const recoveryApi = {
  history: async (name: string) => call<{ revisions: Revision[] }>('GET', `${entryPath(name)}/history`),
  diff: async (name: string, from: number, to: number) =>
    call<DiffAnswer>('GET', `${entryPath(name)}/diff?${new URLSearchParams({ from: String(from), to: String(to) })}`),
  restore: async (name: string, revision: number) =>
    call<{ entry: Entry }>('POST', `${entryPath(name)}/restore`, { revision }),
  trash: () => call<{ trash: TrashItem[] }>('GET', '/api/trash'),
  undrop: async (name: string) => call<{ entry: Entry }>('POST', `/api/trash/${namePath(name)}/undrop`),
  purge: async (name: string) => call<{ purged: string; copies: number }>('DELETE', `/api/trash/${namePath(name)}`),
};
