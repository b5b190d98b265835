/**
 * The PostgreSQL store: the shared Store contract, each test on a database of its own (with
 * the accelerators as they default, then every one off),
 * then what only PostgreSQL has — migrations raced by several servers, the messages of
 * an unreachable or refusing database and of a duplicate token, writers on separate pools (separate servers)
 * losing nothing and redeeming a token once, the covering index plan, reconnect and retry, and the pool options.
 * Skipped, with a notice, where no PostgreSQL is available.
 */

import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EngramError } from '../../src/memory/model/errors.js';
import type { Caller } from '../../src/memory/port.js';
import { type Accelerators, NO_ACCELERATORS } from '../../src/storage/accelerators.js';
import { describeStoreContract } from '../../src/storage/contract/index.js';
import { account, appendLine, grant, grantSecret, none, token, withoutUser } from '../../src/storage/contract/setup.js';
import type { Connection, Pool, Statement } from '../../src/storage/postgres/driver.js';
import { openPostgresStore, type PostgresStore, type PostgresStoreOptions } from '../../src/storage/postgres/index.js';
import { MIGRATIONS } from '../../src/storage/postgres/migrations.js';
import { SQL } from '../../src/storage/postgres/statements.js';
import { callDecide, Runner } from '../../src/storage/postgres/transaction.js';
import {
  createTestDatabase,
  createTestSchema,
  EMPTY_SCHEMA,
  findTestPostgres,
  queryPostgres,
  type TestDatabase,
} from '../helpers/postgres.js';
import { rules } from '../helpers/rules.js';

const server = await findTestPostgres();

const alice: Caller = { user: 'alice', label: 'postgres-test' };

