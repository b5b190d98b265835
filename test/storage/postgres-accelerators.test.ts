/**
 * The PostgreSQL store's accelerators (src/storage/accelerators.ts; docs/accelerators.md,
 * "Storage"), each switched off alone, all on and all off, on what each must keep:
 *
 * - optimisticSave: a decision made without the lock stands only if the user's change
 *   counter is still the one it was decided on; else it is made again under the lock. No
 *   update is lost, whichever server wrote in between.
 * - writeCache: what is remembered for a user stands for one value of their counter and
 *   grounds only an optimistic save, which the counter guards: another server's write, a
 *   drop among them, costs a retry, never a wrong write.
 * - readBatcher: each read that went in a batch answers what a read of its key alone
 *   would have: its own user's entry, or none.
 * - userQueue: one process's concurrent writes of one user lose none of each other's, and
 *   those that share a commit are each answered once it is made, a refusal with its own
 *   error; with it off they race and the database settles it.
 *
 * Skipped, with a notice, where no PostgreSQL is available.
 */

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/memory/port.js';
import { type Accelerators, NO_ACCELERATORS, POSTGRES_ACCELERATORS } from '../../src/storage/accelerators.js';
import { appendLine, drop } from '../../src/storage/contract/setup.js';
import { openPostgresStore, type PostgresStore } from '../../src/storage/postgres/index.js';
import { findTestPostgres, queryPostgres, schemaPerTest } from '../helpers/postgres.js';
import { rules } from '../helpers/rules.js';

const server = await findTestPostgres();

const alice: Caller = { user: 'alice', label: 'accelerators-test' };
const bob: Caller = { user: 'bob', label: 'accelerators-test' };

const VARIANTS: ReadonlyArray<{ readonly label: string; readonly accelerators: Accelerators }> = [
  { label: 'every accelerator on', accelerators: {} },
  ...Object.keys(POSTGRES_ACCELERATORS).map((name) => ({ label: `${name} off`, accelerators: { [name]: false } })),
  { label: 'every accelerator off', accelerators: NO_ACCELERATORS },
];

/**
 * Makes the database refuse any revision whose body holds "boom": at the statement that
 * writes it, or only when its transaction commits (a deferred constraint trigger).
 */
async function refuseBoom(url: string, when: 'at its statement' | 'at commit'): Promise<void> {
  await queryPostgres(
    url,
    `CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN IF NEW.body LIKE '%boom%' THEN RAISE EXCEPTION 'boom refused'; END IF; RETURN NEW; END $$;
     ${
       when === 'at commit'
         ? 'CREATE CONSTRAINT TRIGGER refuse_boom AFTER INSERT ON revisions DEFERRABLE INITIALLY DEFERRED'
         : 'CREATE TRIGGER refuse_boom BEFORE INSERT ON revisions'
     } FOR EACH ROW EXECUTE FUNCTION refuse_boom()`,
  );
}

