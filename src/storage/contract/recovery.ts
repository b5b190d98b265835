/**
 * The recovery part of the Store contract (RecoveryStore: revisions, the trash, undrop,
 * purge; with mutateAll, historyLimit and the history cap, which every write obeys),
 * written once and run against every backend by `describeStoreContract` (index.ts).
 * Nothing here may know which backend it is testing.
 */

import { beforeEach, describe, expect, it } from 'vitest';
import type { Caller, DecideAll, RevisionRecord, Store, StoredEntry, Usage, WriteRules } from '../../memory/port.js';
import {
  appendLine,
  bytes,
  drop,
  footprint,
  none,
  type OpenStore,
  put,
  recount,
  START,
  storesPerTest,
} from './setup.js';

/** One user seen through three front doors: history records each door's label. */
const desktop: Caller = { user: 'alice', label: 'claude-desktop' };
const laptop: Caller = { user: 'alice', label: 'laptop token' };
const cli: Caller = { user: 'alice', label: 'cli' };
const bob: Caller = { user: 'bob', label: 'bob-client' };

/** The parts of a revision a test states: everything but the time, which tests check apart. */
function summary(records: readonly RevisionRecord[]) {
  return records.map(({ revision, operation, actor, description, body }) => ({
    revision,
    operation,
    actor,
    description,
    body,
  }));
}

