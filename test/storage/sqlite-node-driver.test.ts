/**
 * The SQLite store on node:sqlite (node-driver.ts): the whole Store contract as on
 * better-sqlite3 (sqlite.test.ts), with the accelerators as they default, every one off,
 * and the search worker on; the slice of better-sqlite3 the store uses, as the adapter
 * emulates it; the durability settings and the failures in words; which driver is chosen;
 * and one file written by either driver and read by the other. Under Node 20, which has no
 * node:sqlite, these are skipped, saying so: `npm run test:node-sqlite` runs them under
 * Node 22 and 24.
 */

import { execFile } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Caller } from '../../src/memory/port.js';
import { type Accelerators, NO_ACCELERATORS } from '../../src/storage/accelerators.js';
import { describeEntryContract, describeStoreContract } from '../../src/storage/contract/index.js';
import { appendLine, type OpenedStore } from '../../src/storage/contract/setup.js';
import type { Database } from '../../src/storage/sqlite/driver.js';
import { type SqliteDriverName, sqliteDriver } from '../../src/storage/sqlite/drivers.js';
import { openSqliteStore, type SqliteStore } from '../../src/storage/sqlite/index.js';
import { type DriverConstructor, nodeSqliteDriver } from '../../src/storage/sqlite/node-driver.js';
import { rules } from '../helpers/rules.js';
import { driverMissing, otherNode } from '../helpers/sqlite-drivers.js';

// Named by ENGRAM_SQLITE_DRIVER (test:node-sqlite), the node driver must load: a failure, not a skip.
const missing = process.env.ENGRAM_SQLITE_DRIVER === 'node' ? undefined : driverMissing('node');
const title = (what: string) => (missing === undefined ? what : `${what} (skipped: ${missing})`);
const require = createRequire(import.meta.url);
const alice: Caller = { user: 'alice', label: 'node-driver-test' };

async function freshFolder(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'engram-node-sqlite-'));
  onTestFinished(() => rm(folder, { recursive: true, force: true }));
  return folder;
}

async function openInFreshFolder(accelerators?: Accelerators): Promise<OpenedStore> {
  const folder = await mkdtemp(join(tmpdir(), 'engram-node-sqlite-contract-'));
  return {
    store: openSqliteStore({ path: join(folder, 'memory.db'), accelerators, driver: 'node' }),
    cleanup: () => rm(folder, { recursive: true, force: true }),
  };
}

/** A store on `path` by the node driver, closed when the test ends. */
function openStore(path: string, options: { busyTimeoutMs?: number } = {}): SqliteStore {
  const store = openSqliteStore({ path, driver: 'node', ...options });
  onTestFinished(() => store.close());
  return store;
}

type Connect = (path: string, options?: { timeout?: number; fileMustExist?: boolean }) => Database;

/** A bare connection by `Driver`, closed when the test ends. */
const connectBy =
  (Driver: DriverConstructor): Connect =>
  (path, options) => {
    const db = new Driver(path, options);
    onTestFinished(() => db.close());
    return db;
  };

/** A bare connection by the node driver, closed when the test ends. */
const connect: Connect = (path, options) => connectBy(sqliteDriver('node').Database)(path, options);

/**
 * node:sqlite as a Node older than 22.16 has it: `api`, without a database's isTransaction
 * and a statement's setReturnArrays and setAllowUnknownNamedParameters (22.13–22.15); `fts5`,
 * with them but with no FTS5 in its SQLite (22.15), which Engram's search needs.
 */
function olderNodeSqlite(lacking: 'api' | 'fts5') {
  const { DatabaseSync } = process.getBuiltinModule('node:sqlite') as {
    DatabaseSync: new (path: string) => { prepare(source: string): object; exec(source: string): void };
  };
  class OlderDatabaseSync extends DatabaseSync {
    get isTransaction(): boolean | undefined {
      return lacking === 'api' ? undefined : false;
    }
    override exec(source: string): void {
      if (lacking === 'fts5' && /USING fts5/i.test(source)) throw new Error('no such module: fts5');
      super.exec(source);
    }
    override prepare(source: string): object {
      const statement = super.prepare(source) as Record<'run' | 'get' | 'all', (...params: unknown[]) => unknown>;
      return lacking === 'api' ? { run: statement.run, get: statement.get, all: statement.all } : statement;
    }
  }
  return (id: string) => (id === 'node:sqlite' ? { DatabaseSync: OlderDatabaseSync } : require(id));
}

