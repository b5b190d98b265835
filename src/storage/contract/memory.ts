/**
 * The Memory service over the store under test: the part of the contract that proves a
 * backend keeps no rule or clock of its own. The policy given to `createMemory` (its
 * historyLimit and historyCap) and its clock must hold on every backend, since they
 * reach the store with each write (WriteRules) and nowhere else; so must its caps when
 * recovery brings text back (a restore, an undrop), under the caps in force now. Nothing
 * here may know which backend it is testing.
 */

import { beforeEach, describe, expect, it } from 'vitest';
import { createMemory, type Memory } from '../../memory/memory.js';
import type { Caller } from '../../memory/model/caller.js';
import { EngramError, type ErrorCode } from '../../memory/model/errors.js';
import type { Policy } from '../../memory/model/policy.js';
import type { Store } from '../../memory/port.js';
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

    describe('restore and undrop, under the caps in force now', () => {
      const long = 'x'.repeat(300);
      const wordy = 'W'.repeat(150);

      /**
       * Written under the default caps: topics/long (revision 1 of 300 bytes, then short),
       * topics/wordy (revision 1 described in 150 characters, then briefly), and in the
       * trash areas/long and areas/wordy, one over each of those caps, and areas/small.
       */
      async function written(): Promise<void> {
        const roomy = createMemory({ store });
        await roomy.write(alice, { name: 'topics/long', description: 'Long', new: long });
        await roomy.write(alice, { name: 'topics/long', old: long, new: 'short' });
        await roomy.write(alice, { name: 'topics/wordy', description: wordy, new: 'text' });
        await roomy.write(alice, { name: 'topics/wordy', description: 'Wordy' });
        await roomy.write(alice, { name: 'areas/long', description: 'Long', new: long });
        await roomy.write(alice, { name: 'areas/wordy', description: wordy, new: 'text' });
        await roomy.write(alice, { name: 'areas/small', description: 'Small', new: 'small' });
        for (const name of ['areas/long', 'areas/wordy', 'areas/small']) await roomy.drop(alice, name);
      }

      /** The refusal of `action` by a Memory under `policy`, after which the store holds just what it held. */
      async function refused(
        policy: Partial<Policy>,
        action: (memory: Memory) => Promise<unknown>,
        code: ErrorCode,
      ): Promise<EngramError> {
        const before = await store.dump();
        const error = await action(createMemory({ store, policy })).then(
          () => expect.unreachable('expected a refusal'),
          (refusal: unknown) => refusal,
        );
        if (!(error instanceof EngramError)) throw error;
        expect(error.code).toBe(code);
        expect(await store.dump()).toEqual(before);
        return error;
      }

      /** The user's bytes now (names, descriptions and bodies): a byte cap at it lets nothing grow. */
      async function totalBytes(): Promise<number> {
        return (await store.usage('alice')).totalBytes;
      }

      it('refuses a restored revision over the entry cap, as a write over it is', async () => {
        await written();
        const error = await refused(
          { entryCap: 200 },
          (memory) => memory.recovery.restore(alice, 'topics/long', 1),
          'TOO_LARGE',
        );
        expect(error.message).toBe(
          'topics/long would be 301 bytes; the cap is 200. Revision 1 cannot be restored as it is, under the caps in ' +
            'force now: copy what you need from revision 1 (its history shows it) into an entry within the caps; ' +
            'nothing was restored.',
        );
        expect(error.detail).toEqual({
          reason: 'recovered-over-cap',
          operation: 'restore',
          name: 'topics/long',
          revision: 1,
          part: 'body',
          size: 301,
          cap: 200,
        });
      });

      it('refuses a restored revision whose description is over the description cap', async () => {
        await written();
        const error = await refused(
          { descriptionCap: 100 },
          (memory) => memory.recovery.restore(alice, 'topics/wordy', 1),
          'TOO_LARGE',
        );
        expect(error.detail).toMatchObject({ operation: 'restore', part: 'description', size: 150, cap: 100 });
        expect(error.message).toMatch(/^The description of topics\/wordy is 150 characters; the cap is 100\./);
      });

      it('refuses a restored revision that would take the user past the byte cap, and one at the entry cap passes', async () => {
        await written();
        const error = await refused(
          { userCap: await totalBytes() },
          (memory) => memory.recovery.restore(alice, 'topics/long', 1),
          'TOO_LARGE',
        );
        expect(error.detail).toMatchObject({ reason: 'user-cap', name: 'topics/long', cap: await totalBytes() });
        // A restore brings back no entry of its own: the entry count stays what it is.
        const atCount = createMemory({ store, policy: { maxEntries: (await store.usage('alice')).entries } });
        expect((await atCount.recovery.restore(alice, 'topics/wordy', 1)).description).toBe(wordy);
      });

      it('refuses an undrop over the entry cap and over the description cap', async () => {
        await written();
        const body = await refused(
          { entryCap: 200 },
          (memory) => memory.recovery.undrop(alice, 'areas/long'),
          'TOO_LARGE',
        );
        expect(body.detail).toMatchObject({
          operation: 'undrop',
          name: 'areas/long',
          part: 'body',
          size: 301,
          cap: 200,
        });
        expect(body.message).toMatch(
          /^areas\/long would be 301 bytes; the cap is 200\. areas\/long cannot be undropped/,
        );
        expect(body.message).toMatch(/nothing was undropped\.$/);
        const description = await refused(
          { descriptionCap: 100 },
          (memory) => memory.recovery.undrop(alice, 'areas/wordy'),
          'TOO_LARGE',
        );
        expect(description.detail).toMatchObject({ operation: 'undrop', part: 'description', size: 150, cap: 100 });
      });

      it("refuses an undrop past the user's byte cap or entry cap, and undrops within them", async () => {
        await written();
        const bytes = await refused(
          { userCap: await totalBytes() },
          (memory) => memory.recovery.undrop(alice, 'areas/small'),
          'TOO_LARGE',
        );
        expect(bytes.detail).toMatchObject({ reason: 'user-cap', name: 'areas/small' });
        const { entries } = await store.usage('alice');
        const count = await refused(
          { maxEntries: entries },
          (memory) => memory.recovery.undrop(alice, 'areas/small'),
          'TOO_MANY_ENTRIES',
        );
        expect(count.detail).toEqual({
          reason: 'entry-cap',
          name: 'areas/small',
          entriesAfter: entries + 1,
          cap: entries,
        });
        const roomEnough = createMemory({
          store,
          policy: { maxEntries: entries + 1, entryCap: 200, descriptionCap: 100 },
        });
        expect((await roomEnough.recovery.undrop(alice, 'areas/small')).body).toBe('small\n');
      });
    });
  });
}
