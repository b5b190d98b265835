/**
 * Calls of the history, trash, activity, transfer and access pages (docs/api.md), through
 * the shared client (api.ts): the same CSRF header, bearer token and error handling.
 */

import { call, type Entry, entryPath } from './api';
import { namePath, pathSegment } from './paths';

export interface Revision {
  readonly revision: number;
  readonly operation: string;
  readonly actor: string;
  readonly at: string;
  readonly description: string;
  readonly size: number;
  readonly body: string;
}

/** A revision of a diff too different to show line by line: its size, line count and text. */
export interface DiffSide {
  readonly revision: number;
  readonly description: string;
  readonly size: number;
  readonly lines: number;
  readonly body: string;
}

/** `GET …/diff`: the unified diff, or both revisions when they are too different to show line by line. */
export type DiffAnswer =
  | { readonly tooDifferent: false; readonly diff: string }
  | { readonly tooDifferent: true; readonly diff: null; readonly from: DiffSide; readonly to: DiffSide };

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

/** The other memories the import reads (docs/import.md), by the kind `?from=` names. */
export type SourceKind = 'markdown' | 'server-memory' | 'anthropic-memory' | 'claude-code' | 'chatgpt' | 'llama-webui';

/** One file of such a source: its path inside the folder picked (`/`-separated), and its text. */
export interface SourceText {
  readonly path: string;
  readonly text: string;
}

export interface ImportFromOptions {
  readonly dryRun: boolean;
  readonly split: boolean;
  readonly overwrite: boolean;
  readonly allGroups: boolean;
  /** Entity type → group (server-memory). */
  readonly map?: Record<string, string>;
  /** The entry the memories go to (chatgpt, claude-code). */
  readonly name?: string;
}

export type ItemAction = 'create' | 'append' | 'replace' | 'unchanged' | 'conflict' | 'skip';

/** One item of the source, and what the import does (or would do) with it. */
export interface ImportedItem {
  readonly source: string;
  readonly names: readonly { readonly name: string; readonly action: ItemAction }[];
  readonly notes: readonly string[];
  readonly problem?: 'duplicate' | 'too-large' | 'not-an-entry';
}

export interface ImportFromReport {
  readonly kind: SourceKind;
  readonly dryRun: boolean;
  readonly items: readonly ImportedItem[];
  /** Items left out past the first 100 of each problem: counted, not listed (absent when there are none). */
  readonly unlisted?: Readonly<Record<NonNullable<ImportedItem['problem']>, number>>;
  /** Items over the entry cap: the import is refused unless they are split. */
  readonly tooLarge: readonly string[];
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

export const pagesApi = {
  history: async (name: string) => call<{ revisions: Revision[] }>('GET', `${entryPath(name)}/history`),
  diff: async (name: string, from: number, to: number) =>
    call<DiffAnswer>('GET', `${entryPath(name)}/diff?${new URLSearchParams({ from: String(from), to: String(to) })}`),
  restore: async (name: string, revision: number) =>
    call<{ entry: Entry }>('POST', `${entryPath(name)}/restore`, { revision }),
  trash: () => call<{ trash: TrashItem[] }>('GET', '/api/trash'),
  purge: async (name: string) => call<{ purged: string; copies: number }>('DELETE', `/api/trash/${namePath(name)}`),
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
  /** Another memory's files, as text: the server reads them as `engram import --from KIND` does. */
  importFrom: (kind: SourceKind, files: readonly SourceText[], options: ImportFromOptions) => {
    const query = new URLSearchParams({ from: kind });
    for (const key of ['dryRun', 'split', 'overwrite', 'allGroups'] as const) if (options[key]) query.set(key, '1');
    const chosen = {
      ...(options.map === undefined ? {} : { map: options.map }),
      ...(options.name === undefined ? {} : { name: options.name }),
    };
    return call<ImportFromReport>('POST', `/api/import?${query}`, { files, options: chosen });
  },
  wipe: () => call<{ dropped: number; purged?: true }>('POST', '/api/wipe', { confirm: 'wipe' }),
  tokens: () => call<{ tokens: TokenInfo[] }>('GET', '/api/tokens'),
  createToken: (label: string, readOnly: boolean) =>
    call<{ token: TokenInfo; secret: string }>(
      'POST',
      '/api/tokens',
      label === '' ? { readOnly } : { label, readOnly },
    ),
  revokeToken: async (id: string) => call<{ revoked: string }>('DELETE', `/api/tokens/${pathSegment(id)}`),
  apps: () => call<{ apps: AppInfo[] }>('GET', '/api/apps'),
  revokeApp: async (id: string) => call<{ revoked: string }>('DELETE', `/api/apps/${pathSegment(id)}`),
};
