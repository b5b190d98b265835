/**
 * The activity part of the Store contract (ActivityStore: a user's changes newest first,
 * paged, by actor, and the actors; ChangeStore: watchers told of committed changes),
 * written once and run against every backend by `describeStoreContract` (index.ts).
 * Nothing here may know which backend it is testing. That a change committed through a
 * second store on the same database is told is backend-specific (test/storage).
 */

import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { ActivityPosition, ActivityRecord, MemoryChange } from '../../memory/activity.js';
import type { Caller, Store } from '../../memory/port.js';
import { appendLine, bytes, drop, none, type OpenStore, put, START, storesPerTest, withoutUser } from './setup.js';

const desktop: Caller = { user: 'alice', label: 'claude-desktop' };
const laptop: Caller = { user: 'alice', label: 'laptop token' };
const bob: Caller = { user: 'bob', label: 'bob-client' };

/** Long enough for any backend to tell a change; nothing is asserted about how long it took. */
const TOLD_WITHIN_MS = 10_000;

/**
 * The changes told with details. A backend that polls its database may also tell a change
 * of its own without them, when a poll reads it first: those are left out.
 */
function detailed(told: readonly MemoryChange[]): MemoryChange[] {
  return told.filter((change) => change.name !== undefined);
}

function summary(records: readonly ActivityRecord[]) {
  return records.map(({ name, revision, operation, actor }) => `${name}@${revision} ${operation} by ${actor}`);
}

