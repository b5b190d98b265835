/**
 * Upgrading a database written before accounts and connected apps existed (SQLite schema
 * 5, PostgreSQL schema 2): once this Engram opens it, it holds accounts, browser
 * sessions, OAuth clients, grants and their secrets exactly as a new database does. The
 * account and grant contracts run on such an upgraded database, on both backends (the
 * PostgreSQL half skipped with a notice where no PostgreSQL is available).
 */

import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe } from 'vitest';
import { describeAccountContract, describeOAuthContract } from '../../src/storage/contract/index.js';
import { openPostgresStore } from '../../src/storage/postgres/index.js';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/storage/postgres/migrations.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import {
  createTestDatabase,
  createTestSchema,
  EMPTY_SCHEMA,
  findTestPostgres,
  queryPostgres,
  type TestDatabase,
} from '../helpers/postgres.js';
import { migrateSqliteTo } from '../helpers/sqlite-schema.js';

/** The SQLite schema version before accounts (migration 6 adds them). */
const SQLITE_BEFORE_ACCOUNTS = 5;
/** The PostgreSQL schema version before accounts (migration 3 adds them). */
const POSTGRES_BEFORE_ACCOUNTS = 2;

/**
 * A SQLite file at the schema before accounts, made once for this file (by the first
 * test that asks), then copied for each test: running those five migrations, some 26 ms
 * of CPU here, was more than half of what opening a test's store cost.
 */
let beforeAccounts: Promise<{ path: string; folder: string }> | undefined;

async function sqliteBeforeAccounts(): Promise<{ path: string; folder: string }> {
  const folder = await mkdtemp(join(tmpdir(), 'engram-accounts-template-'));
  const path = join(folder, 'memory.db');
  const db = new Database(path);
  try {
    migrateSqliteTo(db, SQLITE_BEFORE_ACCOUNTS);
  } finally {
    db.close();
  }
  return { path, folder };
}

afterAll(async () => {
  const template = await beforeAccounts;
  if (template) await rm(template.folder, { recursive: true, force: true });
});

/** A copy of that file, opened (so upgraded) by this Engram: every test upgrades a database of its own. */
async function openUpgradedSqlite() {
  beforeAccounts ??= sqliteBeforeAccounts();
  const template = await beforeAccounts;
  const folder = await mkdtemp(join(tmpdir(), 'engram-accounts-upgrade-'));
  const path = join(folder, 'memory.db');
  await copyFile(template.path, path);
  return { store: openSqliteStore({ path }), cleanup: () => rm(folder, { recursive: true, force: true }) };
}

describeAccountContract(`sqlite, upgraded from schema ${SQLITE_BEFORE_ACCOUNTS}`, openUpgradedSqlite);
describeOAuthContract(`sqlite, upgraded from schema ${SQLITE_BEFORE_ACCOUNTS}`, openUpgradedSqlite);

const server = await findTestPostgres();

describe.skipIf(!server)('PostgreSQL', () => {
  /**
   * One database for this file and a few schemas in it. A schema is made at the version
   * before accounts and opened (so upgraded) by this Engram only when no emptied one is
   * free; when its test ends, every table but schema_version is emptied, identities
   * restarted, and the upgraded schema waits for the next test, as the store contract's
   * do (postgres.test.ts): the contracts run on tables the upgrade made, without a
   * schema made and upgraded per test (most of each test's time, in the server).
   */
  let database: Promise<TestDatabase> | undefined;
  const emptiedSchemas: string[] = [];

  /** A schema upgraded from the version before accounts, new or emptied. */
  async function openUpgradedPostgres() {
    const url = emptiedSchemas.pop() ?? (await schemaBeforeAccounts());
    const store = await openPostgresStore({ connectionString: url });
    const cleanup = async () => {
      await queryPostgres(url, EMPTY_SCHEMA);
      emptiedSchemas.push(url);
    };
    return { store, cleanup };
  }

  /** A new schema at the version before accounts; the file's database is dropped with it. */
  async function schemaBeforeAccounts(): Promise<string> {
    database ??= createTestDatabase(server!);
    const schema = await createTestSchema(await database);
    for (const step of POSTGRES_MIGRATIONS.slice(0, POSTGRES_BEFORE_ACCOUNTS)) {
      await queryPostgres(schema.url, step as string);
    }
    await queryPostgres(
      schema.url,
      `CREATE TABLE schema_version (version integer NOT NULL); INSERT INTO schema_version VALUES (${POSTGRES_BEFORE_ACCOUNTS})`,
    );
    return schema.url;
  }

  afterAll(async () => {
    await (await database)?.drop();
  });

  describeAccountContract(`postgres, upgraded from schema ${POSTGRES_BEFORE_ACCOUNTS}`, openUpgradedPostgres);
  describeOAuthContract(`postgres, upgraded from schema ${POSTGRES_BEFORE_ACCOUNTS}`, openUpgradedPostgres);
});
