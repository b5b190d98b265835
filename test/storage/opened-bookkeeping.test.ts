/**
 * Noting when entries were opened (EntryStore.recordOpened) is bookkeeping the SQL
 * backends keep out of everything a change moves: on SQLite it moves no user's change
 * counter (so another process's watchers are not told and its kept index stays), fires
 * no trigger (the search backlog does not grow) and adds no revision; on PostgreSQL no
 * index holds the column (so the update can be HOT) and the change counter stays too.
 */

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/memory/port.js';
import { put } from '../../src/storage/contract/setup.js';
import { openPostgresStore, type PostgresStore } from '../../src/storage/postgres/index.js';
import { openSqliteStore, type SqliteStore } from '../../src/storage/sqlite/index.js';
import { createTestDatabase, findTestPostgres, queryPostgres, type TestDatabase } from '../helpers/postgres.js';
import { rules } from '../helpers/rules.js';
import { tempDir } from '../helpers/temp-dir.js';

const server = await findTestPostgres();
const alice: Caller = { user: 'alice', label: 'test' };
const HOUR = 3_600_000;

describe('recordOpened on SQLite', () => {
  const stores: SqliteStore[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });

  it('moves no change counter, fires no trigger, and leaves another connection’s watchers and index alone', async () => {
    const path = tempDir().file('memory.db');
    const writer = openSqliteStore({ path });
    const other = openSqliteStore({ path });
    stores.push(writer, other);
    await writer.mutate(alice, 'topics/a', put('a\n'), rules);
    await writer.mutate(alice, 'topics/b', put('b\n'), rules);
    const told: unknown[] = [];
    const stop = await other.watch('alice', (change) => told.push(change));
    const index = await other.index('alice');
    const file = new Database(path, { readonly: true });
    const counters = () => ({
      changes: file.prepare("SELECT changes FROM users WHERE user_id = 'alice'").pluck().get(),
      pending: file.prepare('SELECT count(*) FROM search_pending').pluck().get(),
      revisions: file.prepare('SELECT count(*) FROM revisions').pluck().get(),
    });
    const before = counters();

    await writer.recordOpened([{ user: 'alice', name: 'topics/a', at: 1_000 }], HOUR);
    // Longer than a watcher's poll (250 ms): a moved counter would be told by now.
    await new Promise((resolve) => setTimeout(resolve, 400));

    try {
      expect(counters()).toEqual(before);
      expect(told).toEqual([]);
      expect(await other.index('alice')).toBe(index);
      expect((await other.overview('alice')).entries.map((row) => row.opened)).toEqual([1_000, undefined]);
    } finally {
      stop();
      file.close();
    }
  });
});

describe.skipIf(!server)('recordOpened on PostgreSQL', () => {
  let database: TestDatabase | undefined;
  let store: PostgresStore | undefined;
  afterEach(async () => {
    await store?.close();
    await database?.drop();
    store = undefined;
    database = undefined;
  });

  it('is an update no index holds (HOT), and moves no change counter', async () => {
    database = await createTestDatabase(server!);
    store = await openPostgresStore({ connectionString: database.url });
    await store.mutate(alice, 'topics/a', put('a\n'), rules);
    const changes = "SELECT changes FROM users WHERE user_id = 'alice'";
    const before = await queryPostgres(database.url, changes);

    await store.recordOpened([{ user: 'alice', name: 'topics/a', at: 1_000 }], HOUR);

    expect(await queryPostgres(database.url, changes)).toEqual(before);
    expect((await store.overview('alice')).entries.map((row) => row.opened)).toEqual([1_000]);
    const indexed = await queryPostgres<{ index: string }>(
      database.url,
      `SELECT i.indexrelid::regclass::text AS index FROM pg_index i
         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attname = 'opened'
       WHERE i.indrelid = 'entries'::regclass
         AND (a.attnum = ANY (i.indkey) OR pg_get_expr(i.indexprs, i.indrelid) LIKE '%opened%'
           OR pg_get_expr(i.indpred, i.indrelid) LIKE '%opened%')`,
    );
    expect(indexed).toEqual([]);
  });
});
