/**
 * Upgrading a database to the schema where each body is stored once, in its revision
 * (SQLite schema 11, PostgreSQL schema 8): every byte of every entry and revision is kept
 * (an entry no revision of which holds its text keeps its own), no revision goes with the
 * rewritten entries, and writes after the upgrade read and keep the bodies as before.
 * PostgreSQL's is skipped, with a notice, where no PostgreSQL is available.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/memory/port.js';
import { appendLine, bytes } from '../../src/storage/contract/setup.js';
import type { Queryable } from '../../src/storage/postgres/driver.js';
import { openPostgresStore } from '../../src/storage/postgres/index.js';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/storage/postgres/migrations.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { createTestDatabase, findTestPostgres, queryPostgres, type TestDatabase } from '../helpers/postgres.js';
import { rules } from '../helpers/rules.js';
import { migrateSqliteTo } from '../helpers/sqlite-schema.js';

const alice: Caller = { user: 'alice', label: 'body-once-test' };

/**
 * What the old database holds: entries whose latest revision holds their body (live and
 * dropped), one with no revision at all, and one whose only revision holds other text.
 */
const ENTRIES = [
  {
    user: 'alice',
    name: 'topics/a',
    body: 'one\ntwo\n',
    revision: 2,
    droppedAt: null,
    revisions: [
      { revision: 1, operation: 'create', body: 'one\n' },
      { revision: 2, operation: 'append', body: 'one\ntwo\n' },
    ],
  },
  {
    user: 'alice',
    name: 'topics/gone',
    body: 'bye ✓\n',
    revision: 2,
    droppedAt: 5,
    revisions: [
      { revision: 1, operation: 'create', body: 'bye ✓\n' },
      { revision: 2, operation: 'drop', body: 'bye ✓\n' },
    ],
  },
  { user: 'bob', name: 'people/eva', body: 'ünï\n', revision: 1, droppedAt: null, revisions: [] },
  {
    user: 'alice',
    name: 'topics/odd',
    body: 'by hand\n',
    revision: 1,
    droppedAt: null,
    revisions: [{ revision: 1, operation: 'create', body: 'as written\n' }],
  },
] as const;

const ENTRY_ROWS = 'SELECT id, user_id, name, description, size, created, updated, revision, dropped_at, dropped_by';

function read<T>(path: string, query: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true });
  try {
    return query(db);
  } finally {
    db.close();
  }
}

