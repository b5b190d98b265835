/**
 * The PostgreSQL store's shared commit (src/storage/postgres/shared-commit.ts), on a real
 * server, for what the accelerators' tests (postgres-accelerators.test.ts) cannot see
 * from the answers alone:
 *
 * - one user's writes that queue up really share transactions: fewer than one each;
 * - writes that go under the lock cost no shared transaction's BEGIN and COMMIT;
 * - at most half the pool's connections are in shared transactions at once, so a read
 *   gets a connection while as many users' shared transactions as may be are held open;
 * - a connection lost while committing is settled by asking the server: committed, each
 *   write is answered; rolled back, each is made again alone, none twice; and only when
 *   the server cannot be asked is each answered that it may or may not have been saved.
 *
 * Skipped, with a notice, where no PostgreSQL is available.
 */

import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/memory/port.js';
import { type Accelerators, NO_ACCELERATORS } from '../../src/storage/accelerators.js';
import { appendLine, drop } from '../../src/storage/contract/setup.js';
import { openPostgresStore, type PostgresStore } from '../../src/storage/postgres/index.js';
import { findTestPostgres, queryPostgres, schemaPerTest } from '../helpers/postgres.js';
import { startCommitCut } from '../helpers/postgres-commit-cut.js';
import { rules } from '../helpers/rules.js';

const server = await findTestPostgres();

const alice: Caller = { user: 'alice', label: 'shared-commit-test' };

