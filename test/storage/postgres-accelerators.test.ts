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
 * - userQueue: one process's concurrent writes of one user lose none of each other's; with
 *   it off they race and the database settles it.
 *
 * Skipped, with a notice, where no PostgreSQL is available.
 */

import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/memory/port.js';
import { type Accelerators, NO_ACCELERATORS, POSTGRES_ACCELERATORS } from '../../src/storage/accelerators.js';
import { appendLine, drop } from '../../src/storage/contract/setup.js';
import { openPostgresStore, type PostgresStore } from '../../src/storage/postgres/index.js';
import { createTestDatabase, createTestSchema, findTestPostgres, type TestDatabase } from '../helpers/postgres.js';
import { rules } from '../helpers/rules.js';

const server = await findTestPostgres();

const alice: Caller = { user: 'alice', label: 'accelerators-test' };
const bob: Caller = { user: 'bob', label: 'accelerators-test' };

const VARIANTS: ReadonlyArray<{ readonly label: string; readonly accelerators: Accelerators }> = [
  { label: 'every accelerator on', accelerators: {} },
  ...Object.keys(POSTGRES_ACCELERATORS).map((name) => ({ label: `${name} off`, accelerators: { [name]: false } })),
  { label: 'every accelerator off', accelerators: NO_ACCELERATORS },
];

describe.skipIf(!server)('PostgreSQL accelerators', () => {
  let database: Promise<TestDatabase> | undefined;
  let url: string;
  const opened: PostgresStore[] = [];

  async function open(accelerators: Accelerators): Promise<PostgresStore> {
    const store = await openPostgresStore({ connectionString: url, accelerators });
    opened.push(store);
    return store;
  }

  beforeEach(async () => {
    database ??= createTestDatabase(server!);
    url = (await createTestSchema(await database)).url;
  });

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  afterAll(async () => {
    await (await database)?.drop();
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
  });
});
