/**
 * The SQLite store keeps each user's last index while it is still the truth: it must
 * never serve a stale one, whether this connection or another process wrote.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Caller, Decide } from '../../src/core/store.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/index.js';
import { rules } from '../helpers/rules.js';

const ada: Caller = { user: 'ada', label: 'cache-test' };
const put =
  (body: string): Decide =>
  () => ({ kind: 'put', operation: 'create', description: 'd', body });

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

  it('keeps users apart', async () => {
    const store = open();
    await store.mutate(ada, 'topics/a', put('x\n'), rules);
    await store.mutate({ user: 'bob', label: 'cache-test' }, 'people/x', put('y\n'), rules);
    expect((await store.index('ada')).map((row) => row.name)).toEqual(['topics/a']);
    expect((await store.index('bob')).map((row) => row.name)).toEqual(['people/x']);
    expect((await store.index('ada')).map((row) => row.name)).toEqual(['topics/a']);
  });
});
