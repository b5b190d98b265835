/**
 * Upgrading a database written before usage counted names, descriptions, live entries and
 * history: opening it with this Engram recounts every user's figures from what is stored
 * (adding the users rows that were missing), marks the trash's revisions, and the history
 * cap then trims the upgraded data like any other. Once for SQLite (schema 4 to 5), once
 * for PostgreSQL (schema 1 to 2), skipped with a notice where no PostgreSQL is available.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Caller, Store } from '../../src/memory/port.js';
import { appendLine, bytes, recount } from '../../src/storage/contract/setup.js';
import { openPostgresStore } from '../../src/storage/postgres/index.js';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/storage/postgres/migrations.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { createTestDatabase, findTestPostgres, queryPostgres, type TestDatabase } from '../helpers/postgres.js';
import { rules } from '../helpers/rules.js';
import { migrateSqliteTo } from '../helpers/sqlite-schema.js';

const alice: Caller = { user: 'alice', label: 'upgrade-test' };

/**
 * What the old database holds. Alice: topics/a, live, two revisions; topics/gone, dropped,
 * created then dropped. Bob: people/eva, live, with multi-byte text and no users row.
 * Alice's users row holds the old figure, the sum of her live bodies.
 */
const ENTRIES = [
  {
    user: 'alice',
    name: 'topics/a',
    description: 'about a',
    body: 'one\ntwo\n',
    revision: 2,
    droppedAt: null,
    revisions: [
      { revision: 1, operation: 'create', at: 1, body: 'one\n' },
      { revision: 2, operation: 'append', at: 2, body: 'one\ntwo\n' },
    ],
  },
  {
    user: 'alice',
    name: 'topics/gone',
    description: 'gone',
    body: 'bye\n',
    revision: 2,
    droppedAt: 5,
    revisions: [
      { revision: 1, operation: 'create', at: 3, body: 'bye\n' },
      { revision: 2, operation: 'drop', at: 5, body: 'bye\n' },
    ],
  },
  {
    user: 'bob',
    name: 'people/eva',
    description: 'Éva ✓',
    body: 'ünï\n',
    revision: 1,
    droppedAt: null,
    revisions: [{ revision: 1, operation: 'create', at: 4, body: 'ünï\n' }],
  },
] as const;

/** The figures the upgrade must arrive at, counted by hand. */
const EXPECTED = {
  alice: {
    totalBytes: bytes('topics/a') + bytes('about a') + bytes('one\ntwo\n'),
    entries: 1,
    historyBytes: 7 + 4 + (7 + 8) + (4 + 4) * 2,
  },
  bob: { totalBytes: bytes('people/eva') + bytes('Éva ✓') + bytes('ünï\n'), entries: 1, historyBytes: 8 + 6 },
};

/** What every upgraded store must show, then how the history cap treats the upgraded data. */
async function expectUpgraded(open: () => Promise<Store>): Promise<void> {
  const store = await open();
  const dump = await store.dump();
  expect(dump.users).toEqual([
    { user: 'alice', ...EXPECTED.alice },
    { user: 'bob', ...EXPECTED.bob },
  ]);
  expect(dump.users).toEqual(recount(dump));
  expect(await store.usage('alice')).toEqual({ totalBytes: EXPECTED.alice.totalBytes, entries: 1 });
  expect(await store.usage('bob')).toEqual({ totalBytes: EXPECTED.bob.totalBytes, entries: 1 });
  await store.close();

  // 42 bytes of history, and a revision of 21 more: over a cap of 40, the three revisions
  // that are not the latest of their entry go, oldest first; the trash keeps its drop.
  const capped = await open();
  await capped.mutate(alice, 'topics/a', appendLine('three'), { ...rules, historyCap: 40 });
  expect((await capped.history('alice', 'topics/a')).map((record) => record.revision)).toEqual([3]);
  expect((await capped.history('alice', 'topics/gone')).map((record) => record.revision)).toEqual([2]);
  const after = await capped.dump();
  expect(after.users).toEqual(recount(after));
  expect(after.users[0]?.historyBytes).toBe(7 + bytes('one\ntwo\nthree\n') + 8);
  await capped.close();
}