describe.skipIf(missing !== undefined)(title('sqlite on node:sqlite'), () => {
  describeStoreContract('a fresh file', () => openInFreshFolder());
  describeStoreContract('a fresh file, every accelerator off', () => openInFreshFolder(NO_ACCELERATORS));
  describeStoreContract('a fresh file, the search worker on', () => openInFreshFolder({ searchWorker: true }));
  describeEntryContract(':memory:', async () => ({ store: openSqliteStore({ path: ':memory:', driver: 'node' }) }));

  describe('the store', () => {
    it('says it runs on the node driver, in WAL mode with synchronous=FULL, its file 0600', async () => {
      const path = join(await freshFolder(), 'memory.db');
      const store = openStore(path);
      expect(store.driver).toBe('node');
      expect(store.pragma('journal_mode')).toBe('wal');
      expect(store.pragma('synchronous')).toBe(2);
      expect(statSync(path).mode & 0o777).toBe(0o600);
    });

    it('refuses a write with STORE_BUSY while another connection holds the lock past the deadline', async () => {
      const path = join(await freshFolder(), 'memory.db');
      const store = openStore(path, { busyTimeoutMs: 150 });
      const other = connect(path);
      other.exec('BEGIN IMMEDIATE');
      await expect(store.mutate(alice, 'topics/busy', appendLine('one'), rules)).rejects.toMatchObject({
        code: 'STORE_BUSY',
      });
      other.exec('ROLLBACK');
    });

    it('explains a file that is not a database: STORE_UNAVAILABLE', async () => {
      const path = join(await freshFolder(), 'memory.db');
      writeFileSync(path, 'not a database, '.repeat(512), { mode: 0o600 });
      expect(() => openStore(path)).toThrow(expect.objectContaining({ code: 'STORE_UNAVAILABLE' }));
    });
  });

  it('refuses, saying what is missing, a node:sqlite older than 22.16: no FTS5, or not the statement API', () => {
    expect(() => nodeSqliteDriver(olderNodeSqlite('fts5'))).toThrow(/has no FTS5, which Engram's search needs$/);
    expect(() => nodeSqliteDriver(olderNodeSqlite('api'))).toThrow(/lacks the statement API Engram uses$/);
  });

  describe("better-sqlite3's slice, emulated on node:sqlite", () => {
    it('reads rows as objects, first columns (pluck) or arrays (raw), and switches back', () => {
      const db = connect(':memory:');
      const statement = db.prepare('SELECT 1 AS a, 2 AS b');
      expect(statement.get()).toEqual({ a: 1, b: 2 });
      expect(statement.pluck().get()).toBe(1);
      expect(statement.raw().all()).toEqual([[1, 2]]);
      expect(statement.raw(false).get()).toEqual({ a: 1, b: 2 });
    });

    it('binds undefined as NULL, named parameters without their prefix (those the statement lacks left out), and parameters bound once', () => {
      const db = connect(':memory:');
      expect(db.prepare('SELECT ? AS x').get(undefined)).toEqual({ x: null });
      expect(db.prepare('SELECT @a + :b AS x').pluck().get({ a: 1, b: 2, unused: 3 })).toBe(3);
      const bound = db.prepare('SELECT ? AS x').pluck().bind(7);
      expect(bound.get()).toBe(7);
      expect(() => bound.get(8)).toThrow(TypeError);
    });

    it('runs a transaction, a savepoint inside another, and undoes only the inner one that threw', () => {
      const db = connect(':memory:');
      db.exec('CREATE TABLE t (x INTEGER PRIMARY KEY)');
      const insert = db.prepare('INSERT INTO t VALUES (?)');
      const inner = db.transaction((x: number) => {
        insert.run(x);
        throw new Error('undo the inner one');
      });
      const outer = db.transaction(() => {
        expect(db.inTransaction).toBe(true);
        insert.run(1);
        expect(() => inner(2)).toThrow('undo the inner one');
        expect(db.inTransaction).toBe(true);
        return insert.run(3).changes;
      });
      expect(outer.immediate()).toBe(1);
      expect(db.inTransaction).toBe(false);
      expect(db.prepare('SELECT x FROM t ORDER BY x').pluck().all()).toEqual([1, 3]);
      expect(() => db.transaction(async () => {})()).toThrow('cannot return a promise');
      expect(db.inTransaction).toBe(false);
    });

    it("names SQLite's failures as better-sqlite3 does: a taken key, a missing file, a lock", async () => {
      const db = connect(':memory:');
      db.exec('CREATE TABLE t (x INTEGER PRIMARY KEY, y UNIQUE)');
      db.prepare('INSERT INTO t VALUES (1, 1)').run();
      expect(() => db.prepare('INSERT INTO t VALUES (1, 2)').run()).toThrow(
        expect.objectContaining({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' }),
      );
      expect(() => db.prepare('INSERT INTO t VALUES (2, 1)').run()).toThrow(
        expect.objectContaining({ code: 'SQLITE_CONSTRAINT_UNIQUE' }),
      );
      const path = join(await freshFolder(), 'memory.db');
      expect(() => connect(path, { fileMustExist: true })).toThrow(
        expect.objectContaining({ code: 'SQLITE_CANTOPEN' }),
      );
      const first = connect(path);
      const second = connect(path, { timeout: 0 });
      first.exec('BEGIN IMMEDIATE');
      expect(() => second.exec('BEGIN IMMEDIATE')).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }));
      first.exec('ROLLBACK');
    });

    it('answers pragmas as rows, or with simple as the first value; close is said once and may be repeated', () => {
      const db = connect(':memory:');
      expect(db.pragma('user_version')).toEqual([{ user_version: 0 }]);
      expect(db.pragma('user_version', { simple: true })).toBe(0);
      expect(db.open).toBe(true);
      db.close();
      expect(db.open).toBe(false);
      db.close();
    });
  });
});

