/** The whole memory in and out: importing an export document or another memory's files, and wiping it. */

import { call } from './client';
import type { ImportFromReport, ImportReport, SourceKind } from './types';

export interface ImportOptions {
  readonly mode: 'merge' | 'replace';
  readonly overwrite: boolean;
  readonly dryRun: boolean;
  /** Import entries of groups the model cannot write too (they are left out otherwise). */
  readonly allGroups: boolean;
}

/** One file of another memory's source: its path inside the folder picked (`/`-separated), and its text. */
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

export const transferApi = {
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
};