describe.skipIf(!server)('PostgreSQL accelerators', () => {
  const schemaForTest = schemaPerTest(server!);
  let url: string;
  const opened: PostgresStore[] = [];

  async function open(accelerators: Accelerators): Promise<PostgresStore> {
    const store = await openPostgresStore({ connectionString: url, accelerators });
    opened.push(store);
    return store;
  }

  beforeEach(async () => {
    url = (await schemaForTest()).url;
  });

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  describe.each(VARIANTS)('$label', ({ accelerators }) => {
    it('loses no append when another server writes the entry between two writes of this one', async () => {
      const [here, there] = [await open(accelerators), await open(accelerators)];

      await here.mutate(alice, 'topics/log', appendLine('here 1'), rules);
      await there.mutate(alice, 'topics/log', appendLine('there 1'), rules);
      await here.mutate(alice, 'topics/log', appendLine('here 2'), rules);

      for (const store of [here, there]) {
        expect(await store.get('alice', ['topics/log'])).toEqual([
          expect.objectContaining({ body: 'here 1\nthere 1\nhere 2\n', revision: 3 }),
        ]);
      }
    });

    it('decides again on what is there when another server dropped the entry it wrote last', async () => {
      const [here, there] = [await open(accelerators), await open(accelerators)];
      await here.mutate(alice, 'topics/log', appendLine('before'), rules);

      await there.mutate(alice, 'topics/log', drop, rules);
      const result = await here.mutate(alice, 'topics/log', appendLine('after'), rules);

      expect(result.before).toBeUndefined();
      expect(result.after).toMatchObject({ body: 'after\n' });
      expect(await there.get('alice', ['topics/log'])).toEqual([expect.objectContaining({ body: 'after\n' })]);
    });

    it('loses none of 20 appends of one user made at once through one store', async () => {
      const store = await open(accelerators);

      await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.mutate(alice, 'topics/log', appendLine(`line ${i}`), rules)),
      );

      const [entry] = await store.get('alice', ['topics/log']);
      const lines = entry!.body.split('\n').filter((line) => line !== '');
      expect(lines.toSorted()).toEqual(Array.from({ length: 20 }, (_, i) => `line ${i}`).toSorted());
      expect(entry!.revision).toBe(20);
    });

    it("answers each of one user's writes made at once only once it is committed", async () => {
      const [here, there] = [await open(accelerators), await open(accelerators)];

      const seen = await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          const name = `topics/${i % 3}`;
          const { after } = await here.mutate(alice, name, appendLine(`line ${i}`), rules);
          const [entry] = await there.get('alice', [name]);
          return { written: after!.revision, committed: entry!.revision, holds: entry!.body.includes(`line ${i}\n`) };
        }),
      );

      for (const { written, committed, holds } of seen) {
        expect(committed).toBeGreaterThanOrEqual(written);
        expect(holds).toBe(true);
      }
    });

    it('answers a refused write of one user with its own error, and makes the others made at once', async () => {
      const store = await open(accelerators);
      const refuse = () => {
        throw new Error('refused by decide');
      };

      const outcomes = await Promise.allSettled([
        store.mutate(alice, 'topics/log', appendLine('a'), rules),
        store.mutate(alice, 'topics/log', appendLine('b'), rules),
        store.mutate(alice, 'topics/log', refuse, rules),
        store.mutate(alice, 'topics/log', appendLine('c'), rules),
        store.mutate(alice, 'topics/log', drop, rules),
        store.mutate(alice, 'topics/log', appendLine('d'), rules),
      ]);

      expect(outcomes.map((outcome) => outcome.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'rejected',
        'fulfilled',
        'fulfilled',
        'fulfilled',
      ]);
      expect((outcomes[2] as PromiseRejectedResult).reason).toEqual(new Error('refused by decide'));
      // In call order when they queue; racing (userQueue off), in whichever order the database settled.
      if (accelerators.userQueue !== false) {
        expect((await store.trash('alice')).map((entry) => entry.body)).toEqual(['a\nb\nc\n']);
        expect(await store.get('alice', ['topics/log'])).toEqual([
          expect.objectContaining({ body: 'd\n', revision: 1 }),
        ]);
      }
    });

    it('makes each write again alone when a statement of the transaction they share fails', async () => {
      const store = await open(accelerators);
      await store.mutate(alice, 'topics/log', appendLine('first'), rules);
      // Refuses one text: its save fails in the transaction the writes around it share.
      await refuseBoom(url, 'at its statement');

      const outcomes = await Promise.allSettled(
        ['a', 'b', 'boom', 'c'].map((line) => store.mutate(alice, 'topics/log', appendLine(line), rules)),
      );

      expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      const [entry] = await store.get('alice', ['topics/log']);
      const lines = entry!.body.split('\n').filter((line) => line !== '');
      expect(lines.toSorted()).toEqual(['a', 'b', 'c', 'first']);
      expect(entry!.revision).toBe(4);
    });

    it('makes each write again alone, none twice, when the transaction they share fails at its commit', async () => {
      const store = await open(accelerators);
      await store.mutate(alice, 'topics/log', appendLine('first'), rules);
      // Refuses one text when the transaction commits, not at its statement.
      await refuseBoom(url, 'at commit');

      const outcomes = await Promise.allSettled(
        ['a', 'b', 'boom', 'c', 'd'].map((line) => store.mutate(alice, 'topics/log', appendLine(line), rules)),
      );

      expect(outcomes.map((outcome) => outcome.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'rejected',
        'fulfilled',
        'fulfilled',
      ]);
      const [entry] = await store.get('alice', ['topics/log']);
      const lines = entry!.body.split('\n').filter((line) => line !== '');
      expect(lines.toSorted()).toEqual(['a', 'b', 'c', 'd', 'first']);
      expect(entry!.revision).toBe(5);
    });

    it('loses none of 40 appends of one user made at once, more than one shared commit holds', async () => {
      const store = await open(accelerators);
      await store.mutate(alice, 'topics/log', appendLine('first'), rules);

      await Promise.all(
        Array.from({ length: 40 }, (_, i) => store.mutate(alice, 'topics/log', appendLine(`line ${i}`), rules)),
      );

      const [entry] = await store.get('alice', ['topics/log']);
      const lines = entry!.body.split('\n').filter((line) => line !== '');
      expect(lines.toSorted()).toEqual(['first', ...Array.from({ length: 40 }, (_, i) => `line ${i}`)].toSorted());
      expect(entry!.revision).toBe(41);
    });

    it("loses none of one user's writes made at once through two servers", async () => {
      const [here, there] = [await open(accelerators), await open(accelerators)];

      await Promise.all(
        [here, there].flatMap((store, at) =>
          Array.from({ length: 10 }, (_, i) => store.mutate(alice, 'topics/log', appendLine(`${at}.${i}`), rules)),
        ),
      );

      const [entry] = await here.get('alice', ['topics/log']);
      const lines = entry!.body.split('\n').filter((line) => line !== '');
      expect(lines.toSorted()).toEqual(
        [0, 1].flatMap((at) => Array.from({ length: 10 }, (_, i) => `${at}.${i}`)).toSorted(),
      );
      expect(entry!.revision).toBe(20);
    });

    it("answers reads made at once each with its own user's entry, or none", async () => {
      const store = await open(accelerators);
      for (const caller of [alice, bob]) {
        for (let i = 0; i < 5; i++) await store.mutate(caller, `topics/${i}`, appendLine(`${caller.user} ${i}`), rules);
      }

      const reads = await Promise.all(
        [alice, bob].flatMap((caller) =>
          Array.from({ length: 6 }, (_, i) => store.get(caller.user, [`topics/${i}`, 'topics/0'])),
        ),
      );

      const bodies = reads.map((entries) => entries.map((entry) => entry.body));
      expect(bodies).toEqual(
        ['alice', 'bob'].flatMap((user) =>
          Array.from({ length: 6 }, (_, i) =>
            i === 0 || i === 5 ? [`${user} 0\n`] : [`${user} ${i}\n`, `${user} 0\n`],
          ),
        ),
      );
    });

    it('answers reads made at once with every field of each entry, as a read alone does', async () => {
      const store = await open(accelerators);
      for (const caller of [alice, bob]) {
        for (let i = 0; i < 8; i++) await store.mutate(caller, `topics/${i}`, appendLine(`${caller.user} ${i}`), rules);
      }
      const wanted = [alice, bob].flatMap((caller) =>
        Array.from({ length: 8 }, (_, i) => [caller.user, `topics/${i}`]),
      );
      const alone: unknown[] = [];
      for (const [user, name] of wanted) alone.push(await store.get(user!, [name!]));

      // More reads at once than go alone: the rest are answered together, by one statement.
      const together = await Promise.all(wanted.map(([user, name]) => store.get(user!, [name!])));

      expect(together).toEqual(alone);
      expect(together[9]).toEqual([
        {
          name: 'topics/1',
          description: 'appended lines',
          body: 'bob 1\n',
          size: 6,
          created: expect.any(Number),
          updated: expect.any(Number),
          revision: 1,
        },
      ]);
    });
  });
});
