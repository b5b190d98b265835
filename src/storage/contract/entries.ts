/**
 * The entries part of the Store contract (EntryStore: index, usage, get, mutate,
 * mutateAll), written once and run against every backend by `describeStoreContract`
 * (index.ts), so each proves the same behaviour the Memory service relies on. Nothing
 * here may know which backend it is testing.
 */

import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Caller, Decide, Store, StoredEntry, Usage } from '../../memory/port.js';
import { appendLine, bytes, drop, footprint, none, type OpenStore, put, START, storesPerTest } from './setup.js';

const alice: Caller = { user: 'alice', label: 'contract-test' };
const bob: Caller = { user: 'bob', label: 'contract-test' };

export function describeEntryContract(label: string, open: OpenStore): void {
  describe(`Store entries contract: ${label}`, () => {
    const { clock, rules, keep } = storesPerTest();
    let store: Store;

    beforeEach(async () => {
      store = await keep(open());
    });

    /** The usage `decide` is shown for `actor` right now, read through a mutate that changes nothing. */
    async function usageOf(actor: Caller): Promise<Usage> {
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
      return seen!;
    }

    /** The usage the user's index shows: names, descriptions and sizes of the live entries, and their count. */
    async function footprintOf(user: string): Promise<Usage> {
      return footprint(await store.index(user));
    }

    /** Everything observable about a user, to assert that a refused change left it alone. */
    async function snapshot(actor: Caller, names: readonly string[]) {
      const entries = await store.get(actor.user, names);
      return {
        index: await store.index(actor.user),
        entries: entries.sort((a, b) => a.name.localeCompare(b.name)),
        usage: await usageOf(actor),
      };
    }

    describe('index', () => {
      it('is empty for a user who has written nothing', async () => {
        expect(await store.index('alice')).toEqual([]);
      });

      it('lists live entries sorted by name in code-point order, with name, size and description only', async () => {
        const names = [
          'topics/b',
          'topics/ab',
          'topics/a_b',
          'topics/a0',
          'topics/a.b',
          'topics/a-z',
          'a/x',
          'a.b/x',
          'people/zed',
        ];
        for (const name of names) await store.mutate(alice, name, put(`${name} body\n`, `about ${name}`), rules);

        const rows = await store.index('alice');

        expect(rows.map((row) => row.name)).toEqual([
          'a.b/x',
          'a/x',
          'people/zed',
          'topics/a-z',
          'topics/a.b',
          'topics/a0',
          'topics/a_b',
          'topics/ab',
          'topics/b',
        ]);
        for (const row of rows) {
          expect(Object.keys(row).sort()).toEqual(['description', 'name', 'size']);
          expect(row).toEqual({ name: row.name, size: bytes(`${row.name} body\n`), description: `about ${row.name}` });
        }
      });

      it('reports size as the UTF-8 byte length of the body, not its length in characters', async () => {
        const body = 'héllo ✓ 🙂\n';
        await store.mutate(alice, 'topics/bytes', put(body), rules);

        expect(body.length).toBe(11);
        expect(await store.index('alice')).toEqual([{ name: 'topics/bytes', size: 16, description: 'a description' }]);
      });

      it('leaves out dropped entries', async () => {
        await store.mutate(alice, 'topics/kept', put('kept\n'), rules);
        await store.mutate(alice, 'topics/gone', put('gone\n'), rules);
        await store.mutate(alice, 'topics/gone', drop, rules);

        expect((await store.index('alice')).map((row) => row.name)).toEqual(['topics/kept']);
      });
    });

    describe('overview', () => {
      it('is the index with each entry’s last change: time, revision and actor, dropped entries and other users left out', async () => {
        const model: Caller = { user: 'alice', label: 'model' };
        await store.mutate(alice, 'topics/b', put('b\n', 'about b'), rules);
        clock.time = START + 1000;
        await store.mutate(model, 'topics/b', appendLine('more'), rules);
        await store.mutate(alice, 'topics/a', put('a\n', 'about a'), rules);
        await store.mutate(alice, 'topics/gone', put('gone\n'), rules);
        await store.mutate(alice, 'topics/gone', drop, rules);
        await store.mutate(bob, 'topics/bob', put('bob\n'), rules);

        expect((await store.overview('alice')).entries).toEqual([
          {
            name: 'topics/a',
            size: 2,
            description: 'about a',
            created: START + 1000,
            updated: START + 1000,
            revision: 1,
            actor: 'contract-test',
          },
          {
            name: 'topics/b',
            size: 7,
            description: 'about b',
            created: START,
            updated: START + 1000,
            revision: 2,
            actor: 'model',
          },
        ]);
        expect((await store.overview('carol')).entries).toEqual([]);
      });

      it('lists an entry whose latest revision is not kept (a history limit of 0), by no actor', async () => {
        await store.mutate(alice, 'topics/kept', put('kept\n', 'about kept'), { ...rules, historyLimit: 0 });

        expect((await store.overview('alice')).entries).toEqual([
          {
            name: 'topics/kept',
            size: 5,
            description: 'about kept',
            created: START,
            updated: START,
            revision: 1,
            actor: '',
          },
        ]);
        expect(await store.index('alice')).toEqual([{ name: 'topics/kept', size: 5, description: 'about kept' }]);
      });
    });

    describe('recordOpened', () => {
      const HOUR = 3_600_000;

      /** When each of the user's live entries was last opened, by name (undefined: not since openings are recorded). */
      async function openedOf(user: string): Promise<Record<string, number | undefined>> {
        const { entries } = await store.overview(user);
        return Object.fromEntries(entries.map((row) => [row.name, row.opened]));
      }

      it('starts with no entry opened, and says since when openings are recorded', async () => {
        const before = Date.now();
        await store.mutate(alice, 'topics/a', put('a\n'), rules);

        const overview = await store.overview('alice');

        expect(overview.entries.map((row) => row.opened)).toEqual([undefined]);
        expect(overview.openedSince).toBeGreaterThan(0);
        // A new store records openings from its creation (moments before this test's first write).
        expect(overview.openedSince).toBeLessThanOrEqual(Date.now());
        expect(overview.openedSince).toBeGreaterThan(before - 60_000);
      });

      it('notes the time on live entries only: dropped, missing and other users’ names are passed over', async () => {
        await store.mutate(alice, 'topics/a', put('a\n'), rules);
        await store.mutate(alice, 'topics/b', put('b\n'), rules);
        await store.mutate(alice, 'topics/gone', put('gone\n'), rules);
        await store.mutate(alice, 'topics/gone', drop, rules);
        await store.mutate(bob, 'topics/a', put('bob a\n'), rules);

        await store.recordOpened(
          [
            { user: 'alice', name: 'topics/a', at: START + 5 },
            { user: 'alice', name: 'topics/gone', at: START + 5 },
            { user: 'alice', name: 'topics/missing', at: START + 5 },
            { user: 'carol', name: 'topics/a', at: START + 5 },
          ],
          HOUR,
        );

        expect(await openedOf('alice')).toEqual({ 'topics/a': START + 5, 'topics/b': undefined });
        expect(await openedOf('bob')).toEqual({ 'topics/a': undefined });
        await store.mutate(alice, 'topics/gone', put('back\n'), rules);
        expect((await openedOf('alice'))['topics/gone']).toBeUndefined();
        await store.recordOpened([], HOUR);
      });

      it('keeps the time it has unless it is older than the gap, and never moves it back', async () => {
        await store.mutate(alice, 'topics/a', put('a\n'), rules);
        await store.recordOpened([{ user: 'alice', name: 'topics/a', at: START + HOUR }], HOUR);

        await store.recordOpened([{ user: 'alice', name: 'topics/a', at: START + 2 * HOUR - 1 }], HOUR);
        expect(await openedOf('alice')).toEqual({ 'topics/a': START + HOUR });
        await store.recordOpened([{ user: 'alice', name: 'topics/a', at: START }], 0);
        expect(await openedOf('alice')).toEqual({ 'topics/a': START + HOUR });
        await store.recordOpened([{ user: 'alice', name: 'topics/a', at: START + 2 * HOUR + 1 }], HOUR);
        expect(await openedOf('alice')).toEqual({ 'topics/a': START + 2 * HOUR + 1 });
      });

      it('is bookkeeping, not a change: no revision, the entry and its history as they were, no watcher told', async () => {
        await store.mutate(alice, 'topics/a', put('a\n'), rules);
        const told: unknown[] = [];
        const stop = await store.watch('alice', (change) => told.push(change));
        const before = {
          entries: await store.get('alice', ['topics/a']),
          history: await store.history('alice', 'topics/a'),
          activity: await store.activity('alice', { limit: 10 }),
          index: await store.index('alice'),
          usage: await store.usage('alice'),
        };

        await store.recordOpened([{ user: 'alice', name: 'topics/a', at: START + 10 }], HOUR);

        expect({
          entries: await store.get('alice', ['topics/a']),
          history: await store.history('alice', 'topics/a'),
          activity: await store.activity('alice', { limit: 10 }),
          index: await store.index('alice'),
          usage: await store.usage('alice'),
        }).toEqual(before);
        const { entries } = await store.overview('alice');
        expect(entries[0]).toMatchObject({ updated: START, revision: 1, opened: START + 10 });
        // A change after it is told, and is the only one told.
        await store.mutate(alice, 'topics/a', appendLine('more'), rules);
        await vi.waitFor(() => expect(told).toHaveLength(1));
        stop();
        expect(told[0]).toMatchObject({ name: 'topics/a', revision: 2 });
        // The entry's opening stays through a change of its text.
        expect((await openedOf('alice'))['topics/a']).toBe(START + 10);
      });
    });

    describe('get', () => {
      it('returns the live entries among the names, with every stored field, and skips the rest', async () => {
        await store.mutate(alice, 'topics/a', put('body a\n', 'entry a'), rules);
        await store.mutate(alice, 'topics/b', put('body b\n', 'entry b'), rules);
        await store.mutate(alice, 'topics/dropped', put('dropped\n'), rules);
        await store.mutate(alice, 'topics/dropped', drop, rules);

        const entries = await store.get('alice', ['topics/missing', 'topics/dropped', 'topics/b', 'topics/a']);

        expect(entries.sort((x, y) => x.name.localeCompare(y.name))).toEqual([
          {
            name: 'topics/a',
            description: 'entry a',
            body: 'body a\n',
            size: 7,
            created: START,
            updated: START,
            revision: 1,
          },
          {
            name: 'topics/b',
            description: 'entry b',
            body: 'body b\n',
            size: 7,
            created: START,
            updated: START,
            revision: 1,
          },
        ]);
      });

      it('returns nothing for no names or only unknown names', async () => {
        await store.mutate(alice, 'topics/a', put('a\n'), rules);

        expect(await store.get('alice', [])).toEqual([]);
        expect(await store.get('alice', ['topics/nope', 'people/nobody'])).toEqual([]);
      });
    });

    describe('mutate', () => {
      it('creates an entry: before is undefined, after is revision 1 created and updated now', async () => {
        const seen: Array<[StoredEntry | undefined, Usage]> = [];

        const result = await store.mutate(
          alice,
          'topics/new',
          (current, usage) => {
            seen.push([current, usage]);
            return { kind: 'put', operation: 'create', description: 'new entry', body: 'first line\n' };
          },
          rules,
        );

        const expected: StoredEntry = {
          name: 'topics/new',
          description: 'new entry',
          body: 'first line\n',
          size: 11,
          created: START,
          updated: START,
          revision: 1,
        };
        expect(seen).toEqual([[undefined, { totalBytes: 0, entries: 0 }]]);
        expect(result).toEqual({ before: undefined, after: expected });
        expect(await store.get('alice', ['topics/new'])).toEqual([expected]);
      });

      it('updates an entry: revision +1, created kept, updated moves to now, before is the old entry', async () => {
        const created = await store.mutate(alice, 'topics/e', put('one\n', 'first'), rules);
        clock.time = START + 60_000;
        let shown: StoredEntry | undefined;

        const result = await store.mutate(
          alice,
          'topics/e',
          (current) => {
            shown = current;
            return { kind: 'put', operation: 'append', description: 'second', body: 'one\ntwo\n' };
          },
          rules,
        );

        const expected: StoredEntry = {
          name: 'topics/e',
          description: 'second',
          body: 'one\ntwo\n',
          size: 8,
          created: START,
          updated: START + 60_000,
          revision: 2,
        };
        expect(shown).toEqual(created.after);
        expect(result).toEqual({ before: created.after, after: expected });
        expect(await store.get('alice', ['topics/e'])).toEqual([expected]);
      });

      it("'none' changes nothing: no revision bump, updated stays, before and after are the current entry", async () => {
        const { after: current } = await store.mutate(alice, 'topics/e', put('same\n'), rules);
        clock.time = START + 60_000;

        const result = await store.mutate(alice, 'topics/e', none, rules);

        expect(result).toEqual({ before: current, after: current });
        expect(await store.get('alice', ['topics/e'])).toEqual([current]);
      });

      it("'none' on a missing name creates nothing", async () => {
        const result = await store.mutate(alice, 'topics/never', none, rules);

        expect(result).toEqual({ before: undefined, after: undefined });
        expect(await store.index('alice')).toEqual([]);
        expect(await store.get('alice', ['topics/never'])).toEqual([]);
      });

      it('numbers revisions 1 on create and +1 per change, skipping changes that are none', async () => {
        const revisions: Array<number | undefined> = [];
        const steps: Decide[] = [
          put('a\n'),
          appendLine('b'),
          none,
          put('c\n', 'new description'),
          none,
          appendLine('d'),
        ];
        for (const step of steps) {
          clock.time += 1_000;
          revisions.push((await store.mutate(alice, 'topics/e', step, rules)).after?.revision);
        }

        expect(revisions).toEqual([1, 2, 2, 3, 3, 4]);
        const [entry] = await store.get('alice', ['topics/e']);
        expect(entry).toMatchObject({ body: 'c\nd\n', revision: 4, created: START + 1_000, updated: START + 6_000 });
      });

      it('drops an entry: before is the entry, after is undefined, and it is gone from get and index', async () => {
        const { after: entry } = await store.mutate(alice, 'topics/e', put('doomed\n'), rules);

        const result = await store.mutate(alice, 'topics/e', drop, rules);

        expect(result).toEqual({ before: entry, after: undefined });
        expect(await store.get('alice', ['topics/e'])).toEqual([]);
        expect(await store.index('alice')).toEqual([]);
      });

      it('writes a dropped name again as a new entry: revision 1, created now', async () => {
        await store.mutate(alice, 'topics/e', put('old life\n'), rules);
        await store.mutate(alice, 'topics/e', appendLine('more'), rules);
        await store.mutate(alice, 'topics/e', drop, rules);
        clock.time = START + 60_000;

        const result = await store.mutate(alice, 'topics/e', put('new life\n'), rules);

        expect(result.before).toBeUndefined();
        expect(result.after).toMatchObject({ body: 'new life\n', revision: 1, created: START + 60_000 });
        expect(await store.index('alice')).toEqual([{ name: 'topics/e', size: 9, description: 'a description' }]);
      });
    });

    describe('usage', () => {
      it('counts the names, descriptions and bodies of the live entries, and how many, after every kind of change', async () => {
        const steps: Array<[string, Decide]> = [
          ['topics/a', put('0123456789')],
          ['topics/b', put('日本語のテキスト\n')],
          ['topics/a', appendLine(' and more')],
          ['topics/c', put('')],
          ['topics/a', put('x')],
          ['topics/b', drop],
          ['topics/c', put('🙂🙂\n')],
          ['topics/a', none],
        ];
        const usages: Usage[] = [];
        for (const [name, decide] of steps) {
          await store.mutate(alice, name, decide, rules);
          const usage = await usageOf(alice);
          expect(usage).toEqual(await footprintOf('alice'));
          expect(await store.usage('alice')).toEqual(usage);
          usages.push(usage);
        }

        // Each entry adds its name (8 bytes) and description (13) to its body's size.
        const entry = bytes('topics/a') + bytes('a description');
        expect(usages).toEqual([
          { totalBytes: entry + 10, entries: 1 },
          { totalBytes: 2 * entry + 35, entries: 2 },
          { totalBytes: 2 * entry + 45, entries: 2 },
          { totalBytes: 3 * entry + 45, entries: 3 },
          { totalBytes: 3 * entry + 26, entries: 3 },
          { totalBytes: 2 * entry + 1, entries: 2 },
          { totalBytes: 2 * entry + 10, entries: 2 },
          { totalBytes: 2 * entry + 10, entries: 2 },
        ]);
      });

      it('counts a new description, and only the live entries of the user', async () => {
        await store.mutate(alice, 'topics/a', put('body\n', 'short'), rules);
        await store.mutate(alice, 'topics/a', put('body\n', 'a much longer description, ✓'), rules);
        await store.mutate(alice, 'topics/gone', put('gone\n'), rules);
        await store.mutate(alice, 'topics/gone', drop, rules);
        await store.mutate(bob, 'topics/b', put('bob\n'), rules);

        const usage = { totalBytes: bytes('topics/a') + bytes('a much longer description, ✓') + 5, entries: 1 };
        expect(await usageOf(alice)).toEqual(usage);
        expect(await store.usage('alice')).toEqual(usage);
      });

      it('is nothing for a user who has written nothing', async () => {
        await store.mutate(bob, 'topics/b', put('bob\n'), rules);

        expect(await store.usage('alice')).toEqual({ totalBytes: 0, entries: 0 });
      });

      it('is what decide is shown, before the change it decides', async () => {
        await store.mutate(alice, 'topics/a', put('12345'), rules);
        await store.mutate(alice, 'topics/b', put('123'), rules);
        let shown: Usage | undefined;

        await store.mutate(
          alice,
          'topics/a',
          (current, usage) => {
            shown = usage;
            return { kind: 'put', operation: 'append', description: current!.description, body: 'much longer now' };
          },
          rules,
        );

        const entry = bytes('topics/a') + bytes('a description');
        expect(shown).toEqual({ totalBytes: 2 * entry + 8, entries: 2 });
        expect(await usageOf(alice)).toEqual({ totalBytes: 2 * entry + 18, entries: 2 });
      });
    });

    describe('users', () => {
      it('lists every user the store keeps anything of, live or in the trash, by name, and no one whose memory was purged', async () => {
        const carol: Caller = { user: 'carol', label: 'contract-test' };
        await store.mutate(bob, 'topics/b', put('bob\n'), rules);
        await store.mutate(bob, 'topics/b', drop, rules);
        await store.mutate(alice, 'topics/a', put('12345'), rules);
        await store.mutate(alice, 'topics/c', put('123'), rules);
        await store.mutate(carol, 'topics/gone', put('gone\n'), rules);
        await store.purge('carol', 'topics/gone', { includeLive: true });
        await usageOf({ user: 'dave', label: 'contract-test' });

        const users = await store.users();

        expect(users.map(({ user, totalBytes, entries }) => ({ user, totalBytes, entries }))).toEqual([
          { user: 'alice', ...(await store.usage('alice')) },
          { user: 'bob', totalBytes: 0, entries: 0 },
        ]);
        expect(users.every((usage) => usage.historyBytes > 0)).toBe(true);
      });

      it('is empty for an empty store', async () => {
        expect(await store.users()).toEqual([]);
      });
    });

    describe('a decide that throws', () => {
      it('propagates the very error and changes nothing in an existing entry', async () => {
        await store.mutate(alice, 'topics/a', put('keep me\n', 'keep'), rules);
        await store.mutate(alice, 'topics/b', put('other\n'), rules);
        const before = await snapshot(alice, ['topics/a', 'topics/b']);
        const refusal = new Error('refused by decide');
        clock.time = START + 60_000;

        const attempt = store.mutate(
          alice,
          'topics/a',
          () => {
            throw refusal;
          },
          rules,
        );

        await expect(attempt).rejects.toBe(refusal);
        expect(await snapshot(alice, ['topics/a', 'topics/b'])).toEqual(before);
      });

      it('propagates the very error and creates nothing for a new name', async () => {
        await store.mutate(alice, 'topics/a', put('existing\n'), rules);
        const before = await snapshot(alice, ['topics/a', 'topics/new']);
        const refusal = new RangeError('too large');

        await expect(
          store.mutate(
            alice,
            'topics/new',
            () => {
              throw refusal;
            },
            rules,
          ),
        ).rejects.toBe(refusal);

        expect(await snapshot(alice, ['topics/a', 'topics/new'])).toEqual(before);
      });

      it('leaves the store working: the next change numbers on from the last one', async () => {
        await store.mutate(alice, 'topics/a', put('one\n'), rules);
        await expect(
          store.mutate(
            alice,
            'topics/a',
            () => {
              throw new Error('no');
            },
            rules,
          ),
        ).rejects.toThrow('no');

        const result = await store.mutate(alice, 'topics/a', appendLine('two'), rules);

        expect(result.after).toMatchObject({ body: 'one\ntwo\n', revision: 2 });
      });
    });

    describe('users', () => {
      it('are isolated: one name, two users, two bodies, two indexes, two usages', async () => {
        await store.mutate(alice, 'people/sam', put("alice's notes on Sam\n", 'by alice'), rules);
        await store.mutate(bob, 'people/sam', put("bob's\n", 'by bob'), rules);
        await store.mutate(bob, 'topics/bob-only', put('private to bob\n'), rules);

        expect(await store.get('alice', ['people/sam', 'topics/bob-only'])).toEqual([
          expect.objectContaining({ body: "alice's notes on Sam\n", description: 'by alice', revision: 1 }),
        ]);
        expect(await store.index('alice')).toEqual([{ name: 'people/sam', size: 21, description: 'by alice' }]);
        expect((await store.index('bob')).map((row) => row.name)).toEqual(['people/sam', 'topics/bob-only']);
        expect(await usageOf(alice)).toEqual({ totalBytes: bytes('people/sam') + bytes('by alice') + 21, entries: 1 });
        expect(await usageOf(bob)).toEqual({
          totalBytes:
            bytes('people/sam') + bytes('by bob') + 6 + bytes('topics/bob-only') + bytes('a description') + 15,
          entries: 2,
        });
      });

      it("are isolated in change: dropping or updating one user's entry leaves the other's alone", async () => {
        await store.mutate(alice, 'people/sam', put('alice\n'), rules);
        const { after: bobs } = await store.mutate(bob, 'people/sam', put('bob\n'), rules);

        await store.mutate(alice, 'people/sam', appendLine('more'), rules);
        await store.mutate(alice, 'people/sam', drop, rules);

        expect(await store.get('bob', ['people/sam'])).toEqual([bobs]);
        expect(await usageOf(bob)).toEqual({
          totalBytes: bytes('people/sam') + bytes('a description') + 4,
          entries: 1,
        });
        expect(await usageOf(alice)).toEqual({ totalBytes: 0, entries: 0 });
      });
    });

    describe('concurrency', () => {
      it('loses no update among 200 concurrent appends to one entry', async () => {
        const lines = Array.from({ length: 200 }, (_, i) => `line ${i}`);

        const results = await Promise.all(
          lines.map((line) => store.mutate(alice, 'topics/log', appendLine(line), rules)),
        );

        const [entry] = await store.get('alice', ['topics/log']);
        const written = entry!.body.split('\n').filter((line) => line !== '');
        expect(written.sort()).toEqual([...lines].sort());
        expect(entry!.revision).toBe(200);
        expect(entry!.size).toBe(bytes(entry!.body));
        expect(results.map((result) => result.after!.revision).sort((a, b) => a - b)).toEqual(
          lines.map((_, i) => i + 1),
        );
        expect(await usageOf(alice)).toEqual({
          totalBytes: bytes('topics/log') + bytes('appended lines') + entry!.size,
          entries: 1,
        });
      });

      it('counts usage right when a new user creates 50 entries at once', async () => {
        const names = Array.from({ length: 50 }, (_, i) => `topics/entry-${i}`);

        await Promise.all(names.map((name, i) => store.mutate(alice, name, put('x'.repeat(i + 1)), rules)));

        expect((await store.index('alice')).length).toBe(50);
        const nameBytes = names.reduce((sum, name) => sum + bytes(name), 0);
        expect(await usageOf(alice)).toEqual({
          totalBytes: nameBytes + 50 * bytes('a description') + (50 * 51) / 2,
          entries: 50,
        });
        expect(await usageOf(alice)).toEqual(await footprintOf('alice'));
      });
    });

    describe('bodies', () => {
      it('round-trip multi-byte text, control characters and line endings exactly', async () => {
        const body = [
          'Ünïcödé: naïve café, Straße',
          'CJK: 日本語 中文 한국어',
          'RTL: עברית العربية',
          'emoji: 🙂 👩‍👩‍👧 🏳️‍🌈 family e\u0301 (combining)',
          'tab\there, trailing spaces   ',
          'windows line\r',
          'no final newline',
        ].join('\n');
        const description = 'Ünïcödé 🙂 description';

        const { after } = await store.mutate(alice, 'topics/unicode', put(body, description), rules);
        const [entry] = await store.get('alice', ['topics/unicode']);

        expect(after?.body).toBe(body);
        expect(entry?.body).toBe(body);
        expect(entry?.description).toBe(description);
        expect(entry?.size).toBe(bytes(body));
        expect(await store.index('alice')).toEqual([{ name: 'topics/unicode', size: bytes(body), description }]);
      });

      it('round-trip an empty body, size 0', async () => {
        await store.mutate(alice, 'topics/empty', put('', 'only a description'), rules);

        expect(await store.get('alice', ['topics/empty'])).toEqual([expect.objectContaining({ body: '', size: 0 })]);
      });

      it('round-trip a 16 KiB body', async () => {
        let body = '';
        for (let i = 0; bytes(body) < 16_384 - 40; i++) body += `line ${i}: ✓ ünïcödé 🙂\n`;
        body += 'x'.repeat(16_384 - bytes(body));

        await store.mutate(alice, 'topics/large', put(body), rules);
        const [entry] = await store.get('alice', ['topics/large']);

        expect(bytes(body)).toBe(16_384);
        expect(entry?.body).toBe(body);
        expect(entry?.size).toBe(16_384);
      });
    });
  });
}