export function describeRecoveryContract(label: string, open: OpenStore): void {
  describe(`Store recovery contract: ${label}`, () => {
    const { clock, rules, keep } = storesPerTest();
    let store: Store;

    beforeEach(async () => {
      store = await keep(open());
    });

    /** The usage `decide` is shown for `actor` right now, read through a mutate that changes nothing. */
    async function usageOf(actor: Caller): Promise<Usage | undefined> {
      let seen: Usage | undefined;
      await store.mutate(
        actor,
        'topics/usage-probe',
        (_current, usage) => {
          seen = usage;
          return { kind: 'none' };
        },
        rules,
      );
      return seen;
    }

    /** The usage the user's index shows: names, descriptions and sizes of the live entries, and their count. */
    async function footprintOf(user: string): Promise<Usage> {
      return footprint(await store.index(user));
    }

    /** Every user's counters, as the store's dump holds them, must equal a recount of what it holds. */
    async function expectCountersRight(of: Store = store): Promise<void> {
      const dump = await of.dump();
      expect(dump.users).toEqual(recount(dump));
    }

    /** Everything observable about a user, to prove that a refused change left it alone. */
    async function snapshot(user: string, names: readonly string[]) {
      const entries = await store.get(user, names);
      const histories: Record<string, RevisionRecord[]> = {};
      for (const name of names) histories[name] = await store.history(user, name);
      return {
        index: await store.index(user),
        entries: entries.sort((a, b) => a.name.localeCompare(b.name)),
        histories,
        trash: await store.trash(user),
        usage: await usageOf({ user, label: 'snapshot' }),
      };
    }

    describe('revisions', () => {
      it('records exactly one revision per change, with its operation, actor label, time and resulting text', async () => {
        const name = 'topics/editor';
        const steps: Array<() => Promise<unknown>> = [
          () => store.mutate(desktop, name, put('Uses Helix.\n', 'Editor', 'create'), rules),
          () => store.mutate(desktop, name, appendLine('Tabs, width 4.'), rules),
          () => store.mutate(laptop, name, put('Uses Neovim.\nTabs, width 4.\n', 'Editor', 'replace'), rules),
          () => store.mutate(laptop, name, put('Uses Neovim.\n', 'Editor', 'remove'), rules),
          () => store.mutate(desktop, name, put('Uses Neovim.\n', 'Editor preferences', 'describe'), rules),
          () => store.mutate(cli, name, put('Uses Helix.\n', 'Editor', 'restore'), rules),
          () => store.mutate(cli, name, put('Uses Kakoune.\n', 'Editor', 'import'), rules),
          () => store.mutate(cli, name, drop, rules),
          () => store.undrop(laptop, name, rules),
        ];
        for (const [i, step] of steps.entries()) {
          clock.time = START + (i + 1) * 1_000;
          await step();
          expect(await store.history('alice', name)).toHaveLength(i + 1);
        }

        const history = await store.history('alice', name);

        expect(summary(history)).toEqual([
          { revision: 1, operation: 'create', actor: 'claude-desktop', description: 'Editor', body: 'Uses Helix.\n' },
          {
            revision: 2,
            operation: 'append',
            actor: 'claude-desktop',
            description: 'Editor',
            body: 'Uses Helix.\nTabs, width 4.\n',
          },
          {
            revision: 3,
            operation: 'replace',
            actor: 'laptop token',
            description: 'Editor',
            body: 'Uses Neovim.\nTabs, width 4.\n',
          },
          { revision: 4, operation: 'remove', actor: 'laptop token', description: 'Editor', body: 'Uses Neovim.\n' },
          {
            revision: 5,
            operation: 'describe',
            actor: 'claude-desktop',
            description: 'Editor preferences',
            body: 'Uses Neovim.\n',
          },
          { revision: 6, operation: 'restore', actor: 'cli', description: 'Editor', body: 'Uses Helix.\n' },
          { revision: 7, operation: 'import', actor: 'cli', description: 'Editor', body: 'Uses Kakoune.\n' },
          // A drop records the text the entry had when it was dropped; undrop brings that back.
          { revision: 8, operation: 'drop', actor: 'cli', description: 'Editor', body: 'Uses Kakoune.\n' },
          { revision: 9, operation: 'undrop', actor: 'laptop token', description: 'Editor', body: 'Uses Kakoune.\n' },
        ]);
        expect(history.map((record) => record.at)).toEqual(steps.map((_, i) => START + (i + 1) * 1_000));
        expect(await store.get('alice', [name])).toEqual([expect.objectContaining({ revision: 9 })]);
      });

      it("records nothing for 'none', on an existing entry or on a missing name", async () => {
        await store.mutate(desktop, 'topics/a', put('a\n'), rules);
        const before = await store.history('alice', 'topics/a');
        clock.time += 1_000;

        await store.mutate(desktop, 'topics/a', none, rules);
        await store.mutate(desktop, 'topics/missing', none, rules);

        expect(await store.history('alice', 'topics/a')).toEqual(before);
        expect(await store.history('alice', 'topics/missing')).toEqual([]);
      });

      it('records nothing for a decide that throws', async () => {
        await store.mutate(desktop, 'topics/a', put('a\n'), rules);
        const before = await snapshot('alice', ['topics/a', 'topics/new']);

        await expect(
          store.mutate(
            desktop,
            'topics/a',
            () => {
              throw new Error('refused');
            },
            rules,
          ),
        ).rejects.toThrow('refused');
        await expect(
          store.mutate(
            desktop,
            'topics/new',
            () => {
              throw new Error('refused');
            },
            rules,
          ),
        ).rejects.toThrow('refused');

        expect(await snapshot('alice', ['topics/a', 'topics/new'])).toEqual(before);
      });

      it('is empty for a name that never existed', async () => {
        expect(await store.history('alice', 'topics/never')).toEqual([]);
      });

      it("keeps each entry's and each user's history apart", async () => {
        await store.mutate(desktop, 'people/sam', put('alice on Sam\n'), rules);
        await store.mutate(desktop, 'topics/other', put('other\n'), rules);
        await store.mutate(bob, 'people/sam', put('bob on Sam\n'), rules);
        await store.mutate(bob, 'people/sam', appendLine('more'), rules);

        expect(summary(await store.history('alice', 'people/sam'))).toEqual([
          {
            revision: 1,
            operation: 'create',
            actor: 'claude-desktop',
            description: 'a description',
            body: 'alice on Sam\n',
          },
        ]);
        expect((await store.history('bob', 'people/sam')).map((record) => record.actor)).toEqual([
          'bob-client',
          'bob-client',
        ]);
        expect(await store.history('bob', 'topics/other')).toEqual([]);
      });

      it('of a dropped entry stays readable, until a new entry takes the name', async () => {
        await store.mutate(desktop, 'topics/e', put('first life\n'), rules);
        await store.mutate(desktop, 'topics/e', appendLine('grown'), rules);
        clock.time += 1_000;
        await store.mutate(cli, 'topics/e', drop, rules);

        expect(summary(await store.history('alice', 'topics/e')).map((record) => record.operation)).toEqual([
          'create',
          'append',
          'drop',
        ]);

        clock.time += 1_000;
        await store.mutate(desktop, 'topics/e', put('second life\n'), rules);
        expect(summary(await store.history('alice', 'topics/e'))).toEqual([
          {
            revision: 1,
            operation: 'create',
            actor: 'claude-desktop',
            description: 'a description',
            body: 'second life\n',
          },
        ]);

        clock.time += 1_000;
        await store.mutate(desktop, 'topics/e', drop, rules);
        expect(summary(await store.history('alice', 'topics/e')).map((record) => record.body)).toEqual([
          'second life\n',
          'second life\n',
        ]);
      });

      it("records the rules' note on the revision of a write, a drop and an undrop, and no note without one", async () => {
        const noted = { ...rules, note: 'revert r1: why' };
        await store.mutate(desktop, 'topics/noted', put('one\n'), rules);
        await store.mutate(cli, 'topics/noted', appendLine('two'), noted);
        await store.mutate(cli, 'topics/noted', drop, noted);
        await store.undrop(cli, 'topics/noted', noted);
        const history = await store.history('alice', 'topics/noted');
        expect(history.map((record) => record.note)).toEqual([
          undefined,
          'revert r1: why',
          'revert r1: why',
          'revert r1: why',
        ]);
        expect('note' in (history[0] ?? {})).toBe(false);
        const dumped = (await store.dump()).entries.find((entry) => entry.name === 'topics/noted');
        expect(dumped?.revisions.map((record) => record.note)).toEqual(history.map((record) => record.note));
      });

      it('of every copy of a name, live and dropped, in time order with the copy of each (timeline)', async () => {
        await store.mutate(desktop, 'topics/t', put('first life\n'), rules);
        clock.time += 1_000;
        await store.mutate(desktop, 'topics/t', drop, rules);
        clock.time += 1_000;
        await store.mutate(laptop, 'topics/t', put('second life\n'), rules);
        clock.time += 1_000;
        await store.mutate(laptop, 'topics/t', appendLine('more'), { ...rules, note: 'n' });
        await store.mutate(bob, 'topics/t', put('bob\n'), rules);

        const timeline = await store.timeline('alice', 'topics/t');
        expect(
          timeline.map(({ revision, operation, actor, body, note }) => ({ revision, operation, actor, body, note })),
        ).toEqual([
          { revision: 1, operation: 'create', actor: 'claude-desktop', body: 'first life\n', note: undefined },
          { revision: 2, operation: 'drop', actor: 'claude-desktop', body: 'first life\n', note: undefined },
          { revision: 1, operation: 'create', actor: 'laptop token', body: 'second life\n', note: undefined },
          { revision: 2, operation: 'append', actor: 'laptop token', body: 'second life\nmore\n', note: 'n' },
        ]);
        expect(timeline[0]?.entry).toBe(timeline[1]?.entry);
        expect(timeline[2]?.entry).toBe(timeline[3]?.entry);
        expect(timeline[0]?.entry).not.toBe(timeline[2]?.entry);
        expect(timeline.map((record) => record.at)).toEqual([START, START + 1_000, START + 2_000, START + 3_000]);
        expect(await store.timeline('alice', 'topics/never')).toEqual([]);
      });

      it('keeps only the newest historyLimit revisions of each entry, dropping the oldest first', async () => {
        const limited = store;
        const limit3: WriteRules = { ...rules, historyLimit: 3 };
        for (let i = 1; i <= 5; i++) {
          clock.time = START + i * 1_000;
          await limited.mutate(desktop, 'topics/log', appendLine(`line ${i}`), limit3);
        }
        await limited.mutate(desktop, 'topics/short', put('one\n'), limit3);

        const history = await limited.history('alice', 'topics/log');

        expect(history.map((record) => record.revision)).toEqual([3, 4, 5]);
        expect(history[0]).toMatchObject({ body: 'line 1\nline 2\nline 3\n', at: START + 3_000 });
        expect(await limited.get('alice', ['topics/log'])).toEqual([
          expect.objectContaining({ revision: 5, body: 'line 1\nline 2\nline 3\nline 4\nline 5\n' }),
        ]);
        expect((await limited.history('alice', 'topics/short')).map((record) => record.revision)).toEqual([1]);

        await limited.mutate(cli, 'topics/log', drop, limit3);
        expect((await limited.history('alice', 'topics/log')).map((record) => record.operation)).toEqual([
          'append',
          'append',
          'drop',
        ]);
        await expectCountersRight(limited);
      });
    });

    describe('trash', () => {
      it('receives a dropped entry, with when and by whom it was dropped', async () => {
        clock.time = START + 1_000;
        await store.mutate(desktop, 'topics/e', put('doomed\n', 'soon gone'), rules);
        clock.time = START + 2_000;
        await store.mutate(desktop, 'topics/e', appendLine('really'), rules);
        clock.time = START + 5_000;

        await store.mutate(cli, 'topics/e', drop, rules);

        expect(await store.trash('alice')).toEqual([
          {
            name: 'topics/e',
            description: 'soon gone',
            body: 'doomed\nreally\n',
            size: 14,
            created: START + 1_000,
            updated: START + 2_000,
            revision: 3,
            droppedAt: START + 5_000,
            droppedBy: 'cli',
          },
        ]);
      });

      it("lists the user's dropped copies, most recently dropped first, and nothing live or of other users", async () => {
        for (const [i, name] of ['topics/a', 'topics/b', 'topics/a'].entries()) {
          clock.time = START + i * 1_000;
          await store.mutate(desktop, name, put(`${name} copy ${i}\n`), rules);
          await store.mutate(laptop, name, drop, rules);
        }
        await store.mutate(desktop, 'topics/live', put('live\n'), rules);
        await store.mutate(bob, 'topics/bobs', put('bob\n'), rules);
        await store.mutate(bob, 'topics/bobs', drop, rules);

        const trash = await store.trash('alice');

        expect(trash.map((entry) => [entry.name, entry.body, entry.droppedAt, entry.droppedBy])).toEqual([
          ['topics/a', 'topics/a copy 2\n', START + 2_000, 'laptop token'],
          ['topics/b', 'topics/b copy 1\n', START + 1_000, 'laptop token'],
          ['topics/a', 'topics/a copy 0\n', START, 'laptop token'],
        ]);
        expect((await store.trash('bob')).map((entry) => entry.name)).toEqual(['topics/bobs']);
        expect(await store.trash('carol')).toEqual([]);
      });
    });

    describe('undrop', () => {
      it('brings back the most recently dropped copy as a new undrop revision, live again', async () => {
        clock.time = START + 1_000;
        await store.mutate(desktop, 'topics/e', put('first life\n'), rules);
        await store.mutate(desktop, 'topics/e', drop, rules);
        clock.time = START + 2_000;
        await store.mutate(desktop, 'topics/e', put('second life\n', 'second'), rules);
        await store.mutate(desktop, 'topics/e', appendLine('grown'), rules);
        await store.mutate(desktop, 'topics/e', drop, rules);
        clock.time = START + 3_000;

        const result = await store.undrop(cli, 'topics/e', rules);

        const restored: StoredEntry = {
          name: 'topics/e',
          description: 'second',
          body: 'second life\ngrown\n',
          size: 18,
          created: START + 2_000,
          updated: START + 2_000,
          revision: 4,
        };
        expect(result).toEqual({ status: 'restored', entry: restored });
        expect(await store.get('alice', ['topics/e'])).toEqual([restored]);
        expect(await store.index('alice')).toEqual([{ name: 'topics/e', size: 18, description: 'second' }]);
        expect((await store.trash('alice')).map((entry) => entry.body)).toEqual(['first life\n']);
        expect((await store.history('alice', 'topics/e')).at(-1)).toEqual({
          revision: 4,
          operation: 'undrop',
          actor: 'cli',
          at: START + 3_000,
          description: 'second',
          body: 'second life\ngrown\n',
        });
      });

      it("refuses with 'taken' when a live entry holds the name, and changes nothing", async () => {
        await store.mutate(desktop, 'topics/e', put('old\n'), rules);
        await store.mutate(desktop, 'topics/e', drop, rules);
        await store.mutate(desktop, 'topics/e', put('new\n'), rules);
        const before = await snapshot('alice', ['topics/e']);
        clock.time += 1_000;

        expect(await store.undrop(cli, 'topics/e', rules)).toEqual({ status: 'taken' });

        expect(await snapshot('alice', ['topics/e'])).toEqual(before);
      });

      it('lets its check see the copy and the usage, and refuse, changing nothing', async () => {
        await store.mutate(desktop, 'topics/e', put('Uses Helix.\n'), rules);
        await store.mutate(desktop, 'topics/e', drop, rules);
        await store.mutate(desktop, 'topics/other', put('x\n'), rules);
        const before = await snapshot('alice', ['topics/e', 'topics/other']);
        const seen: unknown[] = [];
        const refusal = new Error('over the cap');

        await expect(
          store.undrop(cli, 'topics/e', rules, (entry, usage) => {
            seen.push({ name: entry.name, body: entry.body, entries: usage.entries });
            throw refusal;
          }),
        ).rejects.toBe(refusal);

        expect(seen).toEqual([{ name: 'topics/e', body: 'Uses Helix.\n', entries: 1 }]);
        expect(await snapshot('alice', ['topics/e', 'topics/other'])).toEqual(before);
        expect((await store.undrop(cli, 'topics/e', rules, () => {})).status).toBe('restored');
      });

      it("answers 'missing' when nothing of that name is in the user's trash", async () => {
        await store.mutate(desktop, 'topics/live', put('live\n'), rules);
        await store.mutate(bob, 'topics/bobs', put('bob\n'), rules);
        await store.mutate(bob, 'topics/bobs', drop, rules);
        const before = await snapshot('alice', ['topics/live', 'topics/bobs']);

        expect(await store.undrop(cli, 'topics/never', rules)).toEqual({ status: 'missing' });
        expect(await store.undrop(cli, 'topics/bobs', rules)).toEqual({ status: 'missing' });

        expect(await snapshot('alice', ['topics/live', 'topics/bobs'])).toEqual(before);
        expect((await store.trash('bob')).map((entry) => entry.name)).toEqual(['topics/bobs']);
      });

      it("answers 'missing', not 'taken', for a live entry of which no copy was ever dropped", async () => {
        await store.mutate(desktop, 'topics/live', put('live\n'), rules);
        const before = await snapshot('alice', ['topics/live']);

        expect(await store.undrop(cli, 'topics/live', rules)).toEqual({ status: 'missing' });

        expect(await snapshot('alice', ['topics/live'])).toEqual(before);
      });

      it('numbers on from the undropped revision', async () => {
        await store.mutate(desktop, 'topics/e', put('one\n'), rules);
        await store.mutate(desktop, 'topics/e', drop, rules);
        await store.undrop(cli, 'topics/e', rules);

        const { after } = await store.mutate(desktop, 'topics/e', appendLine('two'), rules);

        expect(after).toMatchObject({ revision: 4, body: 'one\ntwo\n' });
        expect((await store.history('alice', 'topics/e')).map((record) => record.operation)).toEqual([
          'create',
          'drop',
          'undrop',
          'append',
        ]);
      });
    });

    describe('purge', () => {
      /** Alice's topics/e: two dropped copies and a live one, each with history; bob has the same name. */
      async function threeCopies(): Promise<void> {
        for (const life of ['first', 'second']) {
          clock.time += 1_000;
          await store.mutate(desktop, 'topics/e', put(`${life} life\n`), rules);
          await store.mutate(desktop, 'topics/e', appendLine('more'), rules);
          await store.mutate(desktop, 'topics/e', drop, rules);
        }
        clock.time += 1_000;
        await store.mutate(desktop, 'topics/e', put('live one\n'), rules);
        await store.mutate(desktop, 'topics/kept', put('kept\n'), rules);
        await store.mutate(bob, 'topics/e', put('bob\n'), rules);
        await store.mutate(bob, 'topics/e', drop, rules);
      }

      it('without includeLive deletes only the dropped copies and their history, and counts them', async () => {
        await threeCopies();
        const live = await store.get('alice', ['topics/e', 'topics/kept']);
        const liveHistory = await store.history('alice', 'topics/e');

        expect(await store.purge('alice', 'topics/e', { includeLive: false })).toBe(2);

        expect(await store.trash('alice')).toEqual([]);
        expect(await store.get('alice', ['topics/e', 'topics/kept'])).toEqual(live);
        expect(await store.history('alice', 'topics/e')).toEqual(liveHistory);
        expect(await usageOf(desktop)).toEqual({
          totalBytes: bytes('topics/e') + bytes('live one\n') + bytes('topics/kept') + bytes('kept\n') + 2 * 13,
          entries: 2,
        });
        expect((await store.trash('bob')).map((entry) => entry.body)).toEqual(['bob\n']);
        await expectCountersRight();
      });

      it('with includeLive deletes the live entry too, with every revision', async () => {
        await threeCopies();

        expect(await store.purge('alice', 'topics/e', { includeLive: true })).toBe(3);

        expect(await store.get('alice', ['topics/e'])).toEqual([]);
        expect(await store.history('alice', 'topics/e')).toEqual([]);
        expect(await store.trash('alice')).toEqual([]);
        expect(await store.index('alice')).toEqual([{ name: 'topics/kept', size: 5, description: 'a description' }]);
        expect(await usageOf(desktop)).toEqual({ totalBytes: bytes('topics/kept') + 13 + bytes('kept\n'), entries: 1 });
        expect(await store.history('bob', 'topics/e')).toHaveLength(2);
        await expectCountersRight();
      });

      it('purges a live entry that was never dropped with includeLive, and leaves it without', async () => {
        await store.mutate(desktop, 'topics/e', put('live\n'), rules);
        const before = await snapshot('alice', ['topics/e']);

        expect(await store.purge('alice', 'topics/e', { includeLive: false })).toBe(0);
        expect(await snapshot('alice', ['topics/e'])).toEqual(before);

        expect(await store.purge('alice', 'topics/e', { includeLive: true })).toBe(1);
        expect(await store.get('alice', ['topics/e'])).toEqual([]);
      });

      it('counts 0 and changes nothing when no copy of the name exists for the user', async () => {
        await store.mutate(desktop, 'topics/kept', put('kept\n'), rules);
        await store.mutate(bob, 'topics/e', put('bob\n'), rules);
        const before = await snapshot('alice', ['topics/kept', 'topics/e']);

        expect(await store.purge('alice', 'topics/e', { includeLive: true })).toBe(0);

        expect(await snapshot('alice', ['topics/kept', 'topics/e'])).toEqual(before);
        expect(await store.get('bob', ['topics/e'])).toHaveLength(1);
      });

      it('leaves nothing to undrop, and a new entry of the name starts again at revision 1', async () => {
        await store.mutate(desktop, 'topics/e', put('old\n'), rules);
        await store.mutate(desktop, 'topics/e', appendLine('older'), rules);
        await store.mutate(desktop, 'topics/e', drop, rules);
        await store.purge('alice', 'topics/e', { includeLive: false });

        expect(await store.undrop(cli, 'topics/e', rules)).toEqual({ status: 'missing' });
        const { after } = await store.mutate(desktop, 'topics/e', put('fresh\n'), rules);
        expect(after?.revision).toBe(1);
        expect((await store.history('alice', 'topics/e')).map((record) => record.body)).toEqual(['fresh\n']);
      });
    });

    describe('purgeTrash', () => {
      it('purges, for every user, the copies dropped at or before the cutoff, and keeps the rest', async () => {
        const drops: Array<[Caller, string, number]> = [
          [desktop, 'topics/old', START + 1_000],
          [bob, 'topics/bobs-old', START + 2_000],
          [desktop, 'topics/cutoff', START + 3_000],
          [desktop, 'topics/recent', START + 3_001],
          [bob, 'topics/bobs-recent', START + 4_000],
        ];
        for (const [actor, name, at] of drops) {
          clock.time = at;
          await store.mutate(actor, name, put(`${name}\n`), rules);
          await store.mutate(actor, name, drop, rules);
        }
        await store.mutate(desktop, 'topics/live', put('live\n'), rules);

        expect(await store.purgeTrash(START + 3_000)).toBe(3);

        expect((await store.trash('alice')).map((entry) => entry.name)).toEqual(['topics/recent']);
        expect((await store.trash('bob')).map((entry) => entry.name)).toEqual(['topics/bobs-recent']);
        expect(await store.history('alice', 'topics/old')).toEqual([]);
        expect(await store.history('alice', 'topics/recent')).toHaveLength(2);
        expect((await store.index('alice')).map((row) => row.name)).toEqual(['topics/live']);
        expect(await store.purgeTrash(START + 3_000)).toBe(0);
        await expectCountersRight();
      });

      it('purges nothing from an empty trash', async () => {
        await store.mutate(desktop, 'topics/live', put('live\n'), rules);

        expect(await store.purgeTrash(START + 1_000_000)).toBe(0);
        expect(await store.get('alice', ['topics/live'])).toHaveLength(1);
      });
    });

    describe('mutateAll', () => {
      it("shows decide every live entry of the user, bodies included, and the user's usage, once", async () => {
        await store.mutate(desktop, 'topics/a', put('aaa\n', 'entry a'), rules);
        await store.mutate(desktop, 'topics/b', put('bb\n', 'entry b'), rules);
        await store.mutate(desktop, 'topics/gone', put('gone\n'), rules);
        await store.mutate(desktop, 'topics/gone', drop, rules);
        await store.mutate(bob, 'topics/bobs', put('bob\n'), rules);
        const live = await store.get('alice', ['topics/a', 'topics/b']);
        const calls: Array<Parameters<DecideAll>> = [];

        await store.mutateAll(
          cli,
          (entries, usage) => {
            calls.push([entries, usage]);
            return [];
          },
          rules,
        );

        expect(calls).toHaveLength(1);
        const [entries, usage] = calls[0]!;
        expect([...entries].sort((a, b) => a.name.localeCompare(b.name))).toEqual(
          live.sort((a, b) => a.name.localeCompare(b.name)),
        );
        expect(usage).toEqual({ totalBytes: 2 * (bytes('topics/a') + bytes('entry a')) + 7, entries: 2 });
      });

      it('shows decide the live entries by name, whatever order they were written in', async () => {
        for (const name of ['topics/c', 'topics/a', 'people/b'])
          await store.mutate(desktop, name, put(`${name}\n`), rules);
        let names: string[] = [];

        await store.mutateAll(
          cli,
          (entries) => {
            names = entries.map((entry) => entry.name);
            return [];
          },
          rules,
        );

        expect(names).toEqual(['people/b', 'topics/a', 'topics/c']);
      });

      it('undrops an entry first when asked (NamedChange.undrop), then applies its change unless it holds that text', async () => {
        await store.mutate(desktop, 'topics/same', put('same\n', 'Same'), rules);
        await store.mutate(desktop, 'topics/same', drop, rules);
        await store.mutate(desktop, 'topics/other', put('dropped text\n', 'Other'), rules);
        await store.mutate(desktop, 'topics/other', drop, rules);
        const restore = (body: string, description: string) =>
          ({ kind: 'put', operation: 'restore', description, body }) as const;

        await store.mutateAll(
          cli,
          () => [
            { name: 'topics/same', change: restore('same\n', 'Same'), undrop: true },
            { name: 'topics/other', change: restore('earlier text\n', 'Other'), undrop: true },
            { name: 'topics/never', change: restore('new\n', 'Never dropped'), undrop: true },
          ],
          { ...rules, note: 'revert r: test' },
        );

        const ops = async (name: string) =>
          (await store.history('alice', name)).map(({ operation, actor, note }) => [operation, actor, note]);
        expect(await ops('topics/same')).toEqual([
          ['create', 'claude-desktop', undefined],
          ['drop', 'claude-desktop', undefined],
          ['undrop', 'cli', 'revert r: test'],
        ]);
        expect(await ops('topics/other')).toEqual([
          ['create', 'claude-desktop', undefined],
          ['drop', 'claude-desktop', undefined],
          ['undrop', 'cli', 'revert r: test'],
          ['restore', 'cli', 'revert r: test'],
        ]);
        expect(await ops('topics/never')).toEqual([['restore', 'cli', 'revert r: test']]);
        expect((await store.get('alice', ['topics/other']))[0]?.body).toBe('earlier text\n');
        expect(await store.trash('alice')).toEqual([]);
        await expectCountersRight();
      });

      it('applies every change, each with one revision by the actor, and none for none', async () => {
        await store.mutate(desktop, 'topics/keep', put('keep\n'), rules);
        await store.mutate(desktop, 'topics/update', put('old\n'), rules);
        await store.mutate(desktop, 'topics/drop', put('drop me\n'), rules);
        clock.time = START + 9_000;

        await store.mutateAll(
          cli,
          () => [
            { name: 'topics/keep', change: { kind: 'none' } },
            { name: 'topics/update', change: { kind: 'put', operation: 'import', description: 'new', body: 'new\n' } },
            { name: 'topics/new', change: { kind: 'put', operation: 'import', description: 'created', body: 'hi\n' } },
            { name: 'topics/drop', change: { kind: 'drop' } },
          ],
          rules,
        );

        expect(await store.index('alice')).toEqual([
          { name: 'topics/keep', size: 5, description: 'a description' },
          { name: 'topics/new', size: 3, description: 'created' },
          { name: 'topics/update', size: 4, description: 'new' },
        ]);
        const last = async (name: string) => (await store.history('alice', name)).at(-1);
        expect(await last('topics/keep')).toMatchObject({ revision: 1, operation: 'create', actor: 'claude-desktop' });
        expect(await last('topics/update')).toEqual({
          revision: 2,
          operation: 'import',
          actor: 'cli',
          at: START + 9_000,
          description: 'new',
          body: 'new\n',
        });
        expect(await store.history('alice', 'topics/new')).toEqual([
          { revision: 1, operation: 'import', actor: 'cli', at: START + 9_000, description: 'created', body: 'hi\n' },
        ]);
        expect(await last('topics/drop')).toMatchObject({ revision: 2, operation: 'drop', actor: 'cli' });
        expect(await store.trash('alice')).toEqual([
          expect.objectContaining({ name: 'topics/drop', droppedAt: START + 9_000, droppedBy: 'cli' }),
        ]);
        expect(await usageOf(cli)).toEqual({
          totalBytes:
            bytes('topics/keep') + 13 + 5 + bytes('topics/new') + bytes('created') + 3 + bytes('topics/update') + 3 + 4,
          entries: 3,
        });
        await expectCountersRight();
      });

      it("touches only the acting user's entries", async () => {
        await store.mutate(desktop, 'topics/shared-name', put('alice\n'), rules);
        await store.mutate(bob, 'topics/shared-name', put('bob\n'), rules);
        const bobs = await snapshot('bob', ['topics/shared-name']);

        await store.mutateAll(
          cli,
          (entries) => entries.map((entry) => ({ name: entry.name, change: { kind: 'drop' } })),
          rules,
        );

        expect(await store.index('alice')).toEqual([]);
        expect(await snapshot('bob', ['topics/shared-name'])).toEqual(bobs);
      });

      it('changes nothing when decide throws, and rethrows the very error', async () => {
        await store.mutate(desktop, 'topics/a', put('a\n'), rules);
        await store.mutate(desktop, 'topics/b', put('b\n'), rules);
        await store.mutate(desktop, 'topics/gone', put('gone\n'), rules);
        await store.mutate(desktop, 'topics/gone', drop, rules);
        const names = ['topics/a', 'topics/b', 'topics/gone', 'topics/new'];
        const before = await snapshot('alice', names);
        const refusal = new Error('the import is too large');
        clock.time += 1_000;

        await expect(
          store.mutateAll(
            cli,
            (entries) => {
              if (entries.length > 0) throw refusal;
              return [];
            },
            rules,
          ),
        ).rejects.toBe(refusal);

        expect(await snapshot('alice', names)).toEqual(before);
      });

      it('loses no update when single writes race with it', async () => {
        const names = ['topics/a', 'topics/b', 'topics/c'];
        for (const name of names) await store.mutate(desktop, name, put('start\n'), rules);

        await Promise.all([
          ...names.map((name) => store.mutate(desktop, name, appendLine('before'), rules)),
          store.mutateAll(
            cli,
            (entries) =>
              entries.map((entry) => ({
                name: entry.name,
                change: {
                  kind: 'put',
                  operation: 'append',
                  description: entry.description,
                  body: `${entry.body}all\n`,
                },
              })),
            rules,
          ),
          ...names.map((name) => store.mutate(desktop, name, appendLine('after'), rules)),
        ]);

        for (const entry of await store.get('alice', names)) {
          expect(entry.body.split('\n').filter(Boolean).sort()).toEqual(['after', 'all', 'before', 'start']);
          expect(entry.revision).toBe(4);
          expect(await store.history('alice', entry.name)).toHaveLength(4);
        }
        expect(await usageOf(cli)).toEqual(await footprintOf('alice'));
        await expectCountersRight();
      });
    });

    describe('usage', () => {
      it('stays the footprint of the live entries, and the history its revisions, through drop, undrop, purge and mutateAll', async () => {
        const steps: Array<[string, () => Promise<unknown>]> = [
          ['create a', () => store.mutate(desktop, 'topics/a', put('0123456789'), rules)],
          ['create b', () => store.mutate(desktop, 'topics/b', put('日本語\n'), rules)],
          ['drop b', () => store.mutate(desktop, 'topics/b', drop, rules)],
          ['undrop b', () => store.undrop(cli, 'topics/b', rules)],
          ['undrop b again (missing)', () => store.undrop(cli, 'topics/b', rules)],
          ['drop b again', () => store.mutate(desktop, 'topics/b', drop, rules)],
          ['purge b from the trash', () => store.purge('alice', 'topics/b', { includeLive: false })],
          ['create c', () => store.mutate(desktop, 'topics/c', put('ccc'), rules)],
          ['purge live c', () => store.purge('alice', 'topics/c', { includeLive: true })],
          ['drop a', () => store.mutate(desktop, 'topics/a', drop, rules)],
          ['undrop a', () => store.undrop(cli, 'topics/a', rules)],
          [
            'mutateAll: grow a, create d',
            () =>
              store.mutateAll(
                cli,
                () => [
                  {
                    name: 'topics/a',
                    change: { kind: 'put', operation: 'import', description: 'a', body: 'x'.repeat(20) },
                  },
                  { name: 'topics/d', change: { kind: 'put', operation: 'import', description: 'd', body: 'dd' } },
                ],
                rules,
              ),
          ],
          [
            'mutateAll: drop everything',
            () =>
              store.mutateAll(cli, (entries) => entries.map(({ name }) => ({ name, change: { kind: 'drop' } })), rules),
          ],
          ['purgeTrash', () => store.purgeTrash(clock.time)],
        ];
        const totals: Record<string, string> = {};
        for (const [label, step] of steps) {
          clock.time += 1_000;
          await step();
          const usage = await usageOf(desktop);
          expect(usage, label).toEqual(await footprintOf('alice'));
          expect(await store.usage('alice'), label).toEqual(usage);
          const dump = await store.dump();
          expect(dump.users, label).toEqual(recount(dump));
          totals[label] = `${usage?.totalBytes} bytes, ${usage?.entries} entries`;
        }

        // Every entry here has a name of 8 bytes; put() describes it in 13 bytes, mutateAll in 1.
        expect(totals).toEqual({
          'create a': '31 bytes, 1 entries',
          'create b': '62 bytes, 2 entries',
          'drop b': '31 bytes, 1 entries',
          'undrop b': '62 bytes, 2 entries',
          'undrop b again (missing)': '62 bytes, 2 entries',
          'drop b again': '31 bytes, 1 entries',
          'purge b from the trash': '31 bytes, 1 entries',
          'create c': '55 bytes, 2 entries',
          'purge live c': '31 bytes, 1 entries',
          'drop a': '0 bytes, 0 entries',
          'undrop a': '31 bytes, 1 entries',
          'mutateAll: grow a, create d': '40 bytes, 2 entries',
          'mutateAll: drop everything': '0 bytes, 0 entries',
          purgeTrash: '0 bytes, 0 entries',
        });
      });
    });

    describe('history cap', () => {
      /** A body that makes a revision described by put() take exactly 100 bytes (13 + 87), or `total` bytes. */
      function sized(label: string, total = 100): string {
        return `${label.padEnd(total - 13 - 1, '.')}\n`;
      }

      /** What the test's writes are applied under: the shared rules with a history cap of the test's own. */
      let capRules: WriteRules;

      /** The test's store, its writes kept to at most `historyCap` bytes of each user's history (capRules). */
      async function capped(historyCap: number): Promise<Store> {
        capRules = { ...rules, historyCap };
        return store;
      }

      async function historyBytes(of: Store, user = 'alice'): Promise<number | undefined> {
        return (await of.dump()).users.find((usage) => usage.user === user)?.historyBytes;
      }

      async function revisionsOf(of: Store, name: string): Promise<number[]> {
        return (await of.history('alice', name)).map((record) => record.revision);
      }

      it('lets the history reach the cap, then trims the oldest revisions of any entry back to 90% of it', async () => {
        const capped500 = await capped(500);
        const steps: Array<[string, string]> = [
          ['topics/a', 'a one'],
          ['topics/b', 'b one'],
          ['topics/a', 'a two'],
          ['topics/b', 'b two'],
          ['topics/a', 'a three'],
        ];
        for (const [i, [name, label]] of steps.entries()) {
          clock.time = START + (i + 1) * 1_000;
          await capped500.mutate(desktop, name, put(sized(label)), capRules);
        }
        expect(await historyBytes(capped500)).toBe(500);
        expect(await revisionsOf(capped500, 'topics/a')).toEqual([1, 2, 3]);

        clock.time = START + 6_000;
        await capped500.mutate(desktop, 'topics/b', put(sized('b three')), capRules);

        expect(await revisionsOf(capped500, 'topics/a')).toEqual([2, 3]);
        expect(await revisionsOf(capped500, 'topics/b')).toEqual([2, 3]);
        expect(await historyBytes(capped500)).toBe(400);
        await expectCountersRight(capped500);
      });

      it('then purges the oldest dropped entries whole, and never the latest revision of a live entry', async () => {
        const capped1000 = await capped(1_000);
        const at = async (seconds: number, name: string, decide: Parameters<Store['mutate']>[2]) => {
          clock.time = START + seconds * 1_000;
          await capped1000.mutate(desktop, name, decide, capRules);
        };
        await at(1, 'topics/x', put(sized('x', 250)));
        await at(2, 'topics/x', drop);
        await at(3, 'topics/y', put(sized('y')));
        await at(4, 'topics/y', drop);
        for (const [i, name] of ['topics/z', 'topics/w', 'topics/v', 'topics/u'].entries()) {
          await at(5 + i, name, put(sized(name)));
        }
        // 1,100 bytes: the oldest revision that is not the latest of its entry, x's creation, goes.
        expect(await revisionsOf(capped1000, 'topics/x')).toEqual([2]);
        expect(await revisionsOf(capped1000, 'topics/y')).toEqual([1, 2]);
        expect(await historyBytes(capped1000)).toBe(850);

        await at(9, 'topics/s', put(sized('s')));
        await at(10, 'topics/q', put(sized('q')));
        // 1,050 bytes: y's creation is the last such revision; then x, the oldest in the trash, goes whole.
        expect((await capped1000.trash('alice')).map((entry) => entry.name)).toEqual(['topics/y']);
        expect(await capped1000.history('alice', 'topics/x')).toEqual([]);
        expect(await revisionsOf(capped1000, 'topics/y')).toEqual([2]);
        expect(await historyBytes(capped1000)).toBe(700);

        const live = ['topics/z', 'topics/w', 'topics/v', 'topics/u', 'topics/s', 'topics/q'];
        for (const [i, name] of ['topics/p1', 'topics/p2', 'topics/p3', 'topics/p4', 'topics/p5'].entries()) {
          await at(11 + i, name, put(sized(name)));
          live.push(name);
        }
        // The trash is gone too; what is left, each live entry's latest revision, stays even past the cap.
        expect(await capped1000.trash('alice')).toEqual([]);
        for (const name of live) expect(await revisionsOf(capped1000, name), name).toEqual([1]);
        expect(await historyBytes(capped1000)).toBe(1_100);
        await expectCountersRight(capped1000);
      });

      it('trims the revision a drop recorded once the entry is undropped, like any older revision', async () => {
        const capped500 = await capped(500);
        clock.time = START + 1_000;
        await capped500.mutate(desktop, 'topics/a', put(sized('a')), capRules);
        clock.time = START + 2_000;
        await capped500.mutate(desktop, 'topics/a', drop, capRules);
        clock.time = START + 3_000;
        await capped500.undrop(cli, 'topics/a', capRules);
        for (const [i, name] of ['topics/b', 'topics/c', 'topics/d'].entries()) {
          clock.time = START + (4 + i) * 1_000;
          await capped500.mutate(desktop, name, put(sized(name)), capRules);
        }

        expect(await revisionsOf(capped500, 'topics/a')).toEqual([3]);
        expect(await historyBytes(capped500)).toBe(400);
        await expectCountersRight(capped500);
      });

      it("stays within the cap through hundreds of changes, keeping each live entry's latest revision", async () => {
        const cap = 3_000;
        const capped3000 = await capped(cap);
        const names = ['topics/e0', 'topics/e1', 'topics/e2', 'topics/e3', 'topics/e4'];
        let seed = 7;
        const random = (below: number) => {
          seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
          return seed % below;
        };
        let peak = 0;
        for (let step = 0; step < 300; step++) {
          clock.time = START + step * 1_000;
          const name = names[random(names.length)]!;
          const choice = random(10);
          if (choice < 6) {
            await capped3000.mutate(
              desktop,
              name,
              put(sized(`${name} ${step}`, 30 + random(200)), `d${step}`),
              capRules,
            );
          } else if (choice < 8) {
            await capped3000.mutate(desktop, name, drop, capRules);
          } else if (choice < 9) {
            await capped3000.undrop(cli, name, capRules);
          } else {
            await capped3000.mutateAll(
              cli,
              (entries) =>
                entries.map((entry) => ({
                  name: entry.name,
                  change: { kind: 'put', operation: 'import', description: entry.description, body: `${step}\n` },
                })),
              capRules,
            );
          }
          const dump = await capped3000.dump();
          expect(dump.users, `step ${step}`).toEqual(recount(dump));
          const history = dump.users[0]?.historyBytes ?? 0;
          expect(history, `step ${step}`).toBeLessThanOrEqual(cap);
          peak = Math.max(peak, history);
          for (const entry of dump.entries.filter((e) => e.droppedAt === null)) {
            const { revision, description, body } = entry.revisions.at(-1)!;
            expect({ revision, description, body }, `step ${step}`).toEqual({
              revision: entry.revision,
              description: entry.description,
              body: entry.body,
            });
          }
        }
        expect(peak).toBeGreaterThan(0.9 * cap);
      });
    });
  });
}
