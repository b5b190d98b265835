/**
 * A load limit's count kept by each server and shared in batches (batched-counter.ts),
 * over a shared tally in memory that two counters (two servers) use, on fake timers: a
 * request waits for the shared count only when its server has not heard it for the batch
 * interval; the others are decided here and sent together; one server counts exactly, and
 * so do two whose requests come further apart than the interval; a burst on both at once
 * goes past the limit by at most what each admits before it next hears the total; a
 * failing tally lets requests through; the keys remembered are bounded.
 */

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BatchedCounter, type SharedTally } from '../../../src/access/rate-limits/batched-counter.js';

const SYNC_MS = 100;
const WINDOW_MS = 60_000;

/** The shared count of every key, as PostgreSQL's table keeps it, with every add it was asked. */
function sharedTally() {
  const counts = new Map<string, { used: number; ends: number }>();
  const adds: [string, number][] = [];
  let failing = false;
  const tally: SharedTally = {
    add: async (key, points) => {
      await Promise.resolve();
      adds.push([key, points]);
      if (failing) throw new Error('the database is gone');
      const now = Date.now();
      const known = counts.get(key);
      const count = known && known.ends > now ? known : { used: 0, ends: now + WINDOW_MS };
      count.used += points;
      counts.set(key, count);
      return { used: count.used, resetMs: count.ends - now };
    },
  };
  return {
    tally,
    adds,
    used: (key: string) => counts.get(key)?.used ?? 0,
    fail: (value: boolean) => {
      failing = value;
    },
  };
}

const counter = (tally: SharedTally, points: number, maxKeys = 1_000) =>
  new BatchedCounter(tally, { points, windowSeconds: WINDOW_MS / 1000 }, { syncMs: SYNC_MS, maxKeys });

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2026, 0, 1));
});
afterEach(() => {
  vi.useRealTimers();
});

