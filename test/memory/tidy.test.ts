/**
 * Tidy (memory/tidy.ts) on SQLite, PostgreSQL and in process: possible duplicates listed
 * with what the person needs to choose (sizes, revisions, times); a merge exact to the
 * byte, one note on both revisions, `from` in the trash; the merge undone by revert's undo,
 * byte for byte; and every refusal — the same entry, a missing one, a revision that moved
 * (before the transaction or inside it), the entry cap, the memory's cap, a read-only
 * caller, a group that cannot be written, a bad limit — changing nothing. On the
 * in-process store: bodies read 200 at a time with the event loop let run between, and a
 * memory of 10,000 entries listed within the work bounds (counted, not timed).
 */

import { describe, expect, it, onTestFinished } from 'vitest';
import { type Caller, createMemory, type Memory } from '../../src/memory/memory.js';
import { MAX_CANDIDATES, MAX_VISITS } from '../../src/memory/model/near-duplicates.js';
import type { Policy } from '../../src/memory/model/policy.js';
import type { Store } from '../../src/memory/port.js';
import { BATCH } from '../../src/memory/tidy.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';
import { openPostgresStore } from '../../src/storage/postgres/index.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { findTestPostgres, schemaPerTest } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';
import { expectEngramError, snapshot } from './fixtures.js';

const START = Date.UTC(2026, 5, 1);
const ME: Caller = { user: 'alice', label: 'cli' };
const VIEWER: Caller = { user: 'alice', label: 'viewer', readOnly: true };

const server = await findTestPostgres();
const pgSchema = server ? schemaPerTest(server) : undefined;

const BACKENDS: [string, (() => Promise<Store>) | undefined][] = [
  ['in-process', async () => openMemoryStore()],
  ['SQLite', async () => openSqliteStore({ path: tempDir().file('m.db') })],
  ['PostgreSQL', pgSchema && (async () => openPostgresStore({ connectionString: (await pgSchema()).url }))],
];

const ALPHA_BODY = 'Goals: ship the alpha by June.\nOwner: Ana — café ☕ at 9.\n';
const COPY_BODY = 'Alpha notes.\n\nOwner: Ana.\n';

