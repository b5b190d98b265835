/**
 * Word of changes across processes (storage/change-feed.ts): a change committed through
 * another store on the same database — another process — reaches a watcher of this one,
 * on SQLite (a second connection to the file) and on PostgreSQL (a second pool); another
 * user's never does. Then the feed itself: what it polls, and when it stops.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { MemoryChange } from '../../src/memory/activity.js';
import type { Caller, Store } from '../../src/memory/port.js';
import { ChangeFeed } from '../../src/storage/change-feed.js';
import { appendLine } from '../../src/storage/contract/setup.js';
import { openPostgresStore } from '../../src/storage/postgres/index.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { createTestDatabase, findTestPostgres, type TestDatabase } from '../helpers/postgres.js';
import { rules } from '../helpers/rules.js';

const alice: Caller = { user: 'alice', label: 'other process' };
const bob: Caller = { user: 'bob', label: 'other process' };
const TOLD_WITHIN_MS = 10_000;

const server = await findTestPostgres();

/** Two stores on one database: `watched`, and `other`, which stands for another process. */
type Pair = { readonly watched: Store; readonly other: Store };

function describeAcrossStores(label: string, openPair: () => Promise<Pair>) {
  describe(`changes committed through another store: ${label}`, () => {
    let pair: Pair;
    const stopped: Array<() => void> = [];

    afterEach(async () => {
      for (const stop of stopped.splice(0)) stop();
      await pair.watched.close();
      await pair.other.close();
    });

    /**
     * Watches alice on the watched store, after a change of this store is told (so the
     * watch has its baseline): what is told from then on, and the version of that change.
     */
    async function watchAlice(): Promise<{ told: MemoryChange[]; ownVersion: number }> {
      pair = await openPair();
      const all: MemoryChange[] = [];
      stopped.push(await pair.watched.watch('alice', (change) => all.push(change)));
      await pair.watched.mutate({ user: 'alice', label: 'this process' }, 'notes/here', appendLine('here'), rules);
      await vi.waitFor(() => expect(all.some((change) => change.name === 'notes/here')).toBe(true), TOLD_WITHIN_MS);
      const own = all.find((change) => change.name === 'notes/here') as MemoryChange;
      expect(own).toMatchObject({ revision: 1, operation: 'create' });
      // A poll may have read the same change first (told without details); that is all it may have told.
      const told = all.splice(0);
      expect(new Set(told.map((change) => change.version))).toEqual(new Set([own.version]));
      return { told: all, ownVersion: own.version };
    }

    it('are told to a watcher of their user, with a greater version', async () => {
      const { told, ownVersion } = await watchAlice();
      await pair.other.mutate(alice, 'notes/there', appendLine('there'), rules);
      await vi.waitFor(() => expect(told).toHaveLength(1), TOLD_WITHIN_MS);
      expect((told[0] as MemoryChange).version).toBeGreaterThan(ownVersion);
    });

    it("of another user are never told: alice's watcher hears only alice's change after bob's", async () => {
      const { told, ownVersion } = await watchAlice();
      await pair.other.mutate(bob, 'notes/bob', appendLine('bob'), rules);
      await pair.other.mutate(bob, 'notes/bob', appendLine('bob again'), rules);
      await pair.other.mutate(alice, 'notes/there', appendLine('there'), rules);
      await vi.waitFor(() => expect(told.length).toBeGreaterThanOrEqual(1), TOLD_WITHIN_MS);
      // Bob's changes moved only bob's counter: alice's moved once since her own change.
      expect(told).toEqual([{ version: ownVersion + 1 }]);
    });
  });
}

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'engram-change-feed-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

let files = 0;
describeAcrossStores('SQLite, two connections to one file', async () => {
  const path = join(folder, `memory-${files++}.db`);
  return { watched: openSqliteStore({ path }), other: openSqliteStore({ path }) };
});

describe.skipIf(!server)('PostgreSQL', () => {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });
  describeAcrossStores('PostgreSQL, two pools on one database', async () => {
    const database = await createTestDatabase(server as string);
    databases.push(database);
    const watched = await openPostgresStore({ connectionString: database.url });
    const other = await openPostgresStore({ connectionString: database.url });
    return { watched, other };
  });
});