/** Waits until `done` holds, checking every 20 ms; fails after 20 s, before the test times out. */
async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  for (let checks = 0; checks < 1000; checks++) {
    if (await done()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the condition never held');
}

describe.skipIf(!server)('PostgreSQL shared commit', () => {
  const schemaForTest = schemaPerTest(server!);
  let url: string;
  const opened: PostgresStore[] = [];

  async function open(options: { url?: string; max?: number; accelerators?: Accelerators } = {}) {
    const store = await openPostgresStore({ connectionString: options.url ?? url, ...options });
    opened.push(store);
    return store;
  }

  /** The lines of alice's `topics/log` and its revision. */
  async function logOf(store: PostgresStore) {
    const [entry] = await store.get('alice', ['topics/log']);
    return {
      lines: entry!.body
        .split('\n')
        .filter((line) => line !== '')
        .toSorted(),
      revision: entry!.revision,
    };
  }

  beforeEach(async () => {
    url = (await schemaForTest()).url;
  });

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  describe('writes of one user that queue up', () => {
    /** How many transactions wrote the entries of `names` (the xmin of their rows: the id of the transaction that wrote each). */
    async function transactionsThatWrote(names: readonly string[]): Promise<number> {
      const [row] = await queryPostgres<{ transactions: number }>(
        url,
        `SELECT count(DISTINCT xmin::text)::int AS transactions FROM entries WHERE user_id = 'alice' AND name = ANY($1)`,
        [names],
      );
      return row!.transactions;
    }

    const names = Array.from({ length: 10 }, (_, i) => `topics/${i}`);

    it('share transactions: ten writes made at once take fewer than ten', async () => {
      const store = await open();
      await store.mutate(alice, 'topics/first', appendLine('first'), rules);

      await Promise.all(names.map((name) => store.mutate(alice, name, appendLine(name), rules)));

      expect(await transactionsThatWrote(names)).toBeLessThan(names.length);
      expect((await store.get('alice', names)).map((entry) => entry.body).toSorted()).toEqual(
        names.map((name) => `${name}\n`).toSorted(),
      );
    });

    it('each take a transaction of their own with the accelerators off, as the count above tells', async () => {
      const store = await open({ accelerators: NO_ACCELERATORS });
      await store.mutate(alice, 'topics/first', appendLine('first'), rules);

      await Promise.all(names.map((name) => store.mutate(alice, name, appendLine(name), rules)));

      expect(await transactionsThatWrote(names)).toBe(names.length);
    });

    it('cost no shared BEGIN and COMMIT when each goes under the lock', async () => {
      const proxy = await startCommitCut(url);
      const store = await open({ url: proxy.url });
      for (const name of names) await store.mutate(alice, name, appendLine(name), rules);
      const before = proxy.simpleQueries.length;

      // A drop is decided under the user's lock, in a transaction of its own.
      await Promise.all(names.map((name) => store.mutate(alice, name, drop, rules)));

      const sent = proxy.simpleQueries.slice(before);
      expect(sent.filter((query) => query.startsWith('BEGIN'))).toHaveLength(names.length);
      expect(sent.filter((query) => query === 'COMMIT')).toHaveLength(names.length);
      expect(await store.get('alice', names)).toEqual([]);
    });
  });

  it("leaves half the pool to reads while many users' shared transactions are held open", async () => {
    const users = Array.from({ length: 6 }, (_, i) => `user${i}`);
    const store = await open({ max: 4 });
    for (const user of users) await store.mutate({ ...alice, user }, 'topics/first', appendLine('first'), rules);
    // A save in a transaction that saved before it (a shared one) waits for the lock this test holds.
    await queryPostgres(
      url,
      `CREATE FUNCTION hold_shared() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF EXISTS (SELECT FROM revisions WHERE user_id = NEW.user_id AND xmin::text = (txid_current() % 4294967296)::text)
         THEN PERFORM pg_advisory_xact_lock_shared(4242); END IF;
         RETURN NEW;
       END $$;
       CREATE TRIGGER hold_shared BEFORE INSERT ON revisions FOR EACH ROW EXECUTE FUNCTION hold_shared()`,
    );
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(4242)');
      const finished: string[] = [];
      const writes = users.map(async (user) => {
        await Promise.all(
          [1, 2, 3].map((line) => store.mutate({ ...alice, user }, 'topics/log', appendLine(`line ${line}`), rules)),
        );
        finished.push(user);
      });

      // Two of the pool's four connections in shared transactions, held; the other users' writes go alone.
      await until(() => finished.length === users.length - 2);
      const [held] = await queryPostgres<{ count: number }>(
        url,
        `SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'advisory'`,
      );
      expect(held!.count).toBe(2);
      expect(await store.get('user0', ['topics/first'])).toEqual([expect.objectContaining({ body: 'first\n' })]);
      expect(finished).toHaveLength(users.length - 2);

      await holder.query('SELECT pg_advisory_unlock(4242)');
      await Promise.all(writes);
    } finally {
      await holder.end();
    }
    for (const user of users) {
      const [entry] = await store.get(user, ['topics/log']);
      expect(entry).toMatchObject({ body: expect.stringMatching(/^(line \d\n){3}$/), revision: 3 });
    }
  });

  describe('a connection lost while committing', () => {
    const lines = ['a', 'b', 'c', 'd'];

    it('answers each write once the server says the transaction committed', async () => {
      const proxy = await startCommitCut(url);
      const store = await open({ url: proxy.url });
      await store.mutate(alice, 'topics/log', appendLine('first'), rules);

      proxy.arm('after');
      const results = await Promise.all(
        lines.map((line) => store.mutate(alice, 'topics/log', appendLine(line), rules)),
      );

      expect(proxy.cuts).toBe(1);
      expect(results.map((result) => result.after?.revision)).toEqual([2, 3, 4, 5]);
      expect(await logOf(store)).toEqual({ lines: ['a', 'b', 'c', 'd', 'first'], revision: 5 });
    });

    it('makes each write again alone, none twice, once the server says it rolled back', async () => {
      const proxy = await startCommitCut(url);
      const store = await open({ url: proxy.url });
      await store.mutate(alice, 'topics/log', appendLine('first'), rules);

      proxy.arm('before');
      await Promise.all(lines.map((line) => store.mutate(alice, 'topics/log', appendLine(line), rules)));

      expect(proxy.cuts).toBe(1);
      expect(await logOf(store)).toEqual({ lines: ['a', 'b', 'c', 'd', 'first'], revision: 5 });
    });

    it('answers each write that it may or may not have been saved when the server cannot be asked', async () => {
      const proxy = await startCommitCut(url);
      const store = await open({ url: proxy.url });
      await store.mutate(alice, 'topics/log', appendLine('first'), rules);

      proxy.arm('after', 'refuse');
      const outcomes = await Promise.allSettled(
        lines.map((line) => store.mutate(alice, 'topics/log', appendLine(line), rules)),
      );

      expect(proxy.cuts).toBe(1);
      for (const outcome of outcomes) {
        expect(outcome).toMatchObject({
          status: 'rejected',
          reason: { code: 'STORE_UNAVAILABLE', message: expect.stringContaining('may or may not have been saved') },
        });
      }
      // It did commit: the server has every write, once.
      expect(await logOf(await open())).toEqual({ lines: ['a', 'b', 'c', 'd', 'first'], revision: 5 });
    });
  });
});