for (const [label, open] of BACKENDS) {
  describe.skipIf(!open)(`tidy on ${label}`, () => {
    async function memoryOf(policy: Partial<Policy> = {}, wrap: (store: Store) => Store = (store) => store) {
      const store = await open!();
      onTestFinished(() => store.close());
      const clock = { now: START };
      const memory = createMemory({ store: wrap(store), policy, now: () => clock.now++ });
      await memory.write(ME, { name: 'areas/alpha', description: 'The alpha project', new: ALPHA_BODY });
      await memory.write(ME, { name: 'areas/alphas', description: 'Alpha project notes', new: COPY_BODY });
      await memory.write(ME, { name: 'topics/coffee', description: 'Coffee', new: 'Flat white.\n' });
      return { memory, store, clock };
    }

    /** The current revisions of the two entries, as a person would have looked at them. */
    async function looked(memory: Memory, from: string, into: string) {
      const entries = await memory.store.get(ME.user, [from, into]);
      const revision = (name: string) => entries.find((entry) => entry.name === name)?.revision ?? 0;
      return { from, into, fromRevision: revision(from), intoRevision: revision(into) };
    }

    it('lists the close pair with each side’s description, size, revision and time', async () => {
      const { memory } = await memoryOf();
      const found = await memory.tidy.duplicates(ME);
      expect(found.examined).toBe(3);
      expect(found.truncated).toBe(false);
      expect(found.pairs).toHaveLength(1);
      const [pair] = found.pairs;
      expect(pair?.reasons).toEqual(['name']);
      expect(pair?.a).toEqual({
        name: 'areas/alpha',
        description: 'The alpha project',
        size: Buffer.byteLength(ALPHA_BODY),
        revision: 1,
        updated: START,
      });
      expect(pair?.b).toMatchObject({ name: 'areas/alphas', revision: 1, size: Buffer.byteLength(COPY_BODY) });
      expect(found.work.characters).toBe(ALPHA_BODY.length + COPY_BODY.length + 'Flat white.\n'.length);
    });

    it('merges exactly, in one history event, and the undo brings both back byte for byte', async () => {
      const { memory } = await memoryOf();
      const before = await snapshot(memory, ME.user);
      const result = await memory.tidy.merge(ME, await looked(memory, 'areas/alphas', 'areas/alpha'));
      expect(result).toEqual({
        id: expect.stringMatching(/^[0-9a-z]{1,12}-[0-9a-f]{8}$/),
        note: `merge ${result.id}: areas/alphas into areas/alpha`,
        into: 'areas/alpha',
        dropped: 'areas/alphas',
      });
      const [into] = await memory.store.get(ME.user, ['areas/alpha']);
      expect(into?.description).toBe('The alpha project');
      expect(into?.body).toBe(
        `${ALPHA_BODY}\n## Merged from areas/alphas\n\nAlpha project notes\n\nAlpha notes.\n\nOwner: Ana.\n`,
      );
      expect(await memory.store.get(ME.user, ['areas/alphas'])).toEqual([]);
      const trash = await memory.recovery.trash(ME);
      expect(trash.map((item) => item.name)).toEqual(['areas/alphas']);
      const notes = [
        (await memory.store.history(ME.user, 'areas/alpha')).at(-1),
        (await memory.store.history(ME.user, 'areas/alphas')).at(-1),
      ];
      expect(notes.map((revision) => [revision?.operation, revision?.note, revision?.actor])).toEqual([
        ['replace', result.note, 'cli'],
        ['drop', result.note, 'cli'],
      ]);

      const preview = await memory.revert.previewUndo(ME, result.id);
      expect(preview.entries.map((entry) => [entry.name, entry.action, entry.conflict])).toEqual([
        ['areas/alpha', 'restore', false],
        ['areas/alphas', 'undrop', false],
      ]);
      const undone = await memory.revert.undo(ME, result.id);
      expect(undone.note).toBe(`revert ${undone.id}: undo of merge ${result.id}`);
      const after = await snapshot(memory, ME.user);
      const texts = (entries: typeof after.entries) =>
        entries.map(({ name, description, body, size }) => ({ name, description, body, size }));
      expect(texts(after.entries)).toEqual(texts(before.entries));
      expect(after.index).toEqual(before.index);
      expect(await memory.recovery.trash(ME)).toEqual([]);
    });

    it('refuses to undo a merge whose entry merged in was purged (no trash kept), changing nothing', async () => {
      const { memory } = await memoryOf({ trashRetentionDays: 0 });
      const result = await memory.tidy.merge(ME, await looked(memory, 'areas/alphas', 'areas/alpha'));
      expect(await memory.recovery.trash(ME)).toEqual([]);
      const merged = await snapshot(memory, ME.user);
      for (const attempt of [() => memory.revert.previewUndo(ME, result.id), () => memory.revert.undo(ME, result.id)]) {
        const refusal = await expectEngramError(attempt, 'CONFLICT');
        expect(refusal.detail).toEqual({
          reason: 'merge-purged',
          id: result.id,
          from: 'areas/alphas',
          into: 'areas/alpha',
        });
        expect(refusal.message).toContain('areas/alphas is no longer kept');
      }
      expect(await snapshot(memory, ME.user)).toEqual(merged);
    });

    it('refuses the same entry, a missing one and a bad revision number, changing nothing', async () => {
      const { memory } = await memoryOf();
      const before = await snapshot(memory, ME.user);
      const same = await expectEngramError(
        () => memory.tidy.merge(ME, { from: 'areas/alpha', into: 'areas/alpha', fromRevision: 1, intoRevision: 1 }),
        'INVALID_ARGUMENT',
        'areas/alpha cannot be merged into itself: choose two entries.',
      );
      expect(same.detail).toEqual({ reason: 'merge-same', name: 'areas/alpha' });
      const missing = await expectEngramError(
        () => memory.tidy.merge(ME, { from: 'areas/nothing', into: 'areas/alpha', fromRevision: 1, intoRevision: 1 }),
        'NOT_FOUND',
        /^areas\/nothing is not in this memory/,
      );
      expect(missing.detail).toEqual({ reason: 'merge-missing', name: 'areas/nothing' });
      const missingInto = await expectEngramError(
        () => memory.tidy.merge(ME, { from: 'areas/alpha', into: 'areas/gone', fromRevision: 1, intoRevision: 1 }),
        'NOT_FOUND',
      );
      expect(missingInto.detail).toEqual({ reason: 'merge-missing', name: 'areas/gone' });
      await expectEngramError(
        () => memory.tidy.merge(ME, { from: 'areas/alphas', into: 'areas/alpha', fromRevision: 0, intoRevision: 1 }),
        'INVALID_ARGUMENT',
        /a whole number from 1/,
      );
      await expectEngramError(
        () => memory.tidy.merge(ME, { from: 'not a name', into: 'areas/alpha', fromRevision: 1, intoRevision: 1 }),
        'INVALID_NAME',
      );
      expect(await snapshot(memory, ME.user)).toEqual(before);
    });

    it('refuses a revision that moved since it was looked at: CONFLICT, nothing changed', async () => {
      const { memory } = await memoryOf();
      const request = await looked(memory, 'areas/alphas', 'areas/alpha');
      await memory.write(ME, { name: 'areas/alpha', new: 'More.\n' });
      const before = await snapshot(memory, ME.user);
      const stale = await expectEngramError(() => memory.tidy.merge(ME, request), 'CONFLICT', /revision 1, now 2/);
      expect(stale.detail).toEqual({ reason: 'merge-stale', name: 'areas/alpha', expected: 1, current: 2 });
      await expectEngramError(
        () => memory.tidy.merge(ME, { ...request, intoRevision: 2, fromRevision: 5 }),
        'CONFLICT',
        /^areas\/alphas has changed/,
      );
      expect(await snapshot(memory, ME.user)).toEqual(before);
    });

    it('refuses when an entry changes between the check and the transaction: nothing changed', async () => {
      let racing: (() => Promise<void>) | undefined;
      const { memory } = await memoryOf({}, (store) => {
        const mutateAll: Store['mutateAll'] = async (...args) => {
          await racing?.();
          return store.mutateAll(...args);
        };
        return Object.assign(Object.create(store), { mutateAll });
      });
      const request = await looked(memory, 'areas/alphas', 'areas/alpha');
      racing = async () => {
        racing = undefined;
        await memory.write(ME, { name: 'areas/alphas', new: 'Raced.\n' });
      };
      const stale = await expectEngramError(() => memory.tidy.merge(ME, request), 'CONFLICT');
      expect(stale.detail).toMatchObject({ reason: 'merge-stale', name: 'areas/alphas', expected: 1, current: 2 });
      expect((await memory.store.get(ME.user, ['areas/alpha']))[0]?.body).toBe(ALPHA_BODY);
      expect(await memory.recovery.trash(ME)).toEqual([]);
    });

    it('refuses a merged body over the entry cap, saying by how much and what to do', async () => {
      const { memory } = await memoryOf({ entryCap: 90 });
      const before = await snapshot(memory, ME.user);
      const over = await expectEngramError(
        async () => memory.tidy.merge(ME, await looked(memory, 'areas/alphas', 'areas/alpha')),
        'TOO_LARGE',
        /^areas\/alpha would be 1\d\d bytes with areas\/alphas merged in, \d+ over the entry cap of 90\. Shorten one of them first \(or move part of areas\/alphas into another entry\), then merge again; nothing was merged\.$/,
      );
      expect(over.detail).toMatchObject({ reason: 'merge-over-cap', part: 'body', into: 'areas/alpha', cap: 90 });
      expect(await snapshot(memory, ME.user)).toEqual(before);
    });

    it('refuses a merge that would take the memory over its byte cap', async () => {
      const { memory, store } = await memoryOf();
      const usage = await store.usage(ME.user);
      const tight = createMemory({ store, policy: { userCap: usage.totalBytes + 5 } });
      const before = await snapshot(tight, ME.user);
      const over = await expectEngramError(
        async () => tight.tidy.merge(ME, await looked(memory, 'areas/alphas', 'areas/alpha')),
        'TOO_LARGE',
        /^the memory would take [\d,]+ bytes, over its cap of [\d,]+\. Make room first/,
      );
      expect(over.detail).toMatchObject({ reason: 'merge-over-cap', part: 'total', cap: usage.totalBytes + 5 });
      expect(await snapshot(tight, ME.user)).toEqual(before);
    });

    it('refuses a read-only caller, and an entry to receive in a group that cannot be written', async () => {
      const { memory, store } = await memoryOf();
      const request = await looked(memory, 'areas/alphas', 'areas/alpha');
      const before = await snapshot(memory, ME.user);
      const readOnly = await expectEngramError(() => memory.tidy.merge(VIEWER, request), 'READ_ONLY_TOKEN');
      expect(readOnly.detail).toEqual({ reason: 'read-only-caller' });
      const narrower = createMemory({ store, policy: { groups: { topics: 'facts' } } });
      await expectEngramError(() => narrower.tidy.merge(ME, request), 'READ_ONLY_GROUP', /^areas\/alpha is in group/);
      expect(await snapshot(memory, ME.user)).toEqual(before);
      // An entry of such a group may still be merged into a writable one, as it may be dropped.
      const result = await narrower.tidy.merge(ME, await looked(memory, 'areas/alphas', 'topics/coffee'));
      expect(result.dropped).toBe('areas/alphas');
    });

    it('lists names that differ only by punctuation, whatever order the store sorts them in', async () => {
      const { memory } = await memoryOf();
      for (const name of ['topics/a-b', 'topics/a.b', 'topics/a_b', 'topics/ab', 'topics/a-c']) {
        await memory.write(ME, { name, description: `About ${name}`, new: `Body of ${name}.\n` });
      }
      const found = await memory.tidy.duplicates(ME, { limit: 200 });
      expect(found.examined).toBe(8);
      expect(found.pairs.map((pair) => [pair.a.name, pair.b.name])).toContainEqual(['topics/a-b', 'topics/a.b']);
    });

    it('refuses a limit out of 1 to 200', async () => {
      const { memory } = await memoryOf();
      for (const limit of [0, 201, 1.5, Number.NaN]) {
        const error = await expectEngramError(() => memory.tidy.duplicates(ME, { limit }), 'INVALID_ARGUMENT');
        expect(error.detail).toEqual({ reason: 'duplicates-limit', max: 200 });
      }
      expect((await memory.tidy.duplicates(ME, { limit: 1 })).pairs).toHaveLength(1);
    });
  });
}