describe('SQLite: a database at schema version 10, bodies stored twice', () => {
  let folder: string;
  let path: string;
  let entriesBefore: unknown[];
  let revisionsBefore: unknown[];

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-body-once-'));
    path = join(folder, 'memory.db');
    const db = new Database(path);
    try {
      migrateSqliteTo(db, 10);
      const addEntry = db.prepare(`INSERT INTO entries
        (user_id, name, description, size, body, created, updated, revision, dropped_at, dropped_by)
        VALUES (?, ?, 'about it', ?, ?, 1, 2, ?, ?, ?)`);
      const addRevision = db.prepare(`INSERT INTO revisions
        (user_id, entry_id, revision, operation, actor, at, description, body, in_trash) VALUES (?, ?, ?, ?, 'cli', ?, 'about it', ?, 0)`);
      for (const e of ENTRIES) {
        const { lastInsertRowid } = addEntry.run(
          e.user,
          e.name,
          bytes(e.body),
          e.body,
          e.revision,
          e.droppedAt,
          e.droppedAt === null ? null : 'cli',
        );
        for (const r of e.revisions)
          addRevision.run(e.user, lastInsertRowid, r.revision, r.operation, r.revision, r.body);
      }
      entriesBefore = db.prepare(`${ENTRY_ROWS}, body FROM entries ORDER BY id`).all();
      revisionsBefore = db.prepare('SELECT * FROM revisions ORDER BY rowid').all();
    } finally {
      db.close();
    }
  });

  afterEach(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('keeps every byte: each body once in its revision, and in the entry only where no revision holds it', async () => {
    const store = openSqliteStore({ path });
    await store.close();

    read(path, (db) => {
      expect(db.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
      expect(db.pragma('foreign_key_check')).toEqual([]);
      // The columns the revisions had then: a later step may add one (a revision's note).
      const columns = Object.keys(revisionsBefore[0] ?? {}).join(', ');
      expect(db.prepare(`SELECT ${columns} FROM revisions ORDER BY rowid`).all()).toEqual(revisionsBefore);
      expect(db.prepare(`SELECT name, body FROM entries ORDER BY id`).raw().all()).toEqual([
        ['topics/a', null],
        ['topics/gone', null],
        ['people/eva', 'ünï\n'],
        ['topics/odd', 'by hand\n'],
      ]);
    });

    const reopened = openSqliteStore({ path });
    try {
      const dump = await reopened.dump();
      expect(
        dump.entries.map(({ id, user, name, description, size, created, updated, revision, droppedAt, droppedBy }) => ({
          id,
          user_id: user,
          name,
          description,
          size,
          created,
          updated,
          revision,
          dropped_at: droppedAt,
          dropped_by: droppedBy,
        })),
      ).toEqual(read(path, (db) => db.prepare(`${ENTRY_ROWS} FROM entries ORDER BY id`).all()));
      expect(dump.entries.map((entry) => entry.body)).toEqual(
        (entriesBefore as Array<{ body: string }>).map((row) => row.body),
      );
      expect((await reopened.trash('alice')).map((entry) => entry.body)).toEqual(['bye ✓\n']);
      expect((await reopened.get('alice', ['topics/a', 'topics/odd'])).map((entry) => entry.body)).toEqual([
        'one\ntwo\n',
        'by hand\n',
      ]);

      // Written after the upgrade: the new revision holds the body, the entry no longer does.
      await reopened.mutate(alice, 'topics/odd', appendLine('more'), rules);
      await reopened.mutate({ user: 'bob', label: 'body-once-test' }, 'people/eva', appendLine('more'), rules);
      await reopened.undrop(alice, 'topics/gone', rules);
      expect((await reopened.get('alice', ['topics/gone', 'topics/odd'])).map((entry) => entry.body)).toEqual([
        'bye ✓\n',
        'by hand\nmore\n',
      ]);
      expect((await reopened.get('bob', ['people/eva']))[0]?.body).toBe('ünï\nmore\n');
      expect((await reopened.history('alice', 'topics/odd')).map((record) => record.body)).toEqual([
        'as written\n',
        'by hand\nmore\n',
      ]);
    } finally {
      await reopened.close();
    }
    expect(read(path, (db) => db.prepare('SELECT count(*) FROM entries WHERE body IS NOT NULL').pluck().get())).toBe(0);
  });

  it('keeps a body in its entry when a history limit of 0 trims the revision that held it', async () => {
    const store = openSqliteStore({ path });
    try {
      await store.mutate(alice, 'topics/a', appendLine('three'), { ...rules, historyLimit: 0 });
      expect(await store.history('alice', 'topics/a')).toEqual([]);
      expect((await store.get('alice', ['topics/a']))[0]?.body).toBe('one\ntwo\nthree\n');
    } finally {
      await store.close();
    }
  });
});

const server = await findTestPostgres();

/** Every column of the entries but the search vector, by id. */
const POSTGRES_ENTRY_ROWS = `SELECT id, user_id, name, description, size, body, created, updated, revision, dropped_at,
  dropped_by FROM entries ORDER BY id`;

