/**
 * copyStore streams between SQLite files: the source hands its entries over in batches
 * from one snapshot, and the target writes each batch as it comes inside its one
 * transaction. So what is refused late (a user past the caps found once the last batch
 * is read, a source that fails midway) leaves the target as it was, though batches were
 * written; writes to a live source during the copy are not in it; and the target's own
 * search catch-up, due from its last write, runs before its load, none inside it.
 */

import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { Caller, DumpTables, EntryBatches, Store } from '../../src/memory/port.js';
import { SqliteStore } from '../../src/storage/sqlite/store.js';
import { copyStore } from '../../src/transfer/migration.js';
import { rules } from '../helpers/rules.js';
import { tempDir } from '../helpers/temp-dir.js';

const alice: Caller = { user: 'alice', label: 'cli' };
const bob: Caller = { user: 'bob', label: 'cli' };

function sqlite(path: string): SqliteStore {
  const store = new SqliteStore({ path });
  onTestFinished(() => store.close());
  return store;
}

/** Writes `count` entries of the caller's at once, named from `first`. */
async function entries(store: Store, caller: Caller, count: number, first = 0): Promise<void> {
  await store.mutateAll(
    caller,
    () =>
      Array.from({ length: count }, (_, i) => ({
        name: `topics/n${first + i}`,
        change: { kind: 'put' as const, operation: 'create' as const, description: 'numbered', body: `${first + i}\n` },
      })),
    rules,
  );
}

/** A SQLite target holding an entry and a token. */
async function filledTarget(path: string): Promise<SqliteStore> {
  const target = sqlite(path);
  await entries(target, bob, 1);
  await target.tokens.add({
    id: 't1',
    user: 'bob',
    label: 'laptop',
    readOnly: false,
    hash: 'b'.repeat(64),
    created: 1,
    lastUsed: 2,
    review: false,
  });
  return target;
}

/** `store`, its dump in batches going through `batches` first (`source` wraps the receiver). */
function wrapped(store: SqliteStore, source: (batches: EntryBatches) => EntryBatches): Store {
  const dumpInBatches = (batches: EntryBatches): Promise<DumpTables> => store.dumpInBatches(source(batches));
  return Object.assign(Object.create(store) as Store, { dumpInBatches });
}

describe('copyStore in batches between SQLite files', () => {
  it('refuses a user past the caps found in the last batches, leaving the target as it was though batches were written', async () => {
    const dir = tempDir();
    const source = sqlite(dir.file('source.db'));
    // 2,500 of alice's within the cap, then 2,501 of bob's past it: bob's come in the last batches.
    await entries(source, alice, 2_500);
    await entries(source, bob, 2_501);
    const target = await filledTarget(dir.file('target.db'));
    const before = await target.dump();
    const written: number[] = [];

    const attempt = copyStore(source, target, {
      force: true,
      target: 'the target',
      policy: { maxEntries: 2_500, userCap: 10_000_000 },
      onProgress: ({ entriesWritten }) => written.push(entriesWritten),
    });

    await expect(attempt).rejects.toMatchObject({
      code: 'TOO_LARGE',
      message: expect.stringContaining(
        '1 user(s) hold more than the caps of the target allow (2,500 entries, 10,000,000 bytes): bob (2,501 entries, ',
      ),
    });
    await expect(attempt).rejects.toThrow('; nothing was copied. ');
    expect(written.at(-1)).toBe(5_001);
    expect(await target.dump()).toEqual(before);
    expect(await target.index('bob')).toHaveLength(1);
  });

  it('leaves the target as it was when the source fails after some batches were written', async () => {
    const dir = tempDir();
    const store = sqlite(dir.file('source.db'));
    await entries(store, alice, 2_500);
    const failure = new Error('the source went away mid-copy');
    let handed = 0;
    const source = wrapped(store, (batches) => ({
      total: (count) => batches.total(count),
      batch: async (batch) => {
        if (++handed === 3) throw failure;
        await batches.batch(batch);
      },
    }));
    const target = await filledTarget(dir.file('target.db'));
    const before = await target.dump();
    const written: number[] = [];

    const attempt = copyStore(source, target, {
      force: true,
      target: 'the target',
      onProgress: ({ entriesWritten }) => written.push(entriesWritten),
    });

    await expect(attempt).rejects.toBe(failure);
    expect(written.at(-1)).toBeGreaterThan(0);
    expect(await target.dump()).toEqual(before);
  });

  it("runs the target's own search catch-up before its load, none inside it: the copy is the source's, searchable", async () => {
    const dir = tempDir();
    const source = sqlite(dir.file('source.db'));
    await entries(source, alice, 30);
    const target = sqlite(dir.file('target.db'));
    // The target's write makes its search index's catch-up due on a timer: held here, fired at will.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
    await entries(target, bob, 1);
    const dueWhileRead: number[] = [];
    const whileRead = wrapped(source, (batches) => ({
      total: (count) => batches.total(count),
      batch: async (batch) => {
        await batches.batch(batch);
        // Whatever time passes while the source is read: a catch-up due would run now, inside the load.
        dueWhileRead.push(vi.getTimerCount());
        vi.runOnlyPendingTimers();
      },
    }));

    await copyStore(whileRead, target, { force: true, target: 'the target' });
    vi.useRealTimers();

    expect(dueWhileRead).toEqual([0]);
    expect(await target.dump()).toEqual(await source.dump());
    expect((await target.search('alice', ['numbered'], { limit: 100 })).length).toBe(30);
    expect(await target.search('bob', ['numbered'], { limit: 100 })).toEqual([]);
  });

  it('copies a live source as it was when the copy began: writes made meanwhile through another connection are not in it', async () => {
    const dir = tempDir();
    const path = dir.file('source.db');
    const store = sqlite(path);
    await entries(store, alice, 2_500);
    const atStart = await store.dump();
    // Another process's connection to the same file, writing after the first batch is written.
    const other = sqlite(path);
    let handed = 0;
    const source = wrapped(store, (batches) => ({
      total: (count) => batches.total(count),
      batch: async (batch) => {
        await batches.batch(batch);
        if (++handed > 1) return;
        await entries(other, alice, 10, 10_000);
        await other.mutate(alice, 'topics/n2499', () => ({ kind: 'drop' }), rules);
        await other.mutate(
          bob,
          'topics/new',
          () => ({ kind: 'put', operation: 'create', description: 'd', body: 'b\n' }),
          rules,
        );
      },
    }));
    const target = sqlite(dir.file('target.db'));

    const summary = await copyStore(source, target, { force: false, target: 'the target' });

    expect(handed).toBeGreaterThan(1);
    expect(summary).toMatchObject({ users: 1, entries: 2_500, trash: 0, revisions: 2_500 });
    expect(await target.dump()).toEqual(atStart);
    expect((await store.dump()).entries).toHaveLength(2_511);
  });
});