/** An error as node-postgres reports it: a message and a code (SQLSTATE or system error). */
function failure(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * A pool that records every statement and fails the ones `fail` picks, for the retry
 * rules that a live server cannot be made to break on cue.
 */
function fakePool(fail: (text: string, count: number) => Error | undefined) {
  const log: string[] = [];
  const seen = new Map<string, number>();
  const run = async (statement: Statement) => {
    const count = (seen.get(statement.text) ?? 0) + 1;
    seen.set(statement.text, count);
    log.push(statement.text);
    const error = fail(statement.text, count);
    if (error) throw error;
    return { rows: [{ ok: true }], rowCount: 1 };
  };
  const connection: Connection = { query: run as Connection['query'], release: () => log.push('release') };
  const pool: Pool = {
    query: run as Pool['query'],
    connect: async () => {
      const error = fail('connect', (seen.get('connect') ?? 0) + 1);
      seen.set('connect', (seen.get('connect') ?? 0) + 1);
      if (error) throw error;
      return connection;
    },
    end: async () => {},
  };
  return { pool, log };
}

describe('Runner, the retry rules (on a fake pool)', () => {
  it('runs a transaction again after a deadlock or a serialization failure, and commits once', async () => {
    const { pool, log } = fakePool((text, count) =>
      text === 'UPDATE' && count === 1
        ? failure('40P01', 'deadlock detected')
        : text === 'UPDATE' && count === 2
          ? failure('40001', 'could not serialize access')
          : undefined,
    );

    const result = await new Runner(pool, 'db:5432').transaction(
      async (db) => (await db.query({ text: 'UPDATE' })).rows,
    );

    expect(result).toEqual([{ ok: true }]);
    expect(log).toEqual([
      ...['BEGIN', 'UPDATE', 'ROLLBACK', 'release'],
      ...['BEGIN', 'UPDATE', 'ROLLBACK', 'release'],
      ...['BEGIN', 'UPDATE', 'COMMIT', 'release'],
    ]);
  });

  it('never runs again after decide threw: rolls back and rethrows the very error', async () => {
    const { pool, log } = fakePool(() => undefined);
    const refusal = Object.assign(new Error('refused'), { code: '40001' });

    const attempt = new Runner(pool, 'db:5432').transaction(async () =>
      callDecide(() => {
        throw refusal;
      }),
    );

    await expect(attempt).rejects.toBe(refusal);
    expect(log).toEqual(['BEGIN', 'ROLLBACK', 'release']);
  });

  it('reports a connection lost during COMMIT instead of applying the change a second time', async () => {
    const { pool, log } = fakePool((text) =>
      text === 'COMMIT' ? failure('ECONNRESET', 'read ECONNRESET') : undefined,
    );

    const attempt = new Runner(pool, 'db:5432').transaction(async (db) => db.query({ text: 'UPDATE' }));

    await expect(attempt).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(attempt).rejects.toThrow(
      'lost the connection to PostgreSQL at db:5432 while committing, so the change may or may not have been saved. Read the entry again before repeating the change.',
    );
    expect(log.filter((text) => text === 'BEGIN')).toHaveLength(1);
  });

  it('answers what a read-only transaction read when the connection is lost at its COMMIT: nothing was changed', async () => {
    const { pool, log } = fakePool((text) =>
      text === 'COMMIT' ? failure('ECONNRESET', 'read ECONNRESET') : undefined,
    );

    const result = await new Runner(pool, 'db:5432').transaction(
      async (db) => (await db.query({ text: 'SELECT' })).rows,
      { readOnly: true },
    );

    expect(result).toEqual([{ ok: true }]);
    expect(log.slice(0, 3)).toEqual(['BEGIN READ ONLY', 'SELECT', 'COMMIT']);
    expect(log.filter((text) => text.startsWith('BEGIN'))).toHaveLength(1);
  });

  it('rethrows what decide threw as is, where a failure may not be repeated', async () => {
    const { pool, log } = fakePool(() => undefined);
    const refusal = new Error('refused');

    const attempt = new Runner(pool, 'db:5432').transaction(
      async () =>
        callDecide(() => {
          throw refusal;
        }),
      { mayRepeat: () => false },
    );

    await expect(attempt).rejects.toBe(refusal);
    expect(log).toEqual(['BEGIN', 'ROLLBACK', 'release']);
  });

  it('tries an unreachable server a few times, then says it cannot be reached', async () => {
    let connects = 0;
    const { pool } = fakePool((text) => {
      if (text !== 'connect') return undefined;
      connects++;
      return failure('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.9:5432');
    });

    const attempt = new Runner(pool, '10.0.0.9:5432').transaction(async () => 'never');

    await expect(attempt).rejects.toThrow(
      'cannot reach PostgreSQL at 10.0.0.9:5432: connect ECONNREFUSED 10.0.0.9:5432. Check that the server is running and that the database URL is right.',
    );
    expect(connects).toBe(6);
  });

  it('does not retry a statement that failed for good', async () => {
    const { pool, log } = fakePool((text) =>
      text === 'SELECT' ? failure('42P01', 'relation "nowhere" does not exist') : undefined,
    );

    await expect(new Runner(pool, 'db:5432').query({ text: 'SELECT' })).rejects.toThrow(
      'relation "nowhere" does not exist',
    );
    expect(log).toEqual(['SELECT']);
  });
});

describe.skipIf(!server)('PostgreSQL', () => {
  /**
   * The contract tests share one database of this file and a few schemas in it. A schema
   * is created (and migrated by the store that opens it) only when no emptied one is free;
   * when its test ends, every table but schema_version is emptied, identities restarted,
   * and the schema waits for the next test: the new, empty, migrated store the contract
   * asks for, without a migration per test (most of each test's time). The PostgresStore
   * tests below take schemas from the same pool, but for the migrations tests.
   */
  let contractDatabase: Promise<TestDatabase> | undefined;
  const emptiedSchemas: string[] = [];

  async function openInFreshSchema(accelerators?: Accelerators) {
    contractDatabase ??= createTestDatabase(server!);
    const url = emptiedSchemas.pop() ?? (await createTestSchema(await contractDatabase)).url;
    const store = await openPostgresStore({ connectionString: url, accelerators });
    const cleanup = async () => {
      await queryPostgres(url, EMPTY_SCHEMA);
      emptiedSchemas.push(url);
    };
    return { store, cleanup };
  }

  afterAll(async () => {
    await (await contractDatabase)?.drop();
  });

  describeStoreContract('postgres', () => openInFreshSchema());
  // The plain path, the reference each accelerator must agree with (docs/accelerators.md).
  describeStoreContract('postgres, every accelerator off', () => openInFreshSchema(NO_ACCELERATORS));

  describe('PostgresStore', () => {
    /**
     * Each test has a schema of its own in the file's database (the URL's search_path
     * names it): an empty place like a database of its own, without the cost of creating
     * and dropping a database per test. `name` is the database's. The migrations tests
     * take a new schema, dropped after them (nothing has migrated it; one is left at a
     * version this Engram refuses); the others take one the contract tests emptied, or a
     * new one, and empty it for the next test after theirs, as the contract tests do: a
     * schema made, migrated and dropped per test was most of such a test's time.
     */
    let database: { readonly name: string; readonly url: string; drop(): Promise<void> };
    const opened: PostgresStore[] = [];

    /** Opens a store on this test's database that the teardown closes. */
    async function open(options: Partial<PostgresStoreOptions> = {}): Promise<PostgresStore> {
      const store = await openPostgresStore({ connectionString: database.url, ...options });
      opened.push(store);
      return store;
    }

    function query<Row>(sql: string, params: unknown[] = []): Promise<Row[]> {
      return queryPostgres<Row>(database.url, sql, params);
    }

    /** A connection of the test's own that holds alice's write lock until `release` is called. */
    async function holdAlicesLock(): Promise<{ release(): Promise<void> }> {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      await client.query('BEGIN');
      await client.query("SELECT 1 FROM users WHERE user_id = 'alice' FOR UPDATE");
      return {
        release: async () => {
          await client.query('COMMIT');
          await client.end();
        },
      };
    }

    /** Waits until some connection of the store is blocked on a lock, and returns its process id. */
    async function blockedBackend(): Promise<number> {
      for (;;) {
        const rows = await query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'engram' AND wait_event_type = 'Lock'",
        );
        if (rows[0]) return rows[0].pid;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }

    beforeEach(async (context) => {
      contractDatabase ??= createTestDatabase(server!);
      const { name } = await contractDatabase;
      if (context.task.suite?.name === 'migrations') {
        database = { name, ...(await createTestSchema(await contractDatabase)) };
        return;
      }
      const url = emptiedSchemas.pop() ?? (await createTestSchema(await contractDatabase)).url;
      const drop = async () => {
        await queryPostgres(url, EMPTY_SCHEMA);
        emptiedSchemas.push(url);
      };
      database = { name, url, drop };
    });

    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close();
      await database.drop();
    });

    describe('migrations', () => {
      it('let four servers start at once on an empty database: all come up, the schema is created once', async () => {
        const stores = await Promise.all([open(), open(), open(), open()]);

        expect(await query('SELECT version FROM schema_version')).toEqual([{ version: MIGRATIONS.length }]);
        await stores[0]!.mutate(alice, 'topics/a', appendLine('from the first'), rules);
        for (const store of stores) {
          expect(await store.get('alice', ['topics/a'])).toEqual([
            expect.objectContaining({ body: 'from the first\n' }),
          ]);
        }
      });

      it('leave an up-to-date database and its entries as they are on reopening', async () => {
        const first = await open();
        await first.mutate(alice, 'topics/a', appendLine('kept'), rules);
        await first.close();

        const again = await open();

        expect(await query('SELECT version FROM schema_version')).toEqual([{ version: MIGRATIONS.length }]);
        expect(await again.get('alice', ['topics/a'])).toEqual([expect.objectContaining({ body: 'kept\n' })]);
      });

      it('refuse a database newer than this Engram, changing nothing', async () => {
        const first = await open();
        await first.mutate(alice, 'topics/a', appendLine('kept'), rules);
        await first.close();
        await query('UPDATE schema_version SET version = $1', [MIGRATIONS.length + 1]);

        const attempt = openPostgresStore({ connectionString: database.url });

        await expect(attempt).rejects.toThrow(
          `The PostgreSQL database ${database.name} is at schema version ${MIGRATIONS.length + 1}, newer than this ` +
            `Engram knows (${MIGRATIONS.length}): a newer Engram has upgraded it, and this one cannot read it safely. ` +
            'Nothing was changed. Upgrade Engram',
        );
        await expect(attempt).rejects.toBeInstanceOf(EngramError);
        expect(await query('SELECT version FROM schema_version')).toEqual([{ version: MIGRATIONS.length + 1 }]);
        // The body is kept once, in its revision (migrations.ts, step 8).
        expect(await query('SELECT body FROM revisions')).toEqual([{ body: 'kept\n' }]);
      });
    });

    describe('startup errors', () => {
      it('say which server cannot be reached, as a STORE_UNAVAILABLE error without a driver stack', async () => {
        const attempt = openPostgresStore({ connectionString: 'postgres://postgres@127.0.0.1:1/engram' });

        await expect(attempt).rejects.toMatchObject({ name: 'EngramError', code: 'STORE_UNAVAILABLE' });
        await expect(attempt).rejects.toThrow(
          /^cannot reach PostgreSQL at 127\.0\.0\.1:1: connect ECONNREFUSED 127\.0\.0\.1:1\. Check that the server is running and that the database URL is right\.$/,
        );
      });

      it('say that a server which answers refused the connection, and why', async () => {
        const url = new URL(database.url);
        url.pathname = `/${database.name}_missing`;

        const attempt = openPostgresStore({ connectionString: url.toString() });

        await expect(attempt).rejects.toMatchObject({ name: 'EngramError', code: 'STORE_UNAVAILABLE' });
        await expect(attempt).rejects.toThrow(
          `PostgreSQL at ${url.host} refused the connection: database "${database.name}_missing" does not exist. Check the user, password and database in the database URL.`,
        );
      });
    });

    describe('two servers on one database', () => {
      it('lose no line among 100 concurrent appends split across two pools', async () => {
        const [one, two] = await Promise.all([open(), open()]);
        const lines = Array.from({ length: 100 }, (_, i) => `line ${i}`);

        await Promise.all(
          lines.map((line, i) => (i % 2 === 0 ? one : two).mutate(alice, 'topics/log', appendLine(line), rules)),
        );

        for (const store of [one, two]) {
          const [entry] = await store.get('alice', ['topics/log']);
          expect(entry!.body.split('\n').filter(Boolean).sort()).toEqual([...lines].sort());
          expect(entry!.revision).toBe(100);
        }
        expect((await two.history('alice', 'topics/log')).map((record) => record.revision)).toEqual(
          lines.map((_, i) => i + 1),
        );
      });

      it('see each other’s writes and tokens at once', async () => {
        const [one, two] = await Promise.all([open(), open()]);
        const token = {
          id: 'tok-1',
          user: 'alice',
          label: 'laptop',
          readOnly: true,
          hash: 'ab'.repeat(32),
          created: 1_700_000_000_000,
          lastUsed: undefined,
          review: false,
        };

        await one.mutate(alice, 'topics/a', appendLine('written through one'), rules);
        await one.tokens.add(token);

        expect(await two.index('alice')).toEqual([{ name: 'topics/a', size: 20, description: 'appended lines' }]);
        expect(await two.tokens.findByHash(token.hash)).toEqual(token);
        expect(await two.tokens.revoke('tok-1')).toBe(true);
        expect(await one.tokens.findByHash(token.hash)).toBeUndefined();
      });

      it('never write over a user the other loaded out and wrote again, from what they knew of them before', async () => {
        const [one, two] = await Promise.all([open(), open()]);
        const bob: Caller = { user: 'bob', label: 'postgres-test' };
        await one.mutate(bob, 'topics/kept', appendLine('bob'), rules);
        await one.mutate(alice, 'topics/old', appendLine('one'), rules);
        await one.mutate(alice, 'topics/old', appendLine('two'), rules);
        // Two loads alice out, and alice writes again through two as many times as one knew of.
        const dump = await two.dump();
        await two.load(withoutUser(dump, 'alice'), { replace: true });
        await two.mutate(alice, 'topics/new', appendLine('fresh'), rules);
        await two.mutate(alice, 'topics/new', appendLine('again'), rules);

        // One still holds alice as it last wrote her (write-cache.ts): its save must find her changed.
        await one.mutate(alice, 'topics/old', appendLine('three'), rules);

        const entries = await two.get('alice', ['topics/old', 'topics/new']);
        expect(entries.map(({ name, body, revision }) => ({ name, body, revision }))).toEqual([
          { name: 'topics/old', body: 'three\n', revision: 1 },
          { name: 'topics/new', body: 'fresh\nagain\n', revision: 2 },
        ]);
      });

      it('tell no watcher of a write that changed nothing for a user without a row, the floor past 0', async () => {
        const [one, two] = await Promise.all([open(), open()]);
        const carol: Caller = { user: 'carol', label: 'postgres-test' };
        await query(
          'INSERT INTO change_floor (changes) VALUES (40) ON CONFLICT (one) DO UPDATE SET changes = excluded.changes',
        );
        const told: number[] = [];
        const stop = await one.watch('carol', (change) => told.push(change.version));
        // Two takes carol's lock, which makes her row, and decides to change nothing.
        await two.mutate(carol, 'notes/x', none, rules);
        expect(await query('SELECT changes FROM users WHERE user_id = $1', ['carol'])).toEqual([{ changes: '40' }]);
        // Two of one's polls (every 500 ms) read her counter: nothing moved.
        await new Promise((resolve) => setTimeout(resolve, 1_200));
        expect(told).toEqual([]);
        await two.mutate(carol, 'notes/x', appendLine('now'), rules);
        await vi.waitFor(() => expect(told).toEqual([41]), { timeout: 5_000, interval: 50 });
        stop();
      });

      it('redeem one refresh token first exactly once among 20 redemptions split across two pools', async () => {
        const [one, two] = await Promise.all([open(), open()]);
        const refresh = grantSecret('r1', 'g1', { kind: 'refresh' });
        await one.accounts.put(account('alice'));
        await one.oauth.saveGrant(grant('g1'), grantSecret('c1', 'g1'));
        await one.oauth.saveSecrets('g1', [refresh]);

        const redemptions = await Promise.all(
          Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? one : two).oauth.consume(refresh.hash, 1_000 + i)),
        );

        expect(redemptions.filter((redemption) => redemption?.first)).toHaveLength(1);
        const used = redemptions.find((redemption) => redemption?.first)!.secret.used;
        expect(redemptions.every((redemption) => redemption?.secret.used === used)).toBe(true);
      });
    });

    it('refuses to load a dump holding the NUL character, naming the entry, and loads nothing', async () => {
      const store = await open();
      const entry = { name: 'topics/nul', description: 'd', body: 'a\u0000b\n', size: 4, created: 1, updated: 1 };
      const revisions = [
        { revision: 1, operation: 'create' as const, actor: 'cli', at: 1, description: 'd', body: 'x\n' },
      ];
      const dump = {
        entries: [{ ...entry, id: 1, user: 'alice', revision: 1, droppedAt: null, droppedBy: null, revisions }],
        users: [{ user: 'alice', totalBytes: 4, entries: 1, historyBytes: 3 }],
        tokens: [],
        accounts: [],
        clients: [],
        grants: [],
        grantSecrets: [],
        proposals: [],
      };

      const attempt = store.load(dump, { replace: false });

      await expect(attempt).rejects.toMatchObject({ name: 'EngramError', code: 'INVALID_ARGUMENT' });
      await expect(attempt).rejects.toThrow(
        "alice's topics/nul holds the NUL character (\\u0000) in its text or its history, which PostgreSQL cannot store, so nothing was loaded. Remove it in the source first, then copy again.",
      );
      expect(await store.isEmpty()).toBe(true);
    });

    it('refuses a second token with the same id or hash in the words every store uses, not its constraint names', async () => {
      const { tokens } = await open();
      await tokens.add(token('a1'));

      await expect(tokens.add(token('a1', { label: 'other', hash: 'e'.repeat(64) }))).rejects.toMatchObject({
        code: 'CONFLICT',
        message: expect.stringMatching(/^another token has the same id: /),
      });
      await expect(tokens.add(token('b1', { hash: token('a1').hash }))).rejects.toMatchObject({
        code: 'CONFLICT',
        message: expect.stringMatching(/^another token has the same hash: /),
      });
    });

    describe('the index query', () => {
      it('is answered by an Index Only Scan of the covering index entries_live, never reading bodies', async () => {
        const store = await open();
        for (let user = 0; user < 20; user++) {
          const actor = { user: `user-${user}`, label: 'plan' };
          await store.mutateAll(
            actor,
            () =>
              Array.from({ length: 100 }, (_, i) => ({
                name: `topics/entry-${i}`,
                change: {
                  kind: 'put',
                  operation: 'import',
                  description: `entry ${i}`,
                  body: 'x'.repeat(2_000),
                } as const,
              })),
            rules,
          );
        }
        await query('VACUUM ANALYZE entries');

        const plan = await query<{ 'QUERY PLAN': string }>(`EXPLAIN ${SQL.index.replace('$1', "'user-7'")}`);

        expect(plan[0]!['QUERY PLAN']).toMatch(/^Index Only Scan using entries_live on entries/);
        expect(plan.map((row) => row['QUERY PLAN']).join('\n')).not.toMatch(/Sort|Seq Scan|Heap/);
      });
    });

    describe('transient failures', () => {
      it('retries a write whose connection the server killed mid-transaction, applying it once', async () => {
        const store = await open();
        await store.mutate(alice, 'topics/a', appendLine('one'), rules);
        const lock = await holdAlicesLock();
        let decided = 0;

        const write = store.mutate(
          alice,
          'topics/a',
          (current, usage) => {
            decided++;
            return appendLine('two')(current, usage);
          },
          rules,
        );
        await query('SELECT pg_terminate_backend($1)', [await blockedBackend()]);
        await lock.release();

        expect((await write).after).toMatchObject({ body: 'one\ntwo\n', revision: 2 });
        expect(decided).toBe(1);
        expect((await store.history('alice', 'topics/a')).map((record) => record.revision)).toEqual([1, 2]);
      });

      it('reconnects after the server closed every idle connection', async () => {
        const store = await open();
        await store.mutate(alice, 'topics/a', appendLine('one'), rules);

        await query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'engram'",
        );

        expect((await store.mutate(alice, 'topics/a', appendLine('two'), rules)).after?.body).toBe('one\ntwo\n');
        expect(await store.index('alice')).toEqual([{ name: 'topics/a', size: 8, description: 'appended lines' }]);
      });
    });

    describe('text PostgreSQL cannot hold', () => {
      it('refuses a NUL character with a message, changing nothing', async () => {
        const store = await open();
        await store.mutate(alice, 'topics/a', appendLine('clean'), rules);
        const before = {
          entries: await store.get('alice', ['topics/a']),
          history: await store.history('alice', 'topics/a'),
        };

        const attempt = store.mutate(alice, 'topics/a', appendLine('nul \0 here'), rules);

        await expect(attempt).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        await expect(attempt).rejects.toThrow(
          'topics/a cannot be saved: its text contains the NUL character (\\u0000), which this PostgreSQL store cannot hold. Remove it and call again.',
        );
        expect({
          entries: await store.get('alice', ['topics/a']),
          history: await store.history('alice', 'topics/a'),
        }).toEqual(before);
      });
    });

    describe('options', () => {
      it('cancels a statement that runs past statementTimeoutMs, and the write changes nothing', async () => {
        const store = await open({ statementTimeoutMs: 100 });
        await store.mutate(alice, 'topics/a', appendLine('one'), rules);
        const lock = await holdAlicesLock();

        try {
          await expect(store.mutate(alice, 'topics/a', appendLine('two'), rules)).rejects.toThrow(
            'canceling statement due to statement timeout',
          );
        } finally {
          await lock.release();
        }
        expect(await store.get('alice', ['topics/a'])).toEqual([
          expect.objectContaining({ body: 'one\n', revision: 1 }),
        ]);
      });

      it('reads a whole dump past statementTimeoutMs: a scheduled backup on a server pool is not cut short', async () => {
        const store = await open({ statementTimeoutMs: 100 });
        await store.mutate(alice, 'topics/a', appendLine('one'), rules);
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        await client.query('BEGIN');
        await client.query('LOCK TABLE entries IN ACCESS EXCLUSIVE MODE');
        const dumped = store.dump();
        try {
          await blockedBackend();
          // Held three times as long as a statement may run on this store's pool.
          await new Promise((resolve) => setTimeout(resolve, 300));
        } finally {
          await client.query('COMMIT');
          await client.end();
        }
        expect((await dumped).entries.map((entry) => entry.name)).toEqual(['topics/a']);
      });

      it('opens at most `max` connections however many writes arrive', async () => {
        const store = await open({ max: 2 });

        await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            store.mutate({ user: `user-${i}`, label: 'pool' }, 'topics/a', appendLine('x'), rules),
          ),
        );

        const [{ count }] = (await query<{ count: number }>(
          "SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'engram'",
        )) as [{ count: number }];
        expect(count).toBeLessThanOrEqual(2);
        expect(await store.index('user-29')).toEqual([{ name: 'topics/a', size: 2, description: 'appended lines' }]);
      });

      it('keeps historyLimit revisions per entry and reads times as numbers', async () => {
        let time = 1_700_000_000_123;
        const store = await open();
        const limited = { historyLimit: 2, historyCap: rules.historyCap, now: () => time++ };
        for (const line of ['a', 'b', 'c']) await store.mutate(alice, 'topics/a', appendLine(line), limited);

        const history = await store.history('alice', 'topics/a');

        expect(history.map((record) => [record.revision, record.at])).toEqual([
          [2, 1_700_000_000_124],
          [3, 1_700_000_000_125],
        ]);
        expect(await query('SELECT count(*)::int AS n FROM revisions')).toEqual([{ n: 2 }]);
      });
    });
  });
});
