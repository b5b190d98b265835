/**
 * The Memory service over the store under test: the part of the contract that proves a
 * backend keeps no rule or clock of its own. The policy given to `createMemory` (its
 * historyLimit and historyCap) and its clock must hold on every backend, since they
 * reach the store with each write (WriteRules) and nowhere else. Nothing here may know
 * which backend it is testing.
 */

import { beforeEach, describe, expect, it } from 'vitest';
import type { Caller } from '../core/caller.js';
import { createMemory } from '../core/memory.js';
import type { Store } from '../core/store.js';
import { type OpenStore, START, storesPerTest } from './setup.js';

const alice: Caller = { user: 'alice', label: 'memory-test' };

export function describeMemoryContract(label: string, open: OpenStore): void {
  describe(`Store under a Memory service: ${label}`, () => {
    const { keep } = storesPerTest();
    let store: Store;

    beforeEach(async () => {
      store = await keep(open());
    });

    it("keeps the policy's historyLimit of revisions, whatever the store would keep by itself", async () => {
      const memory = createMemory({ store, policy: { historyLimit: 2 } });
      await memory.write(alice, { name: 'topics/log', description: 'A log', new: 'one' });
      for (const line of ['two', 'three', 'four']) await memory.write(alice, { name: 'topics/log', new: line });

      const history = await memory.recovery.history(alice, 'topics/log');

      expect(history.map((record) => [record.revision, record.body])).toEqual([
        [3, 'one\ntwo\nthree\n'],
        [4, 'one\ntwo\nthree\nfour\n'],
      ]);
    });

    it("trims each user's history to the policy's historyCap", async () => {
      // Each revision takes 5 bytes of description and 100 of body: a cap of 250 keeps two.
      const memory = createMemory({ store, policy: { historyCap: 250 } });
      const body = (n: number) => `${String(n).repeat(99)}\n`;
      await memory.write(alice, { name: 'topics/a', description: 'A cap', new: body(1) });
      for (const n of [2, 3, 4]) {
        const { entry } = await memory.write(alice, { name: 'topics/a', old: body(n - 1), new: body(n) });
        expect(entry.revision).toBe(n);
      }

      const history = await memory.recovery.history(alice, 'topics/a');

      expect(history.map((record) => record.revision)).toEqual([3, 4]);
      const [usage] = (await store.dump()).users;
      expect(usage?.historyBytes).toBe(2 * 105);
    });

    it("stamps every change with the Memory service's clock: creation, update, revision and drop", async () => {
      let time = START + 5_000;
      const memory = createMemory({ store, now: () => time });
      await memory.write(alice, { name: 'topics/a', description: 'Clocked', new: 'one' });
      time += 1_000;
      const { entry } = await memory.write(alice, { name: 'topics/a', new: 'two' });
      time += 1_000;
      await memory.drop(alice, 'topics/a');

      expect(entry).toMatchObject({ created: START + 5_000, updated: START + 6_000, revision: 2 });
      const trash = await memory.recovery.trash(alice);
      expect(trash).toEqual([expect.objectContaining({ name: 'topics/a', droppedAt: START + 7_000 })]);
      const history = await memory.recovery.history(alice, 'topics/a');
      expect(history.map((record) => record.at)).toEqual([START + 5_000, START + 6_000, START + 7_000]);
    });
  });
}
