/**
 * copyStore, the core of `engram migrate`, on in-process stores: it copies everything,
 * says what it copied, reports progress, and refuses a target that already holds
 * something unless forced — then changing nothing.
 */

import { describe, expect, it } from 'vitest';
import type { BatchedDump, BatchedLoadOptions, Caller, Decide, Store } from '../../src/memory/port.js';
import { loadInBatchesOf } from '../../src/memory/port.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';
import { type CopyProgress, copyStore } from '../../src/transfer/migration.js';
import { rules } from '../helpers/rules.js';
import { expectEngramError } from '../memory/fixtures.js';

const alice: Caller = { user: 'alice', label: 'claude-desktop' };
const bob: Caller = { user: 'bob', label: 'cli' };

function put(body: string): Decide {
  return (current) => ({ kind: 'put', operation: current ? 'replace' : 'create', description: 'about it', body });
}

const drop: Decide = () => ({ kind: 'drop' });

/** Alice: two entries (one edited), one in the trash; bob: one entry; one token. */
async function filled(): Promise<Store> {
  const store = openMemoryStore();
  await store.mutate(alice, 'topics/a', put('one\n'), rules);
  await store.mutate(alice, 'topics/a', put('two\n'), rules);
  await store.mutate(alice, 'topics/b', put('b\n'), rules);
  await store.mutate(alice, 'areas/gone', put('gone\n'), rules);
  await store.mutate(alice, 'areas/gone', drop, rules);
  await store.mutate(bob, 'people/ada', put('Ada\n'), rules);
  await store.tokens.add({
    id: 't1',
    user: 'alice',
    label: 'laptop',
    readOnly: true,
    hash: 'a'.repeat(64),
    created: 1,
    lastUsed: 2,
    review: false,
  });
  return store;
}

describe('copyStore', () => {
  it('copies everything into an empty store and says what it copied', async () => {
    const from = await filled();
    const to = openMemoryStore();

    const summary = await copyStore(from, to, { force: false, target: 'SQLite /tmp/copy.db' });

    expect(summary).toEqual({
      users: 2,
      entries: 3,
      trash: 1,
      revisions: 6,
      tokens: 1,
      accounts: 0,
      apps: 0,
      replaced: false,
    });
    expect(await to.dump()).toEqual(await from.dump());
  });

  it('reports progress from nothing written to every entry written', async () => {
    const from = await filled();
    const seen: CopyProgress[] = [];

    await copyStore(from, openMemoryStore(), { force: false, target: 'x', onProgress: (p) => seen.push(p) });

    expect(seen[0]).toEqual({ entriesWritten: 0, entriesTotal: 4 });
    expect(seen.at(-1)).toEqual({ entriesWritten: 4, entriesTotal: 4 });
  });

  it('refuses a target that holds anything, naming it and how to go on, and changes neither store', async () => {
    const from = await filled();
    const to = openMemoryStore();
    await to.mutate(bob, 'topics/mine', put('mine\n'), rules);
    const [source, target] = [await from.dump(), await to.dump()];

    const attempt = copyStore(from, to, { force: false, target: 'PostgreSQL postgres://db:5432/engram' });

    await expect(attempt).rejects.toMatchObject({ name: 'EngramError', code: 'CONFLICT' });
    await expect(attempt).rejects.toThrow(
      'PostgreSQL postgres://db:5432/engram is not empty: it already holds entries, trash, tokens, accounts or connected apps, so nothing was copied. ' +
        'Pass --force to replace everything in it with the copy, or copy into an empty database.',
    );
    expect(await to.dump()).toEqual(target);
    expect(await from.dump()).toEqual(source);
  });

  it('with force, replaces everything the target held and says so', async () => {
    const from = await filled();
    const to = openMemoryStore();
    await to.mutate(bob, 'topics/mine', put('mine\n'), rules);

    const summary = await copyStore(from, to, { force: true, target: 'x' });

    expect(summary.replaced).toBe(true);
    expect(await to.dump()).toEqual(await from.dump());
  });

  it('with force into an empty target, replaces nothing', async () => {
    const from = await filled();

    expect((await copyStore(from, openMemoryStore(), { force: true, target: 'x' })).replaced).toBe(false);
  });
});

describe('copyStore and the caps', () => {
  it('refuses a user past the entry or byte cap of the target, copying nothing', async () => {
    const from = await filled();
    const to = openMemoryStore();
    const copy = (policy: { maxEntries: number; userCap: number }) =>
      copyStore(from, to, { force: false, target: 'the target', policy });
    await expectEngramError(
      () => copy({ maxEntries: 1, userCap: 1_000_000 }),
      'TOO_LARGE',
      '1 user(s) hold more than the caps of the target allow (1 entries, 1,000,000 bytes): ' +
        'alice (2 entries, 38 bytes); nothing was copied. ' +
        'Raise maxEntries or userCap in the config file, or make those memories smaller first.',
    );
    expect(await to.isEmpty()).toBe(true);
    await expectEngramError(
      () => copy({ maxEntries: 5, userCap: 30 }),
      'TOO_LARGE',
      /: alice \(2 entries, 38 bytes\); /,
    );
    expect((await copy({ maxEntries: 2, userCap: 38 })).entries).toBe(3);
  });
});

describe('copyStore read again by its target', () => {
  it('counts what the source holds once, though the target read it twice', async () => {
    const from = await filled();
    const into = openMemoryStore();
    // A target that reads the dump once and starts over, as one tried again after a failure of its own.
    const to = Object.assign(Object.create(into) as Store, {
      loadInBatches: async (dumped: BatchedDump, options: BatchedLoadOptions) => {
        await dumped({ total: () => {}, batch: async () => {} });
        await loadInBatchesOf(into, dumped, options);
      },
    });

    const summary = await copyStore(from, to, {
      force: false,
      target: 'the target',
      policy: { maxEntries: 2, userCap: 1_000_000 },
    });

    expect(summary).toMatchObject({ users: 2, entries: 3, trash: 1, revisions: 6 });
  });
});
