/**
 * An in-process store: everything in maps, nothing on disk. For tests, for agents that
 * want a scratch memory, and as the simplest reading of the Store contract.
 */

import type { IndexRow } from '../../core/format.js';
import type { Actor, Decide, MutationResult, RevisionOperation, Store, StoredEntry } from '../../core/store.js';
import { utf8Bytes } from '../../core/text.js';

interface Revision {
  readonly revision: number;
  readonly operation: RevisionOperation;
  readonly actor: string;
  readonly at: number;
  readonly description: string;
  readonly body: string;
}

interface Row extends StoredEntry {
  readonly revisions: Revision[];
}

export interface MemoryStoreOptions {
  /** Clock in milliseconds; tests inject one. */
  readonly now?: () => number;
}

export class MemoryStore implements Store {
  private readonly users = new Map<string, Map<string, Row>>();
  private readonly now: () => number;
  private closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  private entries(user: string): Map<string, Row> {
    this.assertOpen();
    let entries = this.users.get(user);
    if (!entries) {
      entries = new Map();
      this.users.set(user, entries);
    }
    return entries;
  }

  async index(user: string): Promise<IndexRow[]> {
    return [...this.entries(user).values()]
      .map(({ name, size, description }) => ({ name, size, description }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async get(user: string, names: readonly string[]): Promise<StoredEntry[]> {
    const entries = this.entries(user);
    return names.flatMap((name) => {
      const row = entries.get(name);
      return row ? [publicEntry(row)] : [];
    });
  }

  async mutate(actor: Actor, name: string, decide: Decide): Promise<MutationResult> {
    const entries = this.entries(actor.user);
    const row = entries.get(name);
    let totalBytes = 0;
    for (const entry of entries.values()) totalBytes += entry.size;
    const before = row ? publicEntry(row) : undefined;
    const change = decide(before, { totalBytes });
    if (change.kind === 'none') return { before, after: before };
    const at = this.now();
    if (change.kind === 'drop') {
      if (row) entries.delete(name);
      return { before, after: undefined };
    }
    const revision = (row?.revision ?? 0) + 1;
    const next: Row = {
      name,
      description: change.description,
      body: change.body,
      size: utf8Bytes(change.body),
      created: row?.created ?? at,
      updated: at,
      revision,
      revisions: [
        ...(row?.revisions ?? []),
        {
          revision,
          operation: change.operation,
          actor: actor.label,
          at,
          description: change.description,
          body: change.body,
        },
      ],
    };
    entries.set(name, next);
    return { before, after: publicEntry(next) };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the memory store is closed');
  }
}

function publicEntry(row: Row): StoredEntry {
  const { name, description, body, size, created, updated, revision } = row;
  return { name, description, body, size, created, updated, revision };
}