describe('a batched counter', () => {
  it('waits for the shared count on a key’s first request, then decides here and sends the rest in one add', async () => {
    const shared = sharedTally();
    const one = counter(shared.tally, 100);
    expect(await one.take('k')).toEqual({ allowed: true, remaining: 99, resetMs: WINDOW_MS });
    expect(shared.adds).toEqual([['k', 1]]);
    for (let i = 0; i < 5; i++) expect((await one.take('k')).allowed).toBe(true);
    expect(shared.adds).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(SYNC_MS);
    expect(shared.adds).toEqual([
      ['k', 1],
      ['k', 5],
    ]);
    expect(shared.used('k')).toBe(6);
  });

  it('counts exactly on one server: the limit’s requests, then refusals until the window ends', async () => {
    const shared = sharedTally();
    const one = counter(shared.tally, 3);
    const allowed = [];
    for (let i = 0; i < 5; i++) allowed.push((await one.take('k')).allowed);
    expect(allowed).toEqual([true, true, true, false, false]);
    expect(await one.take('k')).toEqual({ allowed: false, remaining: 0, resetMs: WINDOW_MS });
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    expect(await one.take('k')).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('counts exactly on two servers whose requests come further apart than the batch interval', async () => {
    const shared = sharedTally();
    const [one, two] = [counter(shared.tally, 3), counter(shared.tally, 3)];
    const allowed = [];
    for (let i = 0; i < 6; i++) {
      allowed.push((await (i % 2 === 0 ? one : two).take('k')).allowed);
      await vi.advanceTimersByTimeAsync(SYNC_MS);
    }
    expect(allowed).toEqual([true, true, true, false, false, false]);
  });

  it('lets a burst on two servers at once past the limit by no more than each admits before it next hears the total', async () => {
    const shared = sharedTally();
    const [one, two] = [counter(shared.tally, 10), counter(shared.tally, 10)];
    await one.take('k');
    await two.take('k');
    let admitted = 2;
    for (let i = 0; i < 20; i++) if ((await (i % 2 === 0 ? one : two).take('k')).allowed) admitted++;
    // One heard 1 request counted, two heard 2: each admits up to 10 by what it heard, 9 and 8 more.
    expect(admitted).toBe(19);
    await vi.advanceTimersByTimeAsync(SYNC_MS);
    expect(shared.used('k')).toBe(admitted);
    expect((await one.take('k')).allowed).toBe(false);
    expect((await two.take('k')).allowed).toBe(false);
  });

  it('counts the requests being sent while their add is under way: one server stays exact', async () => {
    const shared = sharedTally();
    let held: (() => void) | undefined;
    let holding = false;
    const slow: SharedTally = {
      add: async (key, points) => {
        if (holding) await new Promise<void>((resolve) => (held = resolve));
        return shared.tally.add(key, points);
      },
    };
    const one = counter(slow, 4);
    await one.take('k'); // t=0: asked, heard
    await vi.advanceTimersByTimeAsync(10);
    await one.take('k'); // t=10: counted here, sent at t=110
    await vi.advanceTimersByTimeAsync(91);
    await one.take('k'); // t=101: not heard for 100 ms, so asked (with the one waiting): heard again
    await vi.advanceTimersByTimeAsync(1);
    await one.take('k'); // t=102: counted here
    holding = true;
    await vi.advanceTimersByTimeAsync(8); // t=110: that one is sent, and held on its way
    expect(held).toBeDefined();
    // Four requests so far, one of them on its way: the limit of four is reached.
    expect((await one.take('k')).allowed).toBe(false);
    holding = false;
    held?.();
    await vi.advanceTimersByTimeAsync(0);
    expect(shared.used('k')).toBe(4);
  });

  it('asks the shared count once more, not once per waiting request, when the asking failed', async () => {
    const shared = sharedTally();
    let failures = 1;
    const flaky: SharedTally = {
      add: async (key, points) => {
        if (failures-- > 0) {
          await Promise.resolve();
          throw new Error('the database blinked');
        }
        return shared.tally.add(key, points);
      },
    };
    const one = counter(flaky, 100);
    const takes = await Promise.all(Array.from({ length: 6 }, () => one.take('k')));
    expect(takes.every((count) => count.allowed)).toBe(true);
    // The failed ask, then one ask for the five that waited on it; they are counted here after it.
    expect(shared.adds).toEqual([['k', 1]]);
    await vi.advanceTimersByTimeAsync(SYNC_MS);
    expect(shared.adds).toEqual([
      ['k', 1],
      ['k', 4],
    ]);
  });

  it('asks the shared count once for requests that arrive together on a key it has not heard', async () => {
    const shared = sharedTally();
    const one = counter(shared.tally, 100);
    const counts = await Promise.all(Array.from({ length: 10 }, () => one.take('k')));
    expect(counts.every((count) => count.allowed)).toBe(true);
    expect(new Set(counts.map((count) => count.remaining)).size).toBe(10);
    expect(shared.adds).toEqual([['k', 1]]);
    await vi.advanceTimersByTimeAsync(SYNC_MS);
    expect(shared.used('k')).toBe(10);
  });

  it('lets requests through when the shared count fails, and asks again at the next one', async () => {
    const shared = sharedTally();
    const one = counter(shared.tally, 1);
    shared.fail(true);
    expect(await one.take('k')).toMatchObject({ allowed: true });
    expect(await one.take('k')).toMatchObject({ allowed: true });
    expect(shared.adds).toHaveLength(2);
    shared.fail(false);
    expect(await one.take('k')).toMatchObject({ allowed: true, remaining: 0 });
    expect(await one.take('k')).toMatchObject({ allowed: false });
  });

  it('gives a request back within its window, here or in the shared count', async () => {
    const shared = sharedTally();
    const one = counter(shared.tally, 2);
    await one.take('k');
    await one.take('k');
    await one.giveBack('k');
    await vi.advanceTimersByTimeAsync(SYNC_MS);
    expect(shared.used('k')).toBe(1);
    await one.giveBack('k');
    expect(shared.used('k')).toBe(0);
    expect(shared.adds.at(-1)).toEqual(['k', -1]);
    // Past the window, nothing is given back: the count began again without it.
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    await one.giveBack('k');
    expect(shared.adds).toHaveLength(2);
  });

  it('remembers a bounded number of keys, sending a forgotten key’s requests first', async () => {
    const shared = sharedTally();
    const one = counter(shared.tally, 100, 2);
    await one.take('a');
    await one.take('a');
    await one.take('b');
    await one.take('c');
    await vi.advanceTimersByTimeAsync(0);
    // a was forgotten for c: its second request went to the shared count then.
    expect(shared.used('a')).toBe(2);
    await one.take('a');
    expect(shared.adds.filter(([key]) => key === 'a')).toEqual([
      ['a', 1],
      ['a', 1],
      ['a', 1],
    ]);
  });

  it('forgets the keys whose window ended', async () => {
    const shared = sharedTally();
    const one = counter(shared.tally, 100);
    await one.take('a');
    await one.take('a');
    await vi.advanceTimersByTimeAsync(WINDOW_MS + SYNC_MS);
    await one.take('b');
    await one.take('b');
    await vi.advanceTimersByTimeAsync(SYNC_MS);
    expect((one as unknown as { keys: Map<string, unknown> }).keys.has('a')).toBe(false);
  });
});
