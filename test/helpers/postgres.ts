/**
 * PostgreSQL for tests: which server to use ($ENGRAM_TEST_DATABASE_URL, else the local
 * default if it answers), and a database of its own for a test or a test file, created
 * on that server and dropped afterwards — the server's own database is never written
 * to. Within such a database, a schema per test is a much cheaper clean slate.
 */

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, onTestFinished } from 'vitest';

const LOCAL_DEFAULT = 'postgres://postgres@127.0.0.1:5432/test';

/**
 * The server the PostgreSQL tests run against, or undefined, with a printed notice, when
 * there is none. A server named in ENGRAM_TEST_DATABASE_URL is always used: if it does
 * not answer, the tests fail rather than skip.
 */
export async function findTestPostgres(): Promise<string | undefined> {
  const configured = process.env.ENGRAM_TEST_DATABASE_URL;
  if (configured) return configured;
  if (await answers(LOCAL_DEFAULT)) return LOCAL_DEFAULT;
  console.warn(
    `PostgreSQL tests skipped: no server at ${new URL(LOCAL_DEFAULT).host} and ENGRAM_TEST_DATABASE_URL is not set.`,
  );
  return undefined;
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export interface TestDatabase {
  readonly name: string;
  /** The server's URL with this database in place of the server's own. */
  readonly url: string;
  /** Drops the database, closing whatever connections are still open to it. */
  drop(): Promise<void>;
}

/** A new, empty database `engram_test_<random>` on the server at `serverUrl`. */
export async function createTestDatabase(serverUrl: string): Promise<TestDatabase> {
  const name = `engram_test_${randomBytes(6).toString('hex')}`;
  await queryPostgres(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      await queryPostgres(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

export interface TestSchema {
  /** The database's URL with search_path set to this schema alone, so a store works inside it. */
  readonly url: string;
  drop(): Promise<void>;
}

/** A new, empty schema in `database`: a clean slate for one test at a fraction of a database's cost. */
export async function createTestSchema(database: TestDatabase): Promise<TestSchema> {
  const name = `engram_${randomBytes(6).toString('hex')}`;
  await queryPostgres(database.url, `CREATE SCHEMA ${name}`);
  const url = new URL(database.url);
  url.searchParams.set('options', `-c search_path=${name}`);
  return {
    url: url.toString(),
    drop: async () => {
      await queryPostgres(database.url, `DROP SCHEMA ${name} CASCADE`);
    },
  };
}

/**
 * A new schema for each test that calls the function returned, in one database for the
 * file (or the describe block where this is called): the database is created at the first
 * call and dropped after the block's tests, each schema dropped when its test finishes.
 */
export function schemaPerTest(serverUrl: string): () => Promise<TestSchema> {
  let database: Promise<TestDatabase> | undefined;
  afterAll(async () => {
    await (await database)?.drop();
  });
  return async () => {
    database ??= createTestDatabase(serverUrl);
    const schema = await createTestSchema(await database);
    onTestFinished(() => schema.drop());
    return schema;
  };
}

/**
 * Empties every table of the connection's schema but schema_version and restarts its
 * identities (opened_since starts again at now, as a new database's), in one statement: DELETE, three times cheaper on these small tables than
 * TRUNCATE (which makes new files). A table still referenced by rows of another is left
 * for the next round, so no privilege beyond the tables' is needed.
 */
export const EMPTY_SCHEMA = `DO $$ DECLARE name text; emptied boolean; BEGIN
  FOR round IN 1..10 LOOP
    emptied := true;
    FOR name IN SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_version' LOOP
      BEGIN
        EXECUTE 'DELETE FROM ' || quote_ident(name);
      EXCEPTION WHEN foreign_key_violation THEN
        emptied := false;
      END;
    END LOOP;
    EXIT WHEN emptied;
  END LOOP;
  IF NOT emptied THEN RAISE EXCEPTION 'the schema could not be emptied'; END IF;
  FOR name IN SELECT sequencename FROM pg_sequences WHERE schemaname = current_schema() LOOP
    EXECUTE 'ALTER SEQUENCE ' || quote_ident(name) || ' RESTART';
  END LOOP;
  -- As in a new database: openings recorded from now on (migration 11).
  IF to_regclass('opened_since') IS NOT NULL THEN
    INSERT INTO opened_since (at) VALUES ((extract(epoch FROM clock_timestamp()) * 1000)::bigint);
  END IF;
END $$`;

/** Runs one statement on a connection of its own, behind every store, and returns its rows. */
export async function queryPostgres<Row>(url: string, sql: string, params: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as Row[];
  } finally {
    await client.end();
  }
}
