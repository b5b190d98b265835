/**
 * Upgrades that cannot lose a memory: every fixture of test/fixtures/schemas (a database
 * made by each schema version main has had, by that version's own code; see
 * scripts/make-schema-fixtures.mjs) opened by today's code, which must find everything
 * the old code itself read back (the fixture's manifest): every entry with its body and
 * description byte for byte, every revision, the trash, every token (its secret still
 * signs in), every account (its password still signs in) and every connected app (its
 * OAuth tokens still work). An upgrade that fails part-way leaves the database as the old
 * Engram left it (one transaction), and runs whole once the cause is gone. Both backends;
 * PostgreSQL through a database of its own per fixture, skipped with a notice where no
 * server is available.
 */

import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { StorageBackend } from '../../src/storage/backend.js';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/storage/postgres/migrations.js';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/storage/sqlite/migrations.js';
import { createTestDatabase, findTestPostgres, queryPostgres, type TestDatabase } from '../helpers/postgres.js';
import { expectEverythingKept, FIXTURES, fixtures, open } from '../helpers/schema-fixtures.js';
import { tempDir } from '../helpers/temp-dir.js';

const server = await findTestPostgres();

describe('an upgrade to this Engram keeps everything', () => {
  let opened: { app: App; store: StorageBackend } | undefined;
  afterEach(async () => {
    await opened?.app.close();
    opened = undefined;
  });

  describe('SQLite', () => {
    const all = fixtures('sqlite');

    it('has a fixture of every version before this one but 2, which no commit ever had as its newest', () => {
      // This version's own fixture is made once its commit is on main (make-schema-fixtures.mjs).
      const versions = all.map(({ manifest }) => manifest.schemaVersion);
      expect(versions.filter((version) => version < SQLITE_MIGRATIONS.length)).toEqual(
        Array.from({ length: SQLITE_MIGRATIONS.length - 1 }, (_, at) => at + 1).filter((version) => version !== 2),
      );
      expect(Math.max(...versions)).toBeLessThanOrEqual(SQLITE_MIGRATIONS.length);
    });

    it.each(all)('$name, made by the Engram of its day', async ({ name, manifest }) => {
      const path = tempDir().file('memory.db');
      copyFileSync(join(FIXTURES, `${name}.db`), path);
      const upgraded = Date.now();

      opened = await open({ kind: 'sqlite', path });

      await expectEverythingKept(opened, manifest);
      await expectOpeningsFrom(opened.store, manifest.schemaVersion < SQLITE_OPENINGS_SCHEMA ? upgraded : undefined);
      const db = new Database(path, { readonly: true });
      try {
        expect(db.prepare('SELECT version FROM schema_version').all()).toEqual([{ version: SQLITE_MIGRATIONS.length }]);
        expect(db.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
        expect(db.pragma('foreign_key_check')).toEqual([]);
      } finally {
        db.close();
      }
    });

    it('that fails part-way leaves the file as the old Engram left it, and opens once the cause is gone', async () => {
      const { name, manifest } = all.find((fixture) => fixture.manifest.schemaVersion === 3)!;
      const path = tempDir().file('memory.db');
      copyFileSync(join(FIXTURES, `${name}.db`), path);
      // Step 6 creates the accounts table: one made by hand makes it fail, after steps 4 and 5 ran.
      execSqlite(path, 'CREATE TABLE accounts (x)');
      const before = sqliteSchema(path);

      await expect(open({ kind: 'sqlite', path })).rejects.toThrow('table accounts already exists');

      expect(sqliteSchema(path)).toEqual(before);
      execSqlite(path, 'DROP TABLE accounts');
      opened = await open({ kind: 'sqlite', path });
      await expectEverythingKept(opened, manifest);
    });
  });

  describe.skipIf(!server)('PostgreSQL', () => {
    const all = fixtures('postgres');
    let database: TestDatabase | undefined;
    afterEach(async () => {
      await opened?.app.close();
      opened = undefined;
      await database?.drop();
      database = undefined;
    });

    it('has a fixture of every version before this one but 4, which no commit ever had as its newest', () => {
      // This version's own fixture is made once its commit is on main (make-schema-fixtures.mjs).
      const versions = all.map(({ manifest }) => manifest.schemaVersion);
      expect(versions.filter((version) => version < POSTGRES_MIGRATIONS.length)).toEqual(
        Array.from({ length: POSTGRES_MIGRATIONS.length - 1 }, (_, at) => at + 1).filter((version) => version !== 4),
      );
      expect(Math.max(...versions)).toBeLessThanOrEqual(POSTGRES_MIGRATIONS.length);
    });

    it.each(all)('$name, made by the Engram of its day', async ({ name, manifest }) => {
      database = await createTestDatabase(server!);
      await queryPostgres(database.url, readFileSync(join(FIXTURES, `${name}.sql`), 'utf8'));

      const upgraded = Date.now();

      opened = await open({ kind: 'postgres', url: database.url });

      await expectEverythingKept(opened, manifest);
      await expectOpeningsFrom(opened.store, manifest.schemaVersion < POSTGRES_OPENINGS_SCHEMA ? upgraded : undefined);
      // A user's first row starts past every change counter the database held (migration 12).
      expect(
        await queryPostgres(
          database.url,
          'SELECT (SELECT changes FROM change_floor) = (SELECT coalesce(max(changes), 0) FROM users) AS past_all',
        ),
      ).toEqual([{ past_all: true }]);
      expect(await queryPostgres(database.url, 'SELECT version FROM schema_version')).toEqual([
        { version: POSTGRES_MIGRATIONS.length },
      ]);
    });

    it('that fails part-way is rolled back whole (one transaction), and runs once the cause is gone', async () => {
      const { name, manifest } = all.find((fixture) => fixture.manifest.schemaVersion === 1)!;
      database = await createTestDatabase(server!);
      await queryPostgres(database.url, readFileSync(join(FIXTURES, `${name}.sql`), 'utf8'));
      // Step 3 creates the accounts table: one made by hand makes it fail, after step 2 ran.
      await queryPostgres(database.url, 'CREATE TABLE public.accounts (x int)');
      const before = await postgresColumns(database.url);

      await expect(open({ kind: 'postgres', url: database.url })).rejects.toThrow('relation "accounts" already exists');

      expect(await postgresColumns(database.url)).toEqual(before);
      expect(await queryPostgres(database.url, 'SELECT version FROM schema_version')).toEqual([{ version: 1 }]);
      await queryPostgres(database.url, 'DROP TABLE public.accounts');
      opened = await open({ kind: 'postgres', url: database.url });
      await expectEverythingKept(opened, manifest);
    });
  });
});

/** The SQLite schema that began recording openings (migration 19): a file made by it or later records them since it was made. */
const SQLITE_OPENINGS_SCHEMA = 19;
/** PostgreSQL's step that began recording openings (migration 11), as SQLITE_OPENINGS_SCHEMA. */
const POSTGRES_OPENINGS_SCHEMA = 11;

/**
 * No entry of an upgraded memory was opened as far as it knows, and openings are recorded
 * from the upgrade on (give or take the test machine's clock against the database's), so
 * "not opened since" is never claimed for the time before; `upgraded` undefined: the file
 * recorded them already, since before the upgrade.
 */
async function expectOpeningsFrom(store: StorageBackend, upgraded: number | undefined): Promise<void> {
  const users = await store.users();
  expect(users.length).toBeGreaterThan(0);
  for (const { user } of users) {
    const { entries, openedSince } = await store.overview(user);
    expect(entries.filter((row) => row.opened !== undefined)).toEqual([]);
    if (upgraded === undefined) expect(openedSince).toBeLessThanOrEqual(Date.now());
    else {
      expect(openedSince).toBeGreaterThanOrEqual(upgraded - 1_000);
      expect(openedSince).toBeLessThanOrEqual(Date.now() + 1_000);
    }
  }
}

function execSqlite(path: string, sql: string): void {
  const db = new Database(path);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

/** Every table, index and trigger of a SQLite file with its SQL, and the version it records. */
function sqliteSchema(path: string): unknown {
  const db = new Database(path, { readonly: true });
  try {
    return {
      schema: db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY type, name').all(),
      version: db.prepare('SELECT version FROM schema_version').all(),
    };
  } finally {
    db.close();
  }
}

/** Every column of every table of a PostgreSQL database's public schema. */
function postgresColumns(url: string): Promise<unknown[]> {
  return queryPostgres(
    url,
    `SELECT table_name, column_name, data_type FROM information_schema.columns
      WHERE table_schema = 'public' ORDER BY table_name, column_name`,
  );
}