describe('SQLite: a database at schema version 4', () => {
  let folder: string;
  let path: string;

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-usage-upgrade-'));
    path = join(folder, 'memory.db');
    const db = new Database(path);
    try {
      migrateSqliteTo(db, 4);
      const addEntry = db.prepare(`INSERT INTO entries
        (user_id, name, description, size, body, created, updated, revision, dropped_at, dropped_by)
        VALUES (?, ?, ?, ?, ?, 1, 1, ?, ?, ?)`);
      const addRevision =
        db.prepare(`INSERT INTO revisions (entry_id, revision, operation, actor, at, description, body)
        VALUES (?, ?, ?, 'cli', ?, ?, ?)`);
      for (const e of ENTRIES) {
        const dropped = e.droppedAt === null ? null : 'cli';
        const { lastInsertRowid } = addEntry.run(
          e.user,
          e.name,
          e.description,
          bytes(e.body),
          e.body,
          e.revision,
          e.droppedAt,
          dropped,
        );
        for (const r of e.revisions) {
          addRevision.run(lastInsertRowid, r.revision, r.operation, r.at, e.description, r.body);
        }
      }
      db.exec(`INSERT INTO users (user_id, total_bytes) VALUES ('alice', 8)`);
    } finally {
      db.close();
    }
  });

  afterEach(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('gets every user its usage and history recounted on opening, and the history cap works on it', async () => {
    await expectUpgraded(async () => openSqliteStore({ path }));
  });

  it('marks the latest revision of each dropped entry as the trash’s, and no other', async () => {
    await openSqliteStore({ path }).close();

    const db = new Database(path, { readonly: true });
    try {
      const marks = db
        .prepare(`SELECT e.name, r.revision, r.in_trash FROM revisions r JOIN entries e ON e.id = r.entry_id
          ORDER BY e.name, r.revision`)
        .raw()
        .all();
      expect(marks).toEqual([
        ['people/eva', 1, 0],
        ['topics/a', 1, 0],
        ['topics/a', 2, 0],
        ['topics/gone', 1, 0],
        ['topics/gone', 2, 1],
      ]);
    } finally {
      db.close();
    }
  });
});

const server = await findTestPostgres();

describe.skipIf(!server)('PostgreSQL: a database at schema version 1', () => {
  let database: TestDatabase;

  beforeEach(async () => {
    database = await createTestDatabase(server!);
    const run = (sql: string, params: unknown[] = []) => queryPostgres<{ id: number }>(database.url, sql, params);
    await run(POSTGRES_MIGRATIONS[0] as string);
    await run('CREATE TABLE schema_version (version integer NOT NULL); INSERT INTO schema_version VALUES (1)');
    for (const e of ENTRIES) {
      const [row] = await run(
        `INSERT INTO entries (user_id, name, description, size, body, created, updated, revision, dropped_at, dropped_by)
         VALUES ($1, $2, $3, $4, $5, 1, 1, $6, $7, $8) RETURNING id`,
        [e.user, e.name, e.description, bytes(e.body), e.body, e.revision, e.droppedAt, e.droppedAt && 'cli'],
      );
      for (const r of e.revisions) {
        await run(
          `INSERT INTO revisions (user_id, entry_id, revision, operation, actor, at, description, body)
           VALUES ($1, $2, $3, $4, 'cli', $5, $6, $7)`,
          [e.user, row!.id, r.revision, r.operation, r.at, e.description, r.body],
        );
      }
    }
    await run(`INSERT INTO users (user_id, total_bytes) VALUES ('alice', 8)`);
  });

  afterEach(async () => {
    await database.drop();
  });

  it('gets every user its usage and history recounted on opening, and the history cap works on it', async () => {
    await expectUpgraded(() => openPostgresStore({ connectionString: database.url }));
  });

  it('marks the latest revision of each dropped entry as the trash’s, and no other', async () => {
    await (await openPostgresStore({ connectionString: database.url })).close();

    const marks = await queryPostgres(
      database.url,
      `SELECT e.name, r.revision, r.in_trash FROM revisions r JOIN entries e ON e.user_id = r.user_id AND e.id = r.entry_id
       ORDER BY e.name COLLATE "C", r.revision`,
    );
    expect(marks).toEqual([
      { name: 'people/eva', revision: 1, in_trash: false },
      { name: 'topics/a', revision: 1, in_trash: false },
      { name: 'topics/a', revision: 2, in_trash: false },
      { name: 'topics/gone', revision: 1, in_trash: false },
      { name: 'topics/gone', revision: 2, in_trash: true },
    ]);
  });
});