export function describeActivityContract(label: string, open: OpenStore): void {
  describe(`Store activity contract: ${label}`, () => {
    const { clock, rules, keep } = storesPerTest();
    let store: Store;

    beforeEach(async () => {
      store = await keep(open());
    });

    /** Every record of the user's activity, read page by page of `limit`, each page after the last one's final record. */
    async function readAll(user: string, limit: number, actor?: string): Promise<ActivityRecord[]> {
      const all: ActivityRecord[] = [];
      let before: ActivityPosition | undefined;
      for (;;) {
        const page = await store.activity(user, { limit, ...(before ? { before } : {}), ...(actor ? { actor } : {}) });
        expect(page.length).toBeLessThanOrEqual(limit);
        all.push(...page);
        const last = page.at(-1);
        if (page.length < limit || !last) return all;
        before = { at: last.at, entry: last.entry, revision: last.revision };
      }
    }

    it('lists every change of live and dropped entries newest first, with name, actor, description and size', async () => {
      await store.mutate(desktop, 'notes/a', put('first body', 'about a'), rules);
      clock.time += 1_000;
      await store.mutate(laptop, 'notes/b', put('héllo', 'about b'), rules);
      clock.time += 1_000;
      await store.mutate(desktop, 'notes/a', appendLine('more'), rules);
      clock.time += 1_000;
      await store.mutate(laptop, 'notes/b', drop, rules);
      const records = await store.activity('alice', { limit: 10 });
      expect(summary(records)).toEqual([
        'notes/b@2 drop by laptop token',
        'notes/a@2 append by claude-desktop',
        'notes/b@1 create by laptop token',
        'notes/a@1 create by claude-desktop',
      ]);
      expect(records.map((record) => record.at)).toEqual([START + 3_000, START + 2_000, START + 1_000, START]);
      const [dropped, appended] = records;
      // A drop records the entry as it was.
      expect(dropped).toMatchObject({ description: 'about b', size: 6 });
      expect(appended).toMatchObject({ description: 'about a', size: bytes('first bodymore\n') });
      expect(new Set(records.map((record) => typeof record.entry))).toEqual(new Set(['number']));
    });

    it('orders changes made in the same millisecond by entry, then revision, and pages through them without gaps or repeats', async () => {
      for (let round = 0; round < 3; round++) {
        for (const name of ['x/one', 'x/two', 'x/three', 'x/four']) {
          await store.mutate(round % 2 ? laptop : desktop, name, appendLine(`line ${round}`), rules);
        }
        if (round === 1) clock.time += 1;
      }
      const whole = await store.activity('alice', { limit: 100 });
      expect(whole).toHaveLength(12);
      for (let at = 1; at < whole.length; at++) {
        const [newer, older] = [whole[at - 1] as ActivityRecord, whole[at] as ActivityRecord];
        const order = newer.at - older.at || newer.entry - older.entry || newer.revision - older.revision;
        expect(order).toBeGreaterThan(0);
      }
      for (const limit of [1, 5, 12]) {
        expect(await readAll('alice', limit)).toEqual(whole);
      }
    });

    it('keeps to the limit, and after the oldest change has nothing more', async () => {
      for (let index = 0; index < 7; index++) await store.mutate(desktop, `n/e${index}`, put('body'), rules);
      expect(await store.activity('alice', { limit: 3 })).toHaveLength(3);
      const all = await store.activity('alice', { limit: 200 });
      expect(all).toHaveLength(7);
      const oldest = all.at(-1) as ActivityRecord;
      expect(await store.activity('alice', { limit: 5, before: oldest })).toEqual([]);
    });

    it('filters by actor, and pages within one actor', async () => {
      for (let index = 0; index < 5; index++) {
        await store.mutate(desktop, 'notes/a', appendLine(`d${index}`), rules);
        await store.mutate(laptop, 'notes/b', appendLine(`l${index}`), rules);
      }
      const mine = await readAll('alice', 2, 'laptop token');
      expect(mine.map((record) => `${record.name}@${record.revision}`)).toEqual([
        'notes/b@5',
        'notes/b@4',
        'notes/b@3',
        'notes/b@2',
        'notes/b@1',
      ]);
      expect(new Set(mine.map((record) => record.actor))).toEqual(new Set(['laptop token']));
      expect(await store.activity('alice', { limit: 10, actor: 'nobody' })).toEqual([]);
    });

    it('counts the changes of each actor, most first, then by name', async () => {
      await store.mutate(laptop, 'notes/a', put('1'), rules);
      clock.time += 5;
      await store.mutate(laptop, 'notes/a', put('2'), rules);
      await store.mutate(desktop, 'notes/b', put('3'), rules);
      await store.mutate({ user: 'alice', label: 'cli' }, 'notes/c', put('4'), rules);
      expect(await store.actors('alice')).toEqual([
        { actor: 'laptop token', changes: 2, last: START + 5 },
        { actor: 'claude-desktop', changes: 1, last: START + 5 },
        { actor: 'cli', changes: 1, last: START + 5 },
      ]);
      expect(await store.actors('nobody')).toEqual([]);
    });

    it("keeps users apart: a user's activity and actors never show another's", async () => {
      await store.mutate(desktop, 'notes/a', put('alice body'), rules);
      await store.mutate(bob, 'notes/a', put('bob body'), rules);
      expect(summary(await store.activity('bob', { limit: 10 }))).toEqual(['notes/a@1 create by bob-client']);
      expect(summary(await store.activity('alice', { limit: 10 }))).toEqual(['notes/a@1 create by claude-desktop']);
      expect(await store.activity('carol', { limit: 10 })).toEqual([]);
      expect((await store.actors('bob')).map((actor) => actor.actor)).toEqual(['bob-client']);
    });

    it('forgets what is purged: its changes leave the activity and the counts', async () => {
      await store.mutate(desktop, 'notes/secret', put('secret'), rules);
      await store.mutate(laptop, 'notes/kept', put('kept'), rules);
      await store.mutate(desktop, 'notes/secret', drop, rules);
      expect(await store.purge('alice', 'notes/secret', { includeLive: false })).toBe(1);
      expect(summary(await store.activity('alice', { limit: 10 }))).toEqual(['notes/kept@1 create by laptop token']);
      expect(await store.actors('alice')).toEqual([{ actor: 'laptop token', changes: 1, last: START }]);
    });

    it('tells a watcher of each committed change of its user, with the entry, revision and operation', async () => {
      const told: MemoryChange[] = [];
      const stop = await store.watch('alice', (change) => told.push(change));
      await store.mutate(desktop, 'notes/a', put('one'), rules);
      await vi.waitFor(() => expect(detailed(told)).toHaveLength(1), TOLD_WITHIN_MS);
      await store.mutate(desktop, 'notes/a', appendLine('two'), rules);
      await vi.waitFor(() => expect(detailed(told)).toHaveLength(2), TOLD_WITHIN_MS);
      await store.mutate(desktop, 'notes/a', drop, rules);
      await vi.waitFor(() => expect(detailed(told)).toHaveLength(3), TOLD_WITHIN_MS);
      expect(detailed(told).map(({ name, revision, operation }) => ({ name, revision, operation }))).toEqual([
        { name: 'notes/a', revision: 1, operation: 'create' },
        { name: 'notes/a', revision: 2, operation: 'append' },
        { name: 'notes/a', revision: 3, operation: 'drop' },
      ]);
      const versions = detailed(told).map((change) => change.version);
      expect([...versions].sort((a, b) => a - b)).toEqual(versions);
      expect(new Set(versions).size).toBe(3);
      expect(told.every((change) => versions.includes(change.version))).toBe(true);
      stop();
    });

    it('goes on past every change counter a load replaced, for a user the load left out', async () => {
      // A watcher, or another server's view of the user (PostgreSQL's write cache), that knew
      // a counter before the load must never meet it again: a restart at 1 let a stale view
      // pass its save's check and write over another entry.
      const told: MemoryChange[] = [];
      const stop = await store.watch('alice', (change) => told.push(change));
      await store.mutate(desktop, 'notes/a', put('one'), rules);
      await store.mutate(desktop, 'notes/a', appendLine('two'), rules);
      await store.mutate(desktop, 'notes/a', appendLine('three'), rules);
      await store.mutate(bob, 'notes/b', put('bob'), rules);
      await vi.waitFor(() => expect(detailed(told)).toHaveLength(3), TOLD_WITHIN_MS);
      const known = Math.max(...told.map((change) => change.version));
      const dump = await store.dump();
      await store.load(withoutUser(dump, 'alice'), { replace: true });
      told.length = 0;

      await store.mutate(desktop, 'notes/c', put('after the load'), rules);
      await vi.waitFor(() => expect(detailed(told).map((change) => change.name)).toEqual(['notes/c']), TOLD_WITHIN_MS);
      expect(detailed(told)[0]!.version).toBeGreaterThan(known);
      stop();
    });

    it("never tells a watcher of another user's changes, nor of a write that changed nothing", async () => {
      const told: MemoryChange[] = [];
      const stop = await store.watch('alice', (change) => told.push(change));
      await store.mutate(bob, 'notes/a', put('bob'), rules);
      await store.mutate(desktop, 'notes/a', none, rules);
      // A change of alice's afterwards is told: by then, anything before it would have been.
      await store.mutate(desktop, 'notes/b', put('alice'), rules);
      await vi.waitFor(() => expect(told.some((change) => change.name === 'notes/b')).toBe(true), TOLD_WITHIN_MS);
      expect(detailed(told).map((change) => change.name)).toEqual(['notes/b']);
      expect(new Set(told.map((change) => change.version)).size).toBe(1);
      stop();
    });

    it('stops telling a watcher once stopped, and tells every watcher of the user until then', async () => {
      const first: MemoryChange[] = [];
      const second: MemoryChange[] = [];
      const stopFirst = await store.watch('alice', (change) => first.push(change));
      const stopSecond = await store.watch('alice', (change) => second.push(change));
      await store.mutate(desktop, 'notes/a', put('one'), rules);
      await vi.waitFor(() => expect([detailed(first).length, detailed(second).length]).toEqual([1, 1]), TOLD_WITHIN_MS);
      stopFirst();
      const toldFirst = first.length;
      await store.mutate(desktop, 'notes/a', put('two'), rules);
      await vi.waitFor(() => expect(detailed(second)).toHaveLength(2), TOLD_WITHIN_MS);
      expect(first).toHaveLength(toldFirst);
      stopSecond();
    });

    it('tells a watcher of an undrop, a purge and an import', async () => {
      await store.mutate(desktop, 'notes/a', put('one'), rules);
      await store.mutate(desktop, 'notes/a', drop, rules);
      const told: MemoryChange[] = [];
      const stop = await store.watch('alice', (change) => told.push(change));
      await store.undrop(desktop, 'notes/a', rules);
      await vi.waitFor(() => expect(detailed(told)).toHaveLength(1), TOLD_WITHIN_MS);
      expect(detailed(told)[0]).toMatchObject({ name: 'notes/a', revision: 3, operation: 'undrop' });
      await store.purge('alice', 'notes/a', { includeLive: true });
      await vi.waitFor(() => expect(detailed(told)).toHaveLength(2), TOLD_WITHIN_MS);
      const purged = detailed(told)[1] as MemoryChange;
      expect(purged).toMatchObject({ name: 'notes/a' });
      expect(purged.operation).toBeUndefined();
      await store.mutateAll(
        desktop,
        () => [{ name: 'notes/imported', change: { kind: 'put', operation: 'import', description: 'd', body: 'b' } }],
        rules,
      );
      await vi.waitFor(() => expect(told.at(-1)?.version).toBeGreaterThan(purged.version), TOLD_WITHIN_MS);
      stop();
    });

    it('tells a watcher of a load over a memory that was itself loaded, with a version past every one before', async () => {
      await store.mutate(desktop, 'notes/a', put('one'), rules);
      const dump = await store.dump();
      await store.load(dump, { replace: true });
      const told: MemoryChange[] = [];
      const stop = await store.watch('alice', (change) => told.push(change));
      await store.mutate(desktop, 'notes/a', appendLine('two'), rules);
      await vi.waitFor(() => expect(detailed(told)).toHaveLength(1), TOLD_WITHIN_MS);
      const written = told.at(-1) as MemoryChange;
      // Back to the dump: a counter restarting from the dump's would meet a number already told.
      await store.load(dump, { replace: true });
      await vi.waitFor(() => expect(told.length).toBeGreaterThan(1), TOLD_WITHIN_MS);
      expect(told.at(-1)?.version).toBeGreaterThan(written.version);
      stop();
    });
  });
}
