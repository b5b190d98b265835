/**
 * The review part of the Store contract: the proposals port (`store.proposals`) and the
 * Memory service's review mode over it — a review-mode caller's writes and drops checked
 * as anyone's, held as proposals no model sees and no cap counts, approved onto the entry
 * as it is now (or refused as a conflict, or by a cap checked again), rejected, expired.
 * Written once and run against every backend by `describeStoreContract` (index.ts), or
 * alone. Nothing here may know which backend it is testing.
 */

import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createMemory, type Memory } from '../../memory/memory.js';
import type { Caller } from '../../memory/model/caller.js';
import { EngramError } from '../../memory/model/errors.js';
import type { Policy } from '../../memory/model/policy.js';
import type { ProposalRecord, ProposalStore, Store } from '../../memory/port.js';
import { createToolHandler } from '../../memory/tools/handler.js';
import { type OpenStore, START, storesPerTest, withoutUser } from './setup.js';

const DAY = 24 * 60 * 60 * 1000;
/** Long enough for any backend to tell a change; nothing is asserted about how long it took. */
const TOLD_WITHIN_MS = 10_000;
const person: Caller = { user: 'alice', label: 'cli' };
const claude: Caller = { user: 'alice', label: 'Claude', review: true };

/** A proposal of alice's named by `id`, made `at`. */
function proposal(id: string, at: number, overrides: Partial<ProposalRecord> = {}): ProposalRecord {
  return {
    id,
    user: 'alice',
    name: 'topics/a',
    operation: 'append',
    description: undefined,
    new: `line ${id}`,
    old: undefined,
    baseRevision: 1,
    proposedDescription: 'A',
    proposedBody: `one\nline ${id}\n`,
    actor: 'Claude',
    at,
    ...overrides,
  };
}

/** The store's proposals port; a backend without it must skip this part (describeStoreContract's `proposals`). */
function proposalsOf(store: Store & { readonly proposals?: ProposalStore }): ProposalStore {
  if (store.proposals === undefined) {
    throw new Error(
      "this store offers no proposals port: skip this part, as describeStoreContract(name, open, { skip: { proposals: 'why' } })",
    );
  }
  return store.proposals;
}

