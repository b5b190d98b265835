/**
 * The databases an end-to-end test can point `engram` at, behind one small interface, so
 * a suite runs unchanged on SQLite (a file in the test's folder) and on PostgreSQL (a
 * schema of the test's own, dropped when the test ends): the flags that select it, and
 * a direct look into it behind every front door.
 */

import { afterAll, onTestFinished } from 'vitest';
import { type Cleanup, queryDatabase, type TempDir } from './engram.js';
import { createTestDatabase, createTestSchema, queryPostgres, type TestDatabase } from './postgres.js';

export interface EngramDatabase {
  /** The flags that point `engram` at it: `--db PATH` or `--database-url URL`. */
  readonly args: readonly string[];
  /** Runs a read-only query on it directly; parameters are written `?`. */
  query<Row>(sql: string, ...params: unknown[]): Promise<Row[]>;
}

export interface TestBackend {
  readonly label: string;
  /** A new, empty database for the current test (or for whoever `cleanup` serves), in (or beside) its folder `dir`. */
  create(dir: TempDir, cleanup?: Cleanup): Promise<EngramDatabase>;
}

export const SQLITE_BACKEND: TestBackend = {
  label: 'SQLite',
  async create(dir) {
    const path = dir.file('m.db');
    return { args: ['--db', path], query: async (sql, ...params) => queryDatabase(path, sql, ...params) };
  },
};

/**
 * PostgreSQL on the server at `serverUrl` (see findTestPostgres): a schema per test (or per
 * whoever `cleanup` serves), reached through the URL's search_path, in one database for the
 * calling file, dropped after its tests — a database per test cost ten times as much to
 * create and drop. Called at the top level of a test file.
 */
export function postgresBackend(serverUrl: string): TestBackend {
  let fileDatabase: Promise<TestDatabase> | undefined;
  afterAll(async () => {
    await (await fileDatabase)?.drop();
  });
  return {
    label: 'PostgreSQL',
    async create(_dir, cleanup = onTestFinished) {
      fileDatabase ??= createTestDatabase(serverUrl);
      const database = await createTestSchema(await fileDatabase);
      cleanup(() => database.drop());
      return {
        args: ['--database-url', database.url],
        query: (sql, ...params) => {
          let n = 0;
          return queryPostgres(
            database.url,
            sql.replace(/\?/g, () => `$${++n}`),
            params,
          );
        },
      };
    },
  };
}
