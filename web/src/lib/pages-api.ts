/**
 * Calls of the history, trash, activity, transfer and access pages (docs/api.md), through
 * the shared client (api.ts): the same CSRF header, bearer token and error handling.
 */

import { call, type Entry, entryPath } from './api';

export interface Revision {
  readonly revision: number;
  readonly operation: string;
  readonly actor: string;
  readonly at: string;
  readonly description: string;
  readonly size: number;
  readonly body: string;
}

export interface TrashItem {
  readonly name: string;
  readonly description: string;
  readonly size: number;
  readonly droppedAt: string;
  readonly droppedBy: string;
  readonly purgeAt: string;
}

export interface ActivityItem {
  readonly name: string;
  readonly revision: number;
  readonly operation: string;
  readonly actor: string;
  readonly at: string;
  readonly size: number;
  readonly description: string;
  readonly cursor: string;
}

export interface ActorCount {
  readonly actor: string;
  readonly changes: number;
  readonly last: string;
}

export interface ImportReport {
  readonly created: string[];
  readonly updated: string[];
  readonly unchanged: string[];
  readonly conflicts: string[];
  readonly dropped: string[];
  readonly skipped: string[];
  readonly dryRun: boolean;
}

export interface ImportOptions {
  readonly mode: 'merge' | 'replace';
  readonly overwrite: boolean;
  readonly dryRun: boolean;
  /** Import entries of groups the model cannot write too (they are left out otherwise). */
  readonly allGroups: boolean;
}

export interface TokenInfo {
  readonly id: string;
  readonly label: string;
  readonly readOnly: boolean;
  readonly created: string;
  readonly lastUsed: string | null;
}

export interface AppInfo {
  readonly id: string;
  readonly name: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
  readonly created: string;
  readonly lastUsed: string | null;
}

const trashPath = (name: string) => `/api/trash/${name.split('/').map(encodeURIComponent).join('/')}`;

export const pagesApi = {
  history: (name: string) => call<{ revisions: Revision[] }>('GET', `${entryPath(name)}/history`),
  diff: (name: string, from: number, to: number) =>
    call<{ diff: string }>('GET', `${entryPath(name)}/diff?from=${from}&to=${to}`),
  restore: (name: string, revision: number) =>
    call<{ entry: Entry }>('POST', `${entryPath(name)}/restore`, { revision }),
  trash: () => call<{ trash: TrashItem[] }>('GET', '/api/trash'),
  purge: (name: string) => call<{ purged: string; copies: number }>('DELETE', trashPath(name)),
  activity: (actor: string, before?: string) => {
    const query = new URLSearchParams({ limit: '50' });
    if (actor !== '') query.set('actor', actor);
    if (before !== undefined) query.set('before', before);
    return call<{ items: ActivityItem[]; next?: string }>('GET', `/api/activity?${query}`);
  },
  actors: () => call<{ actors: ActorCount[] }>('GET', '/api/activity/actors'),
  /** The document as parsed from the file: sent back as JSON (the server checks it all). */
  importDocument: (document: unknown, options: ImportOptions) => {
    const query = new URLSearchParams({ mode: options.mode });
    if (options.overwrite) query.set('overwrite', '1');
    if (options.dryRun) query.set('dryRun', '1');
    if (options.allGroups) query.set('allGroups', '1');
    return call<ImportReport>('POST', `/api/import?${query}`, document);
  },
  wipe: () => call<{ dropped: number }>('POST', '/api/wipe', { confirm: 'wipe' }),
  tokens: () => call<{ tokens: TokenInfo[] }>('GET', '/api/tokens'),
  createToken: (label: string, readOnly: boolean) =>
    call<{ token: TokenInfo; secret: string }>(
      'POST',
      '/api/tokens',
      label === '' ? { readOnly } : { label, readOnly },
    ),
  revokeToken: (id: string) => call<{ revoked: string }>('DELETE', `/api/tokens/${encodeURIComponent(id)}`),
  apps: () => call<{ apps: AppInfo[] }>('GET', '/api/apps'),
  revokeApp: (id: string) => call<{ revoked: string }>('DELETE', `/api/apps/${encodeURIComponent(id)}`),
};
