/**
 * Upgrading a database written before accounts and connected apps existed (SQLite schema
 * 5, PostgreSQL schema 2): once this Engram opens it, it holds accounts, browser
 * sessions, OAuth clients, grants and their secrets exactly as a new database does. The
 * account and grant contracts run on such an upgraded database, on both backends (the
 * PostgreSQL half skipped with a notice where no PostgreSQL is available).
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import { describeAccountContract, describeGrantContract } from '../../src/testing/index.js';
import {
  createTestDatabase,
  createTestSchema,
  findTestPostgres,
  queryPostgres,
  type TestDatabase,
} from '../helpers/postgres.js';
import { migrateSqliteTo } from '../helpers/sqlite-schema.js';

/** The SQLite schema version before accounts (migration 6 adds them). */
const SQLITE_BEFORE_ACCOUNTS = 5;
/** The PostgreSQL schema version before accounts (migration 3 adds them). */
const POSTGRES_BEFORE_ACCOUNTS = 2;

/** A SQLite file at the schema before accounts, opened (so upgraded) by this Engram. */
async function openUpgradedSqlite() {
  const folder = await mkdtemp(join(tmpdir(), 'engram-accounts-upgrade-'));
  const path = join(folder, 'memory.db');
  const db = new Database(path);
  try {
    migrateSqliteTo(db, SQLITE_BEFORE_ACCOUNTS);
  } finally {
    db.close();
  }
  return { store: openSqliteStore({ path }), cleanup: () => rm(folder, { recursive: true, force: true }) };
}

describeAccountContract(`sqlite, upgraded from schema ${SQLITE_BEFORE_ACCOUNTS}`, openUpgradedSqlite);
describeGrantContract(`sqlite, upgraded from schema ${SQLITE_BEFORE_ACCOUNTS}`, openUpgradedSqlite);

const server = await findTestPostgres();

describe.skipIf(!server)('PostgreSQL', () => {
  /** One database for this file, each test in a schema of its own. */
  let database: Promise<TestDatabase> | undefined;

  /** A schema at the version before accounts, opened (so upgraded) by this Engram. */
  async function openUpgradedPostgres() {
    database ??= createTestDatabase(server!);
    const schema = await createTestSchema(await database);
    for (const step of POSTGRES_MIGRATIONS.slice(0, POSTGRES_BEFORE_ACCOUNTS)) {
      await queryPostgres(schema.url, step as string);
    }
    await queryPostgres(
      schema.url,
      `CREATE TABLE schema_version (version integer NOT NULL); INSERT INTO schema_version VALUES (${POSTGRES_BEFORE_ACCOUNTS})`,
    );
    return { store: await openPostgresStore({ connectionString: schema.url }), cleanup: schema.drop };
  }

  afterAll(async () => {
    await (await database)?.drop();
  });

  describeAccountContract(`postgres, upgraded from schema ${POSTGRES_BEFORE_ACCOUNTS}`, openUpgradedPostgres);
  describeGrantContract(`postgres, upgraded from schema ${POSTGRES_BEFORE_ACCOUNTS}`, openUpgradedPostgres);
});
