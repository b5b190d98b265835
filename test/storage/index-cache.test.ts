/**
 * The SQLite store keeps each user's last index while it is still the truth: it must
 * never serve a stale one, whether this connection or another process wrote. After its
 * own writes it patches the kept rows instead of reading them all again: the patched
 * index must be, row for row and in SQLite's order, what a fresh read gives.
 *
 * Invariant of the indexCache accelerator (docs/accelerators.md, "Storage"; off, every
 * index is read whole): the index served equals SELECT name, size, description FROM
 * entries WHERE user_id = ? AND dropped_at IS NULL ORDER BY name (BINARY: code points,
 * compareNames) after every commit of this connection, every rollback, and every commit of
 * another connection (another process, the search worker).
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EngramError } from '../../src/memory/model/errors.js';
import { EMPTY_INDEX, formatIndex, type IndexRow, indexLine } from '../../src/memory/model/format.js';
import type { Caller, Decide } from '../../src/memory/port.js';
import { openSqliteStore, type SqliteStore } from '../../src/storage/sqlite/index.js';
import { compareNames, IndexCache } from '../../src/storage/sqlite/index-cache.js';
import { rules } from '../helpers/rules.js';

const ada: Caller = { user: 'ada', label: 'cache-test' };
const put =
  (body: string): Decide =>
  () => ({ kind: 'put', operation: 'create', description: 'd', body });
/** The entry, if live, one line longer; nothing written otherwise. */
const grow: Decide = (current) =>
  current
    ? { kind: 'put', operation: 'append', description: current.description, body: `${current.body}more\n` }
    : { kind: 'none' };
const describeAs =
  (description: string): Decide =>
  (current) =>
    current ? { kind: 'put', operation: 'describe', description, body: current.body } : { kind: 'none' };