describe('the choice of driver', () => {
  it('is better-sqlite3 when it loads, else node:sqlite', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    onTestFinished(() => store.close());
    expect(store.driver).toBe(driverMissing('better-sqlite3') === undefined ? 'better-sqlite3' : 'node');
    // test:node-sqlite also runs suites that leave the choice to the store: they must get the driver it names.
    const forced = process.env.ENGRAM_SQLITE_DRIVER;
    if (forced) expect(store.driver, 'the driver a store here chooses by itself').toBe(forced);
  });

  it('refuses a driver named but missing, in words, rather than take the other', (context) => {
    const absent = (['node', 'better-sqlite3'] as const).find((name) => driverMissing(name) !== undefined);
    if (absent === undefined) return context.skip('both drivers load here');
    expect(() => openSqliteStore({ path: ':memory:', driver: absent })).toThrow(
      expect.objectContaining({
        code: 'STORE_UNAVAILABLE',
        message: expect.stringMatching(absent === 'node' ? /Node 22\.16/ : /npm i better-sqlite3/),
      }),
    );
  });
});

const ENGRAM_CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const WITHOUT_BETTER_SQLITE3 = fileURLToPath(new URL('./fixtures/without-better-sqlite3.cjs', import.meta.url));

describe('without better-sqlite3 installed', () => {
  it(missing === undefined ? 'runs on node:sqlite' : 'is refused, saying what SQLite needs', async () => {
    const folder = await freshFolder();
    const args = ['write', 'topics/x', '-d', 'A note', '--new', 'one', '--db', join(folder, 'memory.db')];
    const result = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--require', WITHOUT_BETTER_SQLITE3, ENGRAM_CLI, ...args],
        { env: { ...process.env, XDG_CONFIG_HOME: folder, ENGRAM_SQLITE_DRIVER: '' } },
        (error, _stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
      );
    });
    if (missing === undefined) expect(result).toEqual({ code: 0, stderr: '' });
    else {
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^SQLite needs better-sqlite3 \(npm i better-sqlite3\) or Node 22\.16\+ for node:sqlite: /,
      );
    }
  });
});

/** `engram ARGS` run by `node` with the SQLite driver `driver`, no config file read. */
function engramWith(node: string, driver: SqliteDriverName, args: readonly string[], folder: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      node,
      [ENGRAM_CLI, ...args, '--sqlite-driver', driver],
      { env: { ...process.env, XDG_CONFIG_HOME: folder, ENGRAM_SQLITE_DRIVER: '' } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('one file, either driver', () => {
  // This process runs one driver; the other runs in a Node that has it.
  const here: SqliteDriverName = driverMissing('better-sqlite3') === undefined ? 'better-sqlite3' : 'node';
  const there: SqliteDriverName = here === 'node' ? 'better-sqlite3' : 'node';
  const other = otherNode(there);
  const skipped = driverMissing(here) ?? other.missing;

  it.skipIf(skipped !== undefined)(
    `is written by ${here}, then by ${there}, and read back by each${skipped === undefined ? '' : ` (skipped: ${skipped})`}`,
    async () => {
      const folder = await freshFolder();
      const db = join(folder, 'memory.db');
      const write = (node: string, driver: SqliteDriverName, text: string) =>
        engramWith(
          node,
          driver,
          ['write', 'topics/shared', '-d', 'Written by both drivers', '--new', text, '--db', db],
          folder,
        );
      const read = (node: string, driver: SqliteDriverName) =>
        engramWith(node, driver, ['open', 'topics/shared', '--json', '--db', db], folder);

      const first = await write(process.execPath, here, `by ${here}`);
      expect(first.code, first.stderr).toBe(0);
      // Nothing on stderr: node:sqlite's warning that it is experimental is kept off it.
      expect(await write(other.path!, there, `by ${there}`)).toMatchObject({ code: 0, stderr: '' });
      for (const [node, driver] of [
        [process.execPath, here],
        [other.path!, there],
      ] as const) {
        const opened = await read(node, driver);
        expect(opened.code, opened.stderr).toBe(0);
        expect(JSON.parse(opened.stdout).found[0].body).toBe(`by ${here}\nby ${there}\n`);
      }
    },
  );
});
