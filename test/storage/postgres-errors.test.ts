/**
 * PostgreSQL's failures in words: each kind of failure becomes a store error with a
 * stable code and a message naming host:port — from the driver's codes one by one, through
 * the Runner's retries (what is retried, what is reported at once), and from a real server
 * whose database accepts only reads.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngramError } from '../../src/memory/model/errors.js';
import type { Caller } from '../../src/memory/port.js';
import { appendLine } from '../../src/storage/contract/setup.js';
import type { Connection, Pool } from '../../src/storage/postgres/driver.js';
import { loadDatabase, loadDatabaseInBatches } from '../../src/storage/postgres/dump.js';
import { explainFailure } from '../../src/storage/postgres/errors.js';
import { openPostgresStore } from '../../src/storage/postgres/index.js';
import { Runner } from '../../src/storage/postgres/transaction.js';
import { createTestDatabase, findTestPostgres, queryPostgres, type TestDatabase } from '../helpers/postgres.js';
import { rules } from '../helpers/rules.js';

const server = await findTestPostgres();
const alice: Caller = { user: 'alice', label: 'postgres-errors-test' };

function failure(code: string | undefined, message: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

describe('explainFailure', () => {
  it.each([
    ['ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.9:5432'],
    ['ECONNRESET', 'read ECONNRESET'],
    ['57P01', 'terminating connection due to administrator command'],
    ['57P03', 'the database system is starting up'],
    ['08006', 'connection failure'],
    [undefined, 'Connection terminated unexpectedly'],
  ])('says the server cannot be reached for %s', (code, message) => {
    const explained = explainFailure(failure(code, message), 'db:5432');
    expect(explained).toBeInstanceOf(EngramError);
    expect(explained).toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: `cannot reach PostgreSQL at db:5432: ${message}. Check that the server is running and that the database URL is right.`,
    });
  });

  it.each([
    [
      '53100',
      'could not extend file: No space left on device',
      'STORE_FULL',
      'The PostgreSQL database at db:5432 is out of disk space (could not extend file: No space left on device). Nothing was changed. Free space on the database server, then try again.',
    ],
    [
      '25006',
      'cannot execute INSERT in a read-only transaction',
      'STORE_READ_ONLY',
      'The PostgreSQL database at db:5432 accepts only reads (cannot execute INSERT in a read-only transaction): it is a standby, or set read-only. Nothing was changed. Point Engram at the primary server, or make the database writable, then try again.',
    ],
    [
      '53300',
      'sorry, too many clients already',
      'STORE_BUSY',
      'The PostgreSQL database at db:5432 has no connection to spare (sorry, too many clients already). Nothing was changed; try again in a moment. If it lasts, lower the pool size of the Engram servers or raise max_connections.',
    ],
    [
      '57014',
      'canceling statement due to statement timeout',
      'STORE_BUSY',
      'The PostgreSQL database at db:5432 is busy: a statement waited too long for a lock or for the server (canceling statement due to statement timeout). Nothing was changed; try again in a moment.',
    ],
    [
      undefined,
      'timeout exceeded when trying to connect',
      'STORE_BUSY',
      "The PostgreSQL database at db:5432 is busy: every connection of this server's pool stayed in use (timeout exceeded when trying to connect). Nothing was changed; try again in a moment.",
    ],
  ])('puts %s in words', (code, message, expectedCode, expectedMessage) => {
    expect(explainFailure(failure(code, message), 'db:5432')).toMatchObject({
      name: 'EngramError',
      code: expectedCode,
      message: expectedMessage,
    });
  });

  it("leaves alone refusals and a statement's own errors", () => {
    const refusal = new EngramError('NOT_FOUND', 'nope');
    const statement = failure('42P01', 'relation "nowhere" does not exist');
    for (const error of [refusal, statement]) expect(explainFailure(error, 'db:5432')).toBe(error);
  });
});

describe('Runner, on a pool that fails', () => {
  /** A pool whose connect fails with what `connect` returns; statements on its connection fail with `statement`. */
  function pool(connect: () => Error | undefined, statement: (text: string) => Error | undefined = () => undefined) {
    let connects = 0;
    const connection: Connection = {
      query: (async ({ text }: { text: string }) => {
        const error = statement(text);
        if (error) throw error;
        return { rows: [], rowCount: 0 };
      }) as Connection['query'],
      release: () => {},
    };
    const fake: Pool = {
      query: connection.query as Pool['query'],
      connect: async () => {
        connects++;
        const error = connect();
        if (error) throw error;
        return connection;
      },
      end: async () => {},
    };
    return { runner: new Runner(fake, 'db:5432'), connects: () => connects };
  }

  it('tries again while the server has no free connection slot, then says it is busy', async () => {
    const { runner, connects } = pool(() => failure('53300', 'sorry, too many clients already'));

    await expect(runner.transaction(async () => 'never')).rejects.toMatchObject({ code: 'STORE_BUSY' });
    expect(connects()).toBe(6);
  });

  it("reports the pool's own timeout at once as busy, not as a refused login", async () => {
    const { runner, connects } = pool(() => failure(undefined, 'timeout exceeded when trying to connect'));

    await expect(runner.transaction(async () => 'never')).rejects.toMatchObject({
      code: 'STORE_BUSY',
      message: expect.stringContaining("every connection of this server's pool stayed in use"),
    });
    expect(connects()).toBe(1);
  });

  it('reports a full disk at once', async () => {
    const { runner, connects } = pool(
      () => undefined,
      (text) => (text === 'INSERT' ? failure('53100', 'could not extend file') : undefined),
    );

    await expect(runner.transaction((db) => db.query({ text: 'INSERT' }))).rejects.toMatchObject({
      code: 'STORE_FULL',
    });
    expect(connects()).toBe(1);
  });

  /** What another store says when it lost its connection: already in words, naming its own server. */
  const sourceLost = () =>
    new EngramError(
      'STORE_UNAVAILABLE',
      'cannot reach PostgreSQL at source:5432: Connection terminated unexpectedly. Check that the server is running and that the database URL is right.',
    );

  it("passes on another store's failure in words at once, though it says a connection was lost", async () => {
    const { runner, connects } = pool(() => undefined);
    const lost = sourceLost();

    await expect(
      runner.transaction(async () => {
        throw lost;
      }),
    ).rejects.toBe(lost);
    expect(connects()).toBe(1);
  });

  it('a load in batches reads its source once, though the source fails before its first batch', async () => {
    const { runner, connects } = pool(() => undefined);
    const lost = Object.assign(new Error('Connection terminated unexpectedly'), { code: undefined });
    let reads = 0;

    await expect(
      loadDatabaseInBatches(
        runner,
        async () => {
          reads++;
          throw lost;
        },
        { replace: true },
      ),
    ).rejects.toMatchObject({ message: expect.stringContaining('Connection terminated unexpectedly') });
    expect({ reads, connects: connects() }).toEqual({ reads: 1, connects: 1 });
  });

  it('a load, whole or in batches, first lifts the timeouts of the server, the role and the database', async () => {
    const sent: string[] = [];
    const { runner } = pool(
      () => undefined,
      (text) => void sent.push(text),
    );
    const tables = { users: [], tokens: [], accounts: [], clients: [], grants: [], grantSecrets: [], proposals: [] };

    await loadDatabaseInBatches(runner, async () => tables, { replace: true }).catch(() => {});
    await loadDatabase(runner, { entries: [], ...tables }, { replace: true }).catch(() => {});

    const begun = sent.flatMap((text, at) => (text.startsWith('BEGIN') ? [sent[at + 1]] : []));
    expect(begun).toEqual([
      expect.stringContaining("set_config('idle_in_transaction_session_timeout', '0', true)"),
      expect.stringContaining("set_config('idle_in_transaction_session_timeout', '0', true)"),
    ]);
  });
});

describe.runIf(server)('a PostgreSQL database that accepts only reads', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase(server!);
  });

  afterAll(async () => {
    await database?.drop();
  });

  it('refuses writes with STORE_READ_ONLY naming the server, still reads, and says so when opening', async () => {
    const store = await openPostgresStore({ connectionString: database.url });
    try {
      await store.mutate(alice, 'topics/a', appendLine('kept'), rules);
      await queryPostgres(server!, `ALTER DATABASE ${database.name} SET default_transaction_read_only = on`);
      // The store's connections end; those it opens next are read-only.
      await queryPostgres(
        server!,
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database.name],
      );
      const readOnly = {
        code: 'STORE_READ_ONLY',
        message: expect.stringMatching(
          new RegExp(`^The PostgreSQL database at ${new URL(database.url).host} accepts only reads \\(`),
        ),
      };

      await expect(store.mutate(alice, 'topics/a', appendLine('more'), rules)).rejects.toMatchObject(readOnly);
      expect(await store.get('alice', ['topics/a'])).toEqual([expect.objectContaining({ body: 'kept\n' })]);
      await expect(openPostgresStore({ connectionString: database.url })).rejects.toMatchObject(readOnly);
    } finally {
      await store.close();
    }
  });
});
