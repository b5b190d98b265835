/**
 * The search indexes below the Store port: a database written before search (SQLite
 * schema 6, PostgreSQL schema 3) gets its live entries indexed on opening, dropped ones
 * found again once undropped; on SQLite a purged entry's words leave the database files
 * (the purge merges the whole index, and SQLite zeroes what it frees); PostgreSQL keeps a
 * GIN index of the live entries' vectors. PostgreSQL parts are skipped with a notice where none runs.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemory } from '../../src/memory/memory.js';
import type { Caller, Store } from '../../src/memory/port.js';
import { bytes, put } from '../../src/storage/contract/setup.js';
import { openPostgresStore } from '../../src/storage/postgres/index.js';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/storage/postgres/migrations.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { createTestDatabase, findTestPostgres, queryPostgres, type TestDatabase } from '../helpers/postgres.js';
import { rules } from '../helpers/rules.js';
import { migrateSqliteTo } from '../helpers/sqlite-schema.js';

const alice: Caller = { user: 'alice', label: 'search-index-test' };

/** What the old database holds: two live entries of alice's, one dropped, one of bob's. */
const ENTRIES = [
  { user: 'alice', name: 'topics/cafe', description: 'Café notes', body: 'Crème brûlée.\n', dropped: false },
  { user: 'alice', name: 'topics/tea', description: 'Tea', body: 'Green tea, see example.com/tea\n', dropped: false },
  { user: 'alice', name: 'topics/gone', description: 'Gone', body: 'Green but dropped.\n', dropped: true },
  { user: 'bob', name: 'topics/tea', description: 'Tea', body: 'Black tea.\n', dropped: false },
];

/** What a search of alice's shows, by names, through the Memory service. */
async function found(store: Store, query: string): Promise<string[]> {
  return (await createMemory({ store }).search(alice, query)).map((hit) => hit.name);
}

/** The upgraded store finds the live entries by their folded words, not the dropped one until undropped. */
async function expectIndexed(store: Store): Promise<void> {
  expect(await found(store, 'creme brulee')).toEqual(['topics/cafe']);
  expect(await found(store, 'green')).toEqual(['topics/tea']);
  expect(await found(store, 'example')).toEqual(['topics/tea']);
  expect(await found(store, 'black')).toEqual([]);
  await store.undrop(alice, 'topics/gone', rules);
  expect(await found(store, 'green')).toEqual(['topics/gone', 'topics/tea']);
  await store.mutate(alice, 'topics/cafe', put('Espresso.\n', 'Coffee'), rules);
  expect(await found(store, 'creme')).toEqual([]);
  expect(await found(store, 'espresso')).toEqual(['topics/cafe']);
}

describe('SQLite: a database at schema version 6, before search', () => {
  let folder: string;
  let path: string;

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-search-upgrade-'));
    path = join(folder, 'memory.db');
    const db = new Database(path);
    try {
      migrateSqliteTo(db, 6);
      const addEntry = db.prepare(`INSERT INTO entries
        (user_id, name, description, size, body, created, updated, revision, dropped_at, dropped_by)
        VALUES (?, ?, ?, ?, ?, 1, 1, 1, ?, ?)`);
      for (const e of ENTRIES) {
        addEntry.run(
          e.user,
          e.name,
          e.description,
          bytes(e.body),
          e.body,
          e.dropped ? 1 : null,
          e.dropped ? 'cli' : null,
        );
      }
    } finally {
      db.close();
    }
  });

  afterEach(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('indexes the live entries on opening, and follows every write after', async () => {
    const store = openSqliteStore({ path });
    try {
      await expectIndexed(store);
    } finally {
      await store.close();
    }
  });
});

describe('SQLite: the words of a purged entry', () => {
  let folder: string;
  let path: string;
  let store: Store;
  /** A word no other test writes, and the files of the database's folder that hold it. */
  const word = `zzq${Math.random().toString(36).slice(2, 10)}`;
  const holding = () =>
    readdirSync(folder).filter((name) => readFileSync(join(folder, name)).includes(Buffer.from(word)));

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-search-purge-'));
    path = join(folder, 'memory.db');
    store = openSqliteStore({ path });
  });

  afterEach(async () => {
    await store.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('leave the database files, not only the text', async () => {
    await store.mutate(alice, 'topics/secret', put(`the word ${word} here\n`, 'Secret'), rules);
    await store.mutate(alice, 'topics/kept', put('kept\n', 'Kept'), rules);
    expect(holding()).not.toEqual([]);

    await store.purge('alice', 'topics/secret', { includeLive: true });

    expect(holding()).toEqual([]);
    expect(await found(store, word)).toEqual([]);
    expect(await found(store, 'kept')).toEqual(['topics/kept']);
  });

  it('leave them too when an edit had removed them before', async () => {
    await store.mutate(alice, 'topics/secret', put(`the word ${word} here\n`, 'Secret'), rules);
    expect(await found(store, word)).toEqual(['topics/secret']);
    await store.mutate(alice, 'topics/secret', put('no word here\n', 'Secret'), rules);
    expect(await found(store, word)).toEqual([]);
    expect(await found(store, 'here')).toEqual(['topics/secret']);

    await store.purge('alice', 'topics/secret', { includeLive: true });

    expect(holding()).toEqual([]);
    // FTS5's secure-delete is off (schema 21): on this table it removed no word, the merge does.
    const db = new Database(path, { readonly: true });
    try {
      expect(db.prepare("SELECT v FROM entries_search_config WHERE k = 'secure-delete'").pluck().get()).toBe(0);
    } finally {
      db.close();
    }
  });
});

const server = await findTestPostgres();

describe.skipIf(!server)('PostgreSQL: a database at schema version 3, before search', () => {
  let database: TestDatabase;

  beforeEach(async () => {
    database = await createTestDatabase(server!);
    const run = (sql: string, params: unknown[] = []) => queryPostgres(database.url, sql, params);
    for (const step of POSTGRES_MIGRATIONS.slice(0, 3)) await run(step as string);
    await run('CREATE TABLE schema_version (version integer NOT NULL); INSERT INTO schema_version VALUES (3)');
    for (const e of ENTRIES) {
      await run(
        `INSERT INTO entries (user_id, name, description, size, body, created, updated, revision, dropped_at, dropped_by)
         VALUES ($1, $2, $3, $4, $5, 1, 1, 1, $6, $7)`,
        [e.user, e.name, e.description, bytes(e.body), e.body, e.dropped ? 1 : null, e.dropped ? 'cli' : null],
      );
    }
  });

  afterEach(async () => {
    await database.drop();
  });

  it('computes every search vector on opening, and follows every write after', async () => {
    const store = await openPostgresStore({ connectionString: database.url });
    try {
      await expectIndexed(store);
      const [row] = await queryPostgres<{ missing: number }>(
        database.url,
        'SELECT count(*)::integer AS missing FROM entries WHERE search IS NULL',
      );
      expect(row?.missing).toBe(0);
    } finally {
      await store.close();
    }
  });

  it("keeps a GIN index of the live entries' search vectors", async () => {
    await (await openPostgresStore({ connectionString: database.url })).close();

    const [index] = await queryPostgres<{ indexdef: string }>(
      database.url,
      "SELECT indexdef FROM pg_indexes WHERE tablename = 'entries' AND indexname = 'entries_search'",
    );
    expect(index?.indexdef).toMatch(/USING gin \(search\) WHERE \(dropped_at IS NULL\)$/);
  });
});
