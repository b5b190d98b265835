/**
 * The change feed itself (storage/change-feed.ts), over versions a test sets: a commit of
 * this store is told at once, a poll tells only a version that moved, and reads only
 * watched users, only when something may have changed, only while someone watches; a
 * throwing watcher or a failed read stops nobody; and a watch is ready only once its
 * starting version is read. Across real stores and processes: change-feed.test.ts.
 */

import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { MemoryChange } from '../../src/memory/activity.js';
import { ChangeFeed } from '../../src/storage/change-feed.js';

const TOLD_WITHIN_MS = 10_000;

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