describe('SQLite index cache', () => {
  let folder: string;
  let path: string;
  const stores: SqliteStore[] = [];
  const open = () => {
    const store = openSqliteStore({ path });
    stores.push(store);
    return store;
  };

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-index-cache-'));
    path = join(folder, 'memory.db');
  });

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('hands out the same frozen rows while nothing changed', async () => {
    const store = open();
    await store.mutate(ada, 'topics/a', put('x\n'), rules);
    const first = await store.index('ada');
    expect(await store.index('ada')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it("sees this connection's own writes, drops, undrops and purges at once", async () => {
    const store = open();
    await store.mutate(ada, 'topics/a', put('x\n'), rules);
    await store.index('ada');
    await store.mutate(ada, 'topics/b', put('yy\n'), rules);
    expect((await store.index('ada')).map((row) => row.name)).toEqual(['topics/a', 'topics/b']);
    await store.mutate(ada, 'topics/b', () => ({ kind: 'drop' }), rules);
    expect((await store.index('ada')).map((row) => row.name)).toEqual(['topics/a']);
    await store.undrop(ada, 'topics/b', rules);
    expect((await store.index('ada')).map((row) => row.name)).toEqual(['topics/a', 'topics/b']);
    await store.purge('ada', 'topics/b', { includeLive: true });
    expect((await store.index('ada')).map((row) => row.name)).toEqual(['topics/a']);
    await store.mutateAll(
      ada,
      () => [{ name: 'topics/c', change: { kind: 'put', operation: 'import', description: 'c', body: '' } }],
      rules,
    );
    expect((await store.index('ada')).map((row) => row.name)).toEqual(['topics/a', 'topics/c']);
  });

  it('sees a write committed by another connection to the same file', async () => {
    const reader = open();
    const writer = open();
    await writer.mutate(ada, 'topics/a', put('x\n'), rules);
    expect(await reader.index('ada')).toEqual([{ name: 'topics/a', size: 2, description: 'd' }]);
    await writer.mutate(ada, 'topics/a', put('longer\n'), rules);
    expect(await reader.index('ada')).toEqual([{ name: 'topics/a', size: 7, description: 'd' }]);
  });

  it("keeps a user's index while another connection writes for someone else or indexes for search", async () => {
    const reader = open();
    const writer = open();
    await reader.mutate(ada, 'topics/a', put('x\n'), rules);
    const kept = await reader.index('ada');
    await writer.mutate({ user: 'bob', label: 'cache-test' }, 'people/x', put('y\n'), rules);
    // The writer's search catches the index up in a commit of its own.
    await writer.search('ada', ['x'], { limit: 5 });
    expect(await reader.index('ada')).toBe(kept);
    await writer.mutate(ada, 'topics/b', put('z\n'), rules);
    expect((await reader.index('ada')).map((row) => row.name)).toEqual(['topics/a', 'topics/b']);
  });

  it('reads the index again after another connection loaded a memory over it', async () => {
    const reader = open();
    const writer = open();
    await writer.mutate(ada, 'topics/a', put('x\n'), rules);
    const dump = await writer.dump();
    await writer.load(dump, { replace: true });
    expect((await reader.index('ada')).map((row) => row.name)).toEqual(['topics/a']);
    await reader.mutate(ada, 'topics/b', put('y\n'), rules);
    expect((await reader.index('ada')).map((row) => row.name)).toEqual(['topics/a', 'topics/b']);
    await writer.load(dump, { replace: true });
    expect((await reader.index('ada')).map((row) => row.name)).toEqual(['topics/a']);
  });

  it("reads the index again after a load without the user's memory and a write of theirs", async () => {
    const reader = open();
    const writer = open();
    await writer.mutate(ada, 'topics/a', put('x\n'), rules);
    expect((await reader.index('ada')).map((row) => row.name)).toEqual(['topics/a']);
    // A memory of bob's alone replaces everything: ada's entries and counter are gone.
    const bob = openSqliteStore({ path: join(folder, 'bob.db') });
    await bob.mutate({ user: 'bob', label: 'cache-test' }, 'people/x', put('y\n'), rules);
    const dump = await bob.dump();
    await bob.close();
    await writer.load(dump, { replace: true });
    // Ada's first write after it must not bring her counter back to a number the reader kept.
    await writer.mutate(ada, 'topics/b', put('z\n'), rules);
    expect((await reader.index('ada')).map((row) => row.name)).toEqual(['topics/b']);
  });

  it('keeps the index through a write refused while deciding, and reads it again after one the database failed', async () => {
    const store = open();
    await store.mutate(ada, 'topics/a', put('x\n'), rules);
    const kept = await store.index('ada');
    const refusal = new EngramError('NOTHING_TO_DO', 'nothing to write');
    await expect(
      store.mutate(
        ada,
        'topics/a',
        () => {
          throw refusal;
        },
        rules,
      ),
    ).rejects.toBe(refusal);
    expect(await store.index('ada')).toBe(kept);
    // A failure that is not a refusal may have rolled back a count the cache followed.
    await expect(
      store.mutate(
        ada,
        'topics/a',
        () => {
          throw new Error('disk I/O error');
        },
        rules,
      ),
    ).rejects.toThrow('disk I/O error');
    const again = await store.index('ada');
    expect(again).not.toBe(kept);
    expect(again).toEqual(kept);
  });

  it('keeps users apart', async () => {
    const store = open();
    await store.mutate(ada, 'topics/a', put('x\n'), rules);
    await store.mutate({ user: 'bob', label: 'cache-test' }, 'people/x', put('y\n'), rules);
    expect((await store.index('ada')).map((row) => row.name)).toEqual(['topics/a']);
    expect((await store.index('bob')).map((row) => row.name)).toEqual(['people/x']);
    expect((await store.index('ada')).map((row) => row.name)).toEqual(['topics/a']);
  });

  it('patches its own writes into the kept index, the same rows and text a fresh read gives, in the same order', async () => {
    const store = open();
    const names = ['topics/a', 'topics/z', 'topics/ä', 'topics/\u{1F600}', 'topics/\uFF21', 'people/b', 'Topics'];
    const steps = fc.constantFrom('create', 'append', 'describe', 'drop', 'undrop', 'purge', 'read');
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...names), steps), { maxLength: 30 }), async (plan) => {
        for (const [name, step] of plan) {
          if (step === 'read') formatIndex(await store.index('ada'));
          else if (step === 'create') await store.mutate(ada, name, put(`${name} ${Math.random()}\n`), rules);
          else if (step === 'append') await store.mutate(ada, name, grow, rules);
          else if (step === 'describe') await store.mutate(ada, name, describeAs(`d ${Math.random()}`), rules);
          else if (step === 'drop') await store.mutate(ada, name, () => ({ kind: 'drop' }), rules);
          else if (step === 'undrop') await store.undrop(ada, name, rules);
          else await store.purge('ada', name, { includeLive: Math.random() < 0.5 });
        }
        const fresh = openSqliteStore({ path });
        try {
          const [kept, read] = [await store.index('ada'), await fresh.index('ada')];
          expect(kept).toEqual(read);
          expect(formatIndex(kept)).toBe(read.length === 0 ? EMPTY_INDEX : read.map(indexLine).join('\n'));
        } finally {
          await fresh.close();
        }
      }),
      { numRuns: 40 },
    );
  });
});