describe('ChangeFeed', () => {
  /** A feed over versions the test sets, polled by hand (fake timers). */
  function feedOver(options: { mayHaveChanged?: () => boolean } = {}) {
    const versions = new Map<string, number>();
    const reads: string[][] = [];
    const feed = new ChangeFeed({
      readVersions: (users) => {
        reads.push([...users]);
        return new Map(users.map((user) => [user, versions.get(user) ?? 0]));
      },
      pollMs: 100,
      ...options,
    });
    return { feed, versions, reads };
  }

  afterEach(() => {
    vi.useRealTimers();
  });

  it('tells a commit of this store at once, with its details, and a poll only a version that moved', async () => {
    vi.useFakeTimers();
    const { feed, versions } = feedOver();
    const told: MemoryChange[] = [];
    feed.watch('alice', (change) => told.push(change));
    versions.set('alice', 1);
    feed.committed('alice', { name: 'notes/a', revision: 1, operation: 'create' });
    expect(told).toEqual([{ version: 1, name: 'notes/a', revision: 1, operation: 'create' }]);
    await vi.advanceTimersByTimeAsync(500);
    expect(told).toHaveLength(1);
    versions.set('alice', 2);
    await vi.advanceTimersByTimeAsync(100);
    expect(told).toEqual([{ version: 1, name: 'notes/a', revision: 1, operation: 'create' }, { version: 2 }]);
    feed.close();
  });

  it('reads versions only when mayHaveChanged says so, and only of watched users', async () => {
    vi.useFakeTimers();
    let changed = false;
    const { feed, versions, reads } = feedOver({ mayHaveChanged: () => changed });
    const stop = await feed.watch('alice', () => {});
    feed.watch('bob', () => {});
    expect(reads).toEqual([['alice'], ['bob']]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(reads).toHaveLength(2);
    changed = true;
    versions.set('carol', 5);
    await vi.advanceTimersByTimeAsync(100);
    expect(reads.at(-1)).toEqual(['alice', 'bob']);
    stop();
    await vi.advanceTimersByTimeAsync(100);
    expect(reads.at(-1)).toEqual(['bob']);
    feed.close();
  });

  it('polls only while someone watches', async () => {
    vi.useFakeTimers();
    const { feed, reads } = feedOver();
    const stop = await feed.watch('alice', () => {});
    await vi.advanceTimersByTimeAsync(300);
    const polled = reads.length;
    expect(polled).toBeGreaterThan(1);
    stop();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(reads).toHaveLength(polled);
    expect(vi.getTimerCount()).toBe(0);
    feed.close();
  });

  it('tells the other watchers when one throws, and reads again after a failed read', async () => {
    vi.useFakeTimers();
    let failing = false;
    const versions = new Map<string, number>();
    const feed = new ChangeFeed({
      readVersions: (users) => {
        if (failing) throw new Error('database is locked');
        return new Map(users.map((user) => [user, versions.get(user) ?? 0]));
      },
      pollMs: 100,
      mayHaveChanged: () => failing,
    });
    const told: MemoryChange[] = [];
    feed.watch('alice', () => {
      throw new Error('a broken watcher');
    });
    feed.watch('alice', (change) => told.push(change));
    failing = true;
    versions.set('alice', 3);
    await vi.advanceTimersByTimeAsync(100);
    expect(told).toEqual([]);
    // mayHaveChanged now says no, but the last read failed: the next poll reads anyway.
    failing = false;
    await vi.advanceTimersByTimeAsync(100);
    expect(told).toEqual([{ version: 3 }]);
    feed.close();
  });

  it('is ready only once its starting version is read: a change committed while that read is held is not lost', async () => {
    let version = 0;
    let release: () => void = () => {};
    let held = true;
    const feed = new ChangeFeed({
      readVersions: (users) => {
        const read = () => new Map(users.map((user) => [user, version]));
        if (!held) return read();
        held = false;
        // The first read (the starting point) is slow, as a busy database's may be.
        return new Promise((resolve) => {
          release = () => resolve(read());
        });
      },
      pollMs: 10,
    });
    onTestFinished(() => feed.close());
    const told: MemoryChange[] = [];
    let readyAt: number | undefined;
    const watching = Promise.resolve(feed.watch('alice', (change) => told.push(change))).then((stop) => {
      readyAt = version;
      return stop;
    });
    await new Promise((resolve) => setImmediate(resolve));
    // Another process commits a change while the starting point is still being read.
    version = 1;
    release();
    const stop = await watching;
    // Every change committed after the watch was ready is told.
    await vi.waitFor(() => expect(told.at(-1)?.version ?? readyAt).toBe(version), TOLD_WITHIN_MS);
    version = 2;
    await vi.waitFor(() => expect(told.at(-1)?.version).toBe(2), TOLD_WITHIN_MS);
    stop();
  });
});
