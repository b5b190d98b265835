/**
 * A dump in batches and a load gathering its batches hold any number of rows: a batch of
 * hundreds of thousands (a lone entry's long history, a store without loadInBatches taking
 * a big memory) is gathered one row at a time, where a spread into push overflowed the stack.
 */

import { describe, expect, it } from 'vitest';
import type { DumpedEntry, DumpStore, DumpTables, StoreDump } from '../../src/memory/port.js';
import { loadInBatchesOf } from '../../src/memory/port.js';
import { runAsync } from '../../src/storage/engine/drive.js';
import { type DumpDatabase, dumpInBatches } from '../../src/storage/sql/dump.js';
import { sqliteDialect } from '../../src/storage/sqlite/sql-database.js';

const MANY = 500_000;

const NO_TABLES: DumpTables = {
  users: [],
  tokens: [],
  accounts: [],
  clients: [],
  grants: [],
  grantSecrets: [],
  proposals: [],
};

describe('dumps and loads in batches of many rows', () => {
  it('a store without loadInBatches gathers a batch of 500,000 entries', async () => {
    const entry = { user: 'alice', name: 'n' } as unknown as DumpedEntry;
    let loaded = 0;
    const store = {
      isEmpty: async () => true,
      load: async (dump: StoreDump) => {
        loaded = dump.entries.length;
      },
    } as unknown as DumpStore;

    await loadInBatchesOf(
      store,
      async (batches) => {
        batches.total(MANY);
        await batches.batch(Array.from({ length: MANY }, () => entry));
        return NO_TABLES;
      },
      { replace: false },
    );

    expect(loaded).toBe(MANY);
  });

  it('a page of one entry with 500,000 revisions is read', async () => {
    const revision = {
      entry_id: 1,
      revision: 1,
      operation: 'update',
      actor: 'cli',
      at: 1,
      description: 'd',
      body: 'b',
      note: null,
    };
    const rows = (text: string): unknown[] => {
      if (text.includes('count(*) AS entries')) return [{ entries: 1 }];
      if (text.includes('AS revisions')) return [{ user_id: 'alice', id: 1, revisions: MANY }];
      if (text.startsWith('SELECT entry_id')) return Array.from({ length: MANY }, () => revision);
      if (text.includes('FROM entries')) {
        return [
          {
            id: 1,
            user_id: 'alice',
            name: 'n',
            description: 'd',
            body: 'b',
            size: 1,
            created: 1,
            updated: 1,
            revision: 1,
            dropped_at: null,
            dropped_by: null,
            opened: null,
          },
        ];
      }
      return [];
    };
    const db = { dialect: sqliteDialect, entryOrder: 'id', batch: 1_000, rows } as unknown as DumpDatabase;
    let revisions = 0;

    await runAsync(
      dumpInBatches(
        db,
        {
          total: () => {},
          batch: async (entries) => {
            revisions = entries[0]!.revisions.length;
          },
        },
        2_000,
      ),
    );

    expect(revisions).toBe(MANY);
  });
});