describe('tidy: bounded reading', () => {
  it(`reads bodies ${BATCH} at a time, letting the event loop run between batches`, async () => {
    const store = openMemoryStore();
    const reads: number[] = [];
    let yielded = 0;
    const counting: Store = Object.assign(Object.create(store), {
      get: async (user: string, names: readonly string[]) => {
        reads.push(names.length);
        setImmediate(() => yielded++);
        return store.get(user, names);
      },
    });
    const memory = createMemory({ store: counting, policy: { maxEntries: 1_000 } });
    for (let i = 0; i < 450; i++) {
      await memory.write(ME, { name: `topics/t${i}`, description: `About ${i}`, new: `Body ${i}.\n` });
    }
    reads.length = 0;
    const found = await memory.tidy.duplicates(ME);
    expect(found.examined).toBe(450);
    expect(reads).toEqual([200, 200, 50]);
    // Each batch's read scheduled a callback that ran before the listing was done: the loop turned between batches.
    expect(yielded).toBe(3);
  });

  it('lists 10,000 alike entries within its work bounds', async () => {
    const store = openMemoryStore();
    const memory = createMemory({ store, policy: { maxEntries: 10_000, userCap: 64 * 1024 * 1024 } });
    const template = 'Agenda: status, risks, next steps. Attendees: Ana, Ben, Chloé. '.repeat(20);
    await store.mutateAll(
      ME,
      () =>
        Array.from({ length: 10_000 }, (_, i) => ({
          name: `areas/meeting-${String(i).padStart(5, '0')}`,
          change: {
            kind: 'put' as const,
            operation: 'import' as const,
            description: `Meeting notes ${i % 40}`,
            body: `${template}\nDecided: item ${i}, owner ${i % 7}.\n`,
          },
        })),
      memory.rules,
    );
    const found = await memory.tidy.duplicates(ME, { limit: 200 });
    expect(found.examined).toBe(10_000);
    expect(found.pairs.length).toBeLessThanOrEqual(200);
    expect(found.work.candidates).toBeLessThanOrEqual(MAX_CANDIDATES);
    expect(found.work.visits).toBeLessThanOrEqual(MAX_VISITS);
    expect(found.work.characters).toBeLessThanOrEqual(10_000 * (template.length + 40));
  });
});
