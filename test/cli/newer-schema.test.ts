/**
 * A database that a newer Engram has upgraded, met by this one's CLI: exit 1, and on stderr
 * which schema version the database is at, which this Engram knows, that nothing was
 * changed and that the way forward is to upgrade Engram; the database is left as it was.
 * SQLite, and PostgreSQL where a server is available.
 */

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/program.js';
import { newerSchemaError } from '../../src/storage/newer-schema.js';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/storage/postgres/migrations.js';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/storage/sqlite/migrations.js';
import type { EngramRun } from '../helpers/engram.js';
import { createTestDatabase, findTestPostgres, queryPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';

const server = await findTestPostgres();

/** main() in this process, with `--config` pointing at an empty config file. */
async function engram(...args: string[]): Promise<EngramRun> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const io = { stdout: (text: string) => stdout.push(text), stderr: (text: string) => stderr.push(text) };
  const code = await main([...args, '--config', tempDir().config({})], io);
  return { code, stdout: stdout.join(''), stderr: stderr.join('') };
}

/** The refusal the storage makes (storage/newer-schema.ts), which the CLI prints as it is. */
const refusal = (database: string, found: number, known: number) =>
  `${newerSchemaError(database, found, known).message}\n`;

describe('a database from a newer Engram, through the CLI', () => {
  it('SQLite: exit 1, both versions and what to do on stderr, the file untouched', async () => {
    const db = tempDir().file('memory.db');
    expect((await engram('write', 'topics/a', '-d', 'A', '--new', 'kept', '--db', db)).code).toBe(0);
    const newer = SQLITE_MIGRATIONS.length + 1;
    const file = new Database(db);
    file.prepare('UPDATE schema_version SET version = ?').run(newer);
    file.close();

    expect(await engram('index', '--db', db)).toEqual({
      code: 1,
      stdout: '',
      stderr: refusal(`The memory's database ${db}`, newer, SQLITE_MIGRATIONS.length),
    });
    const json = await engram('write', 'topics/a', '--new', 'lost?', '--db', db, '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({
      error: { code: 'STORE_UNAVAILABLE', message: expect.stringContaining(`schema version ${newer}`) },
    });

    const after = new Database(db, { readonly: true });
    expect(after.prepare('SELECT version FROM schema_version').all()).toEqual([{ version: newer }]);
    expect(after.prepare('SELECT body FROM revisions').all()).toEqual([{ body: 'kept\n' }]);
    after.close();
  });

  it.skipIf(!server)('PostgreSQL: exit 1, both versions and what to do on stderr, the database untouched', async () => {
    const database = await createTestDatabase(server!);
    try {
      const written = await engram('write', 'topics/a', '-d', 'A', '--new', 'kept', '--database-url', database.url);
      expect(written.code).toBe(0);
      const newer = POSTGRES_MIGRATIONS.length + 1;
      await queryPostgres(database.url, 'UPDATE schema_version SET version = $1', [newer]);

      expect(await engram('index', '--database-url', database.url)).toEqual({
        code: 1,
        stdout: '',
        stderr: refusal(`The PostgreSQL database ${database.name}`, newer, POSTGRES_MIGRATIONS.length),
      });

      expect(await queryPostgres(database.url, 'SELECT version FROM schema_version')).toEqual([{ version: newer }]);
      expect(await queryPostgres(database.url, 'SELECT body FROM revisions')).toEqual([{ body: 'kept\n' }]);
    } finally {
      await database.drop();
    }
  });
});