export function describeReviewContract(label: string, open: OpenStore): void {
  describe(`ProposalStore contract: ${label}`, () => {
    const { keep } = storesPerTest();
    let store: Store & { readonly proposals?: ProposalStore };
    let proposals: ProposalStore;

    beforeEach(async () => {
      store = await keep(open());
      proposals = proposalsOf(store);
    });

    it('keeps every field of a proposal, lists a user’s oldest first, and finds one by id', async () => {
      const created = proposal('p2', START + 2, {
        operation: 'create',
        name: 'people/ada "quoted"',
        description: 'Ada, ✓',
        new: 'text\n',
        baseRevision: 0,
      });
      const replace = proposal('p1', START + 1, { operation: 'replace', old: 'one', new: 'uno\n' });
      const drop = proposal('p3', START + 3, { operation: 'drop', new: undefined });
      for (const kept of [created, replace, drop]) expect(await proposals.add(kept, 10, 0)).toBe(true);
      await proposals.add(proposal('b1', START, { user: 'bob' }), 10, 0);

      expect(await proposals.list('alice', 0)).toEqual([replace, created, drop]);
      expect(await proposals.list('alice', START + 1)).toEqual([created, drop]);
      expect(await proposals.find('alice', 'p2')).toEqual(created);
      expect(await proposals.find('bob', 'p2')).toBeUndefined();
    });

    it('refuses a proposal past the limit, counting only those not expired, which it deletes', async () => {
      expect(await proposals.add(proposal('p1', START), 2, 0)).toBe(true);
      expect(await proposals.add(proposal('p2', START + 1), 2, 0)).toBe(true);
      expect(await proposals.add(proposal('p3', START + 2), 2, 0)).toBe(false);
      expect(await proposals.add(proposal('p3', START + 2), 2, START)).toBe(true);
      expect((await proposals.list('alice', 0)).map((kept) => kept.id)).toEqual(['p2', 'p3']);
    });

    it('takes a proposal once: the second take finds nothing', async () => {
      await proposals.add(proposal('p1', START), 10, 0);
      expect(await proposals.take('alice', 'p1')).toEqual(proposal('p1', START));
      expect(await proposals.take('alice', 'p1')).toBeUndefined();
      expect(await proposals.list('alice', 0)).toEqual([]);
    });

    it("expires every user's proposals made at or before the cutoff", async () => {
      await proposals.add(proposal('p1', START), 10, 0);
      await proposals.add(proposal('b1', START + 1, { user: 'bob' }), 10, 0);
      await proposals.add(proposal('p2', START + 2), 10, 0);
      expect(await proposals.expire(START + 1)).toBe(2);
      expect((await proposals.list('alice', 0)).map((kept) => kept.id)).toEqual(['p2']);
      expect(await proposals.list('bob', 0)).toEqual([]);
    });

    it('tells watchers of the user when a proposal is kept or taken', async () => {
      let tell = () => {};
      const told = () => new Promise<void>((resolve) => (tell = resolve));
      const stop = await store.watch('alice', () => tell());
      let waiting = told();
      await proposals.add(proposal('p1', START), 10, 0);
      await waiting;
      waiting = told();
      await proposals.take('alice', 'p1');
      await waiting;
      stop();
    });

    it('starts a user the load left out past every change counter it replaced, when their first change is a proposal', async () => {
      const versions: number[] = [];
      const stop = await store.watch('alice', (change) => versions.push(change.version));
      await proposals.add(proposal('p1', START), 10, 0);
      await proposals.take('alice', 'p1');
      await proposals.add(proposal('p2', START), 10, 0);
      // Each change is told, with the version read after its commit: two changes in quick
      // succession may both be told the later one (PostgreSQL reads it on a pooled connection).
      await vi.waitFor(() => expect(versions.length).toBeGreaterThanOrEqual(3), TOLD_WITHIN_MS);
      const known = Math.max(...versions);
      const dump = await store.dump();
      await store.load(withoutUser(dump, 'alice'), { replace: true });
      versions.length = 0;

      await proposals.add(proposal('p3', START), 10, 0);
      // 0, where told: the load's own word that alice has nothing now.
      const since = () => versions.filter((version) => version !== 0);
      await vi.waitFor(() => expect(since().length).toBeGreaterThan(0), TOLD_WITHIN_MS);
      expect(Math.min(...since())).toBeGreaterThan(known);
      stop();
    });
  });

  describe(`Review mode under a Memory service: ${label}`, () => {
    const { keep, clock } = storesPerTest();
    let store: Store & { readonly proposals?: ProposalStore };

    beforeEach(async () => {
      store = await keep(open());
    });

    function memoryOf(policy: Partial<Policy> = {}): Memory {
      return createMemory({ store, proposals: proposalsOf(store), policy, now: clock.now });
    }

    async function seeded(policy: Partial<Policy> = {}): Promise<Memory> {
      const memory = memoryOf(policy);
      await memory.write(person, { name: 'topics/a', description: 'A', new: 'one\ntwo' });
      return memory;
    }

    /** What a refusal of `call` is: its code, message and detail. */
    async function refusal(call: Promise<unknown>): Promise<Pick<EngramError, 'code' | 'message' | 'detail'>> {
      const error = await call.then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      if (!(error instanceof EngramError)) throw new Error(`expected a refusal, got ${String(error)}`);
      return { code: error.code, message: error.message, detail: error.detail };
    }

    it('holds a write: the tool answers in one line with the index line it would have; no model sees it', async () => {
      const memory = await seeded();
      const tools = createToolHandler(memory);

      const created = await tools(claude, 'memory_write', { name: 'topics/b', description: 'B', new: 'hello' });
      const appended = await tools(claude, 'memory_write', { name: 'topics/a', new: 'three' });

      expect(created).toEqual({
        text: "Saved for the user's review, not applied yet (the user approves or rejects it; do not call again): topics/b (6 bytes): B",
        isError: false,
      });
      expect(appended.text).toMatch(/: topics\/a \(14 bytes\): A$/);
      expect(created.text).not.toContain('\n');
      expect(await tools(claude, 'memory_open', {})).toEqual(await tools(person, 'memory_open', {}));
      expect((await tools(claude, 'memory_open', { names: ['topics/a'] })).text).not.toContain('three');
      expect((await tools(claude, 'memory_open', { names: ['topics/b'] })).code).toBe('NOT_FOUND');
      expect(await memory.usage(person)).toEqual(await memoryOf().usage(person));
      expect((await memory.review.list(person)).map((view) => view.proposal.operation)).toEqual(['create', 'append']);
    });

    it('refuses exactly as a write that is applied: the same errors, holding nothing', async () => {
      const memory = await seeded({ maxEntries: 1 });
      const asks = [
        { name: 'topics/a', old: 'missing', new: 'x' },
        { name: 'topics/b', description: 'B', new: 'over the entry cap' },
        { name: 'topics/nope', new: 'x' },
        { name: 'Bad Name!', new: 'x' },
      ];
      for (const ask of asks) {
        expect(await refusal(memory.write(claude, ask))).toEqual(await refusal(memory.write(person, ask)));
      }
      expect(await refusal(memory.drop(claude, 'topics/nope'))).toEqual(
        await refusal(memory.drop(person, 'topics/nope')),
      );
      expect(await memory.review.list(person)).toEqual([]);
    });

    it('counts proposals towards no cap until approved, and checks the caps again on approval', async () => {
      const memory = await seeded({ maxEntries: 2 });
      const first = await memory.write(claude, { name: 'topics/b', description: 'B', new: 'b' });
      const second = await memory.write(claude, { name: 'topics/c', description: 'C', new: 'c' });
      expect((await memory.usage(person)).entries).toBe(1);

      await memory.review.approve(person, first.proposal!.id);
      const refused = await refusal(memory.review.approve(person, second.proposal!.id));

      expect(refused.code).toBe('TOO_MANY_ENTRIES');
      expect((await memory.index(person)).map((row) => row.name)).toEqual(['topics/a', 'topics/b']);
      expect((await memory.review.list(person)).map((view) => view.proposal.id)).toEqual([second.proposal!.id]);
    });

    it('approves onto the entry as it is now, recording the app and the person who approved', async () => {
      const memory = await seeded();
      const { proposal: held } = await memory.write(claude, { name: 'topics/a', new: 'three' });
      await memory.write(person, { name: 'topics/a', old: 'one', new: 'uno' });

      const view = await memory.review.show(person, held!.id);
      expect(view.applies).toBe(true);
      expect(view.patch).toContain('+three');
      const { entry } = await memory.review.approve(person, held!.id);

      expect(entry?.body).toBe('uno\ntwo\nthree\n');
      const history = await memory.recovery.history(person, 'topics/a');
      expect(history.at(-1)).toMatchObject({ operation: 'append', actor: 'Claude (approved by alice via cli)' });
      expect(await memory.review.list(person)).toEqual([]);
      await expect(memory.review.approve(person, held!.id)).rejects.toMatchObject({
        code: 'NOT_FOUND',
        detail: { reason: 'proposal-not-found', id: held!.id },
      });
    });

    it('shows a conflict when the text a replace needs has changed, applying nothing and keeping the proposal', async () => {
      const memory = await seeded();
      const { proposal: held } = await memory.write(claude, { name: 'topics/a', old: 'two', new: 'deux' });
      await memory.write(person, { name: 'topics/a', old: 'two', new: 'zwei' });

      const view = await memory.review.show(person, held!.id);
      const refused = await refusal(memory.review.approve(person, held!.id));

      expect(view).toMatchObject({ applies: false, why: 'the text it replaces or removes is no longer in the entry' });
      expect(view.patch).toContain('+deux');
      expect(refused).toMatchObject({
        code: 'PROPOSAL_CONFLICT',
        detail: { reason: 'proposal-conflict', id: held!.id, name: 'topics/a' },
      });
      expect((await memory.open(person, ['topics/a'])).found[0]?.body).toBe('one\nzwei\n');
      expect((await memory.review.list(person)).map((kept) => kept.proposal.id)).toEqual([held!.id]);
    });

    it('rejects: the proposal is gone, the entry untouched', async () => {
      const memory = await seeded();
      const { proposal: held } = await memory.write(claude, { name: 'topics/a', new: 'three' });
      await memory.review.reject(person, held!.id);
      expect(await memory.review.list(person)).toEqual([]);
      expect((await memory.open(person, ['topics/a'])).found[0]?.body).toBe('one\ntwo\n');
    });

    it('holds a drop until approved, then drops to the trash', async () => {
      const memory = await seeded();
      const tools = createToolHandler(memory);
      const answer = await tools(claude, 'memory_drop', { name: 'topics/a' });
      expect(answer.text).toMatch(/do not call again\): Drop of topics\/a \(8 bytes\): A$/);
      expect((await memory.index(claude)).map((row) => row.name)).toEqual(['topics/a']);

      const [view] = await memory.review.list(person);
      await memory.review.approve(person, view!.proposal.id);

      expect(await memory.index(person)).toEqual([]);
      expect((await memory.recovery.trash(person))[0]?.droppedBy).toBe('Claude (approved by alice via cli)');
    });

    it('expires proposals after proposalRetentionDays', async () => {
      const memory = await seeded({ proposalRetentionDays: 2 });
      const { proposal: held } = await memory.write(claude, { name: 'topics/a', new: 'three' });
      clock.time += 2 * DAY - 1;
      expect((await memory.review.show(person, held!.id)).expires).toBe(START + 2 * DAY);
      clock.time += 1;

      expect(await memory.review.list(person)).toEqual([]);
      await expect(memory.review.approve(person, held!.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(await memory.review.expire()).toBe(1);
    });

    it('refuses a change past maxProposals waiting, in words for the model', async () => {
      const memory = await seeded({ maxProposals: 1 });
      await memory.write(claude, { name: 'topics/a', new: 'three' });
      const refused = await refusal(memory.write(claude, { name: 'topics/a', new: 'four' }));
      expect(refused.code).toBe('TOO_MANY_PROPOSALS');
      expect(refused.message).toContain('review the changes waiting');
    });

    it('lets no review-mode caller approve or reject', async () => {
      const memory = await seeded();
      const { proposal: held } = await memory.write(claude, { name: 'topics/a', new: 'three' });
      for (const settle of [memory.review.approve(claude, held!.id), memory.review.reject(claude, held!.id)]) {
        await expect(settle).rejects.toMatchObject({ code: 'READ_ONLY_TOKEN', detail: { reason: 'review-caller' } });
      }
      expect(await memory.review.list(person)).toHaveLength(1);
    });
  });
}