describe('IndexCache', () => {
  const row = (name: string, size = 1): IndexRow => ({ name, size, description: 'd' });

  it('orders names as SQLite does: by UTF-8 bytes, not UTF-16 code units', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        expect(Math.sign(compareNames(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
    );
    expect(compareNames('\u{1F600}', '\uFF21')).toBeGreaterThan(0);
  });

  it('patches what was committed, so a write rolled back leaves the kept rows as they were', () => {
    const cache = new IndexCache({ dataVersion: () => 1, changesOf: () => 0 });
    const committed = new Map([['a', row('a')]]);
    const load = () => [...committed.values()];
    const lookup = (name: string) => committed.get(name);
    const first = cache.get('ada', load, lookup);
    cache.touched('ada', 'b');
    // The write of b was rolled back: the lookup finds nothing, the rows stay.
    expect(cache.get('ada', () => [], lookup)).toEqual(first);
    cache.touched('ada', 'b');
    committed.set('b', row('b', 2));
    cache.touched('ada', 'a');
    committed.delete('a');
    expect(cache.get('ada', () => [], lookup)).toEqual([row('b', 2)]);
  });

  it("reads the whole index again when another connection committed a change of the user's", () => {
    let version = 1;
    let changes = 5;
    const cache = new IndexCache({ dataVersion: () => version, changesOf: () => changes });
    cache.get(
      'ada',
      () => [row('a')],
      () => undefined,
    );
    version = 2;
    changes = 6;
    expect(
      cache.get(
        'ada',
        () => [row('x')],
        () => undefined,
      ),
    ).toEqual([row('x')]);
  });

  it("keeps the index when another connection's commit left the user's counter where it was", () => {
    let version = 1;
    const cache = new IndexCache({ dataVersion: () => version, changesOf: () => 5 });
    const first = cache.get(
      'ada',
      () => [row('a')],
      () => undefined,
    );
    version = 2;
    expect(
      cache.get(
        'ada',
        () => [row('x')],
        () => undefined,
      ),
    ).toBe(first);
  });

  it('follows its own writes through the counter, and reads again after a counter it did not follow', () => {
    let version = 1;
    let changes = 5;
    const committed = new Map([['a', row('a')]]);
    const reads = { dataVersion: () => version, changesOf: () => changes };
    const cache = new IndexCache(reads);
    const load = () => [...committed.values()];
    const lookup = (name: string) => committed.get(name);
    cache.get('ada', load, lookup);
    // Its own write moved the counter to 6; then another connection committed (the search index).
    cache.touched('ada', 'b');
    committed.set('b', row('b'));
    changes = 6;
    cache.counted('ada', 6);
    version = 2;
    const patched = cache.get('ada', () => [row('not read again')], lookup);
    expect(patched).toEqual([row('a'), row('b')]);
    // Another connection's change of ada moves the counter past what this one followed.
    cache.counted('ada', 8);
    changes = 8;
    version = 3;
    expect(cache.get('ada', () => [row('read again')], lookup)).toEqual([row('read again')]);
  });

  it('reads the index again after a write of the user failed, whose counter may have been rolled back', () => {
    let version = 1;
    let changes = 5;
    const cache = new IndexCache({ dataVersion: () => version, changesOf: () => changes });
    const kept = cache.get(
      'ada',
      () => [row('a')],
      () => undefined,
    );
    cache.counted('ada', 6);
    cache.forget('ada');
    // The failed write's 6 was rolled back, and another connection's change took the number.
    changes = 6;
    version = 2;
    const again = cache.get(
      'ada',
      () => [row('theirs')],
      () => undefined,
    );
    expect(again).not.toBe(kept);
    expect(again).toEqual([row('theirs')]);
  });
});
