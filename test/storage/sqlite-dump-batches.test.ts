/**
 * A SQLite store's dump in batches (the source of engram migrate and restore-backup): what
 * the receiver of its batches throws ends the dump as it came, not worded as this file's
 * failure (a target's full disk is not the source's), and the read transaction ends with it.
 */

import { describe, expect, it, onTestFinished } from 'vitest';
import { SqliteStore } from '../../src/storage/sqlite/store.js';
import { rules } from '../helpers/rules.js';
import { tempDir } from '../helpers/temp-dir.js';

describe('SqliteStore.dumpInBatches', () => {
  it('passes on what the receiver throws as it came, and ends its read transaction', async () => {
    const path = tempDir().file('memory.db');
    const store = new SqliteStore({ path });
    onTestFinished(() => store.close());
    await store.mutate(
      { user: 'alice', label: 'cli' },
      'topics/a',
      () => ({ kind: 'put', operation: 'create', description: 'd', body: 'a\n' }),
      rules,
    );
    const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });

    await expect(
      store.dumpInBatches({
        total: () => {},
        batch: async () => {
          throw full;
        },
      }),
    ).rejects.toBe(full);

    // The transaction is over: the store writes and dumps on.
    await store.mutate(
      { user: 'alice', label: 'cli' },
      'topics/b',
      () => ({ kind: 'put', operation: 'create', description: 'd', body: 'b\n' }),
      rules,
    );
    expect((await store.dump()).entries).toHaveLength(2);
  });
});