describe.skipIf(!server)('PostgreSQL: a database at schema version 7, bodies stored twice', () => {
  let database: TestDatabase;
  let entriesBefore: Array<{ body: string }>;
  let revisionsBefore: unknown[];

  beforeEach(async () => {
    database = await createTestDatabase(server!);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      for (const step of POSTGRES_MIGRATIONS.slice(0, 7)) {
        if (typeof step === 'string') await client.query(step);
        else await step(client as unknown as Queryable);
      }
      await client.query(
        'CREATE TABLE schema_version (version integer NOT NULL); INSERT INTO schema_version VALUES (7)',
      );
      for (const e of ENTRIES) {
        const { rows } = await client.query<{ id: string }>(
          `INSERT INTO entries (user_id, name, description, size, body, created, updated, revision, dropped_at, dropped_by,
             search)
           VALUES ($1, $2, 'about it', $3, $4, 1, 2, $5, $6, $7, to_tsvector('simple', $4)) RETURNING id`,
          [e.user, e.name, bytes(e.body), e.body, e.revision, e.droppedAt, e.droppedAt === null ? null : 'cli'],
        );
        for (const r of e.revisions) {
          await client.query(
            `INSERT INTO revisions (user_id, entry_id, revision, operation, actor, at, description, body, in_trash)
             VALUES ($1, $2, $3, $4, 'cli', $5, 'about it', $6, $7)`,
            [e.user, rows[0]!.id, r.revision, r.operation, r.revision, r.body, r.operation === 'drop'],
          );
        }
        await client.query(`INSERT INTO users (user_id) VALUES ($1) ON CONFLICT (user_id) DO NOTHING`, [e.user]);
      }
    } finally {
      await client.end();
    }
    entriesBefore = await queryPostgres(database.url, POSTGRES_ENTRY_ROWS);
    revisionsBefore = await queryPostgres(database.url, 'SELECT * FROM revisions ORDER BY user_id, entry_id, revision');
  });

  afterEach(async () => {
    await database.drop();
  });

  it('keeps every byte: each body once in its revision, and in the entry only where no revision holds it', async () => {
    await (await openPostgresStore({ connectionString: database.url })).close();

    // The columns the revisions had then: a later step may add one (a revision's note).
    const columns = Object.keys(revisionsBefore[0] ?? {}).join(', ');
    expect(
      await queryPostgres(database.url, `SELECT ${columns} FROM revisions ORDER BY user_id, entry_id, revision`),
    ).toEqual(revisionsBefore);
    const entriesAfter = await queryPostgres<{ body: string | null }>(database.url, POSTGRES_ENTRY_ROWS);
    expect(entriesAfter.map((row) => row.body)).toEqual([null, null, 'ünï\n', 'by hand\n']);
    expect(entriesAfter.map(({ body: _, ...row }) => row)).toEqual(entriesBefore.map(({ body: _, ...row }) => row));

    const reopened = await openPostgresStore({ connectionString: database.url });
    try {
      const dump = await reopened.dump();
      expect(dump.entries.map((entry) => entry.body)).toEqual(entriesBefore.map((row) => row.body));
      expect((await reopened.trash('alice')).map((entry) => entry.body)).toEqual(['bye ✓\n']);
      expect((await reopened.get('alice', ['topics/a', 'topics/odd'])).map((entry) => entry.body).sort()).toEqual([
        'by hand\n',
        'one\ntwo\n',
      ]);
      expect((await reopened.search('alice', ['two'], { limit: 5 })).map((hit) => hit.name)).toEqual(['topics/a']);

      // Written after the upgrade: the new revision holds the body, the entry no longer does.
      await reopened.mutate(alice, 'topics/odd', appendLine('more'), rules);
      await reopened.mutate({ user: 'bob', label: 'body-once-test' }, 'people/eva', appendLine('more'), rules);
      await reopened.undrop(alice, 'topics/gone', rules);
      expect((await reopened.get('alice', ['topics/gone', 'topics/odd'])).map((entry) => entry.body).sort()).toEqual([
        'by hand\nmore\n',
        'bye ✓\n',
      ]);
      expect((await reopened.get('bob', ['people/eva']))[0]?.body).toBe('ünï\nmore\n');
      expect((await reopened.history('alice', 'topics/odd')).map((record) => record.body)).toEqual([
        'as written\n',
        'by hand\nmore\n',
      ]);
    } finally {
      await reopened.close();
    }
    expect(
      await queryPostgres(database.url, 'SELECT count(*)::integer AS n FROM entries WHERE body IS NOT NULL'),
    ).toEqual([{ n: 0 }]);
  });

  it('keeps a body in its entry when a history limit of 0 trims the revision that held it', async () => {
    const store = await openPostgresStore({ connectionString: database.url });
    try {
      await store.mutate(alice, 'topics/a', appendLine('three'), { ...rules, historyLimit: 0 });
      expect(await store.history('alice', 'topics/a')).toEqual([]);
      expect((await store.get('alice', ['topics/a']))[0]?.body).toBe('one\ntwo\nthree\n');
      const [row] = await queryPostgres<{ body: string | null }>(
        database.url,
        `SELECT body FROM entries WHERE name = 'topics/a'`,
      );
      expect(row?.body).toBe('one\ntwo\nthree\n');
    } finally {
      await store.close();
    }
  });
});
