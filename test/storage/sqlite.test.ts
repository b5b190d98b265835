/**
 * The SQLite store: the shared Store contracts on a fresh file (with the accelerators as they
 * default, then every one off; the search worker's in search-worker.test.ts) and in memory, then what
 * only SQLite has — durability pragmas, file modes, the default path, migrations, the
 * index query plan, tokens and grants kept on disk, and several connections or processes sharing one file.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Caller } from '../../src/memory/port.js';
import { type Accelerators, NO_ACCELERATORS } from '../../src/storage/accelerators.js';
import { describeEntryContract, describeStoreContract } from '../../src/storage/contract/index.js';
import { account, appendLine, grant, grantSecret, type OpenedStore, token } from '../../src/storage/contract/setup.js';
import { BUSY_TIMEOUT_MS } from '../../src/storage/sqlite/busy.js';
import { openSqliteStore, type SqliteStore } from '../../src/storage/sqlite/index.js';
import { MIGRATIONS } from '../../src/storage/sqlite/migrations.js';
import { SQL } from '../../src/storage/sqlite/statements.js';
import { rules } from '../helpers/rules.js';

/** A store on a new file in a folder of its own, which the cleanup removes. */
async function openInFreshFolder(accelerators?: Accelerators): Promise<OpenedStore> {
  const folder = await mkdtemp(join(tmpdir(), 'engram-sqlite-contract-'));
  return {
    store: openSqliteStore({ path: join(folder, 'memory.db'), accelerators }),
    cleanup: () => rm(folder, { recursive: true, force: true }),
  };
}

describeStoreContract('sqlite, a fresh file', () => openInFreshFolder());
// The plain path, the reference each accelerator must agree with (docs/accelerators.md).
describeStoreContract('sqlite, a fresh file, every accelerator off', () => openInFreshFolder(NO_ACCELERATORS));
describeEntryContract('sqlite, :memory:', async () => ({ store: openSqliteStore({ path: ':memory:' }) }));

const alice: Caller = { user: 'alice', label: 'sqlite-test' };

function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}

describe('SqliteStore', () => {
  let folder: string;
  const opened: SqliteStore[] = [];

  /** Opens a store that the test's teardown closes. */
  function open(path: string, options: { busyTimeoutMs?: number } = {}): SqliteStore {
    const store = openSqliteStore({ path, ...options });
    opened.push(store);
    return store;
  }

  /** A plain better-sqlite3 connection to look at the file from outside the store. */
  function inspect<T>(path: string, look: (db: Database.Database) => T): T {
    const db = new Database(path);
    try {
      return look(db);
    } finally {
      db.close();
    }
  }

  function schemaVersions(path: string): number[] {
    return inspect(path, (db) =>
      (db.prepare('SELECT version FROM schema_version').all() as { version: number }[]).map((row) => row.version),
    );
  }

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-sqlite-'));
  });

  afterEach(async () => {
    vi.unstubAllEnvs();
    for (const store of opened.splice(0)) await store.close();
    await rm(folder, { recursive: true, force: true });
  });

  describe('durability settings', () => {
    it('opens its connection in WAL mode with synchronous=FULL and a busy timeout of a few ms', () => {
      const path = join(folder, 'memory.db');
      const store = open(path);

      expect(store.pragma('journal_mode')).toBe('wal');
      expect(store.pragma('synchronous')).toBe(2);
      expect(store.pragma('busy_timeout')).toBe(BUSY_TIMEOUT_MS);
      expect(inspect(path, (db) => db.pragma('journal_mode', { simple: true }))).toBe('wal');
    });

    it('keeps SQLite from sleeping on the event loop whatever busyTimeoutMs is: that is the deadline of timed retries', () => {
      expect(open(join(folder, 'memory.db'), { busyTimeoutMs: 1_234 }).pragma('busy_timeout')).toBe(BUSY_TIMEOUT_MS);
    });
  });

  describe('files', () => {
    it('creates the database file 0600', async () => {
      const path = join(folder, 'memory.db');
      const store = open(path);
      await store.mutate(alice, 'topics/a', appendLine('written'), rules);

      expect(modeOf(path)).toBe(0o600);
      expect(modeOf(`${path}-wal`)).toBe(0o600);
    });

    it('creates no folder: a path in a folder that does not exist is refused, naming the folder', () => {
      const path = join(folder, 'typo', 'engram', 'memory.db');
      expect(() => open(path)).toThrow(
        expect.objectContaining({
          code: 'STORE_UNAVAILABLE',
          detail: { reason: 'no-such-folder', path, folder: join(folder, 'typo', 'engram') },
          message: expect.stringContaining(`its folder ${join(folder, 'typo', 'engram')} does not exist`),
        }),
      );
      expect(existsSync(join(folder, 'typo'))).toBe(false);
    });

    it('leaves an existing folder as it is', async () => {
      const existing = join(folder, 'shared');
      await mkdir(existing);
      await chmod(existing, 0o755);

      open(join(existing, 'memory.db'));

      expect(modeOf(existing)).toBe(0o755);
      expect(modeOf(join(existing, 'memory.db'))).toBe(0o600);
    });
  });

  describe('its path', () => {
    it('is the one given: the store reads no environment (the CLI picks the default path)', () => {
      vi.stubEnv('ENGRAM_DB', join(folder, 'from-env.db'));
      vi.stubEnv('XDG_DATA_HOME', join(folder, 'data'));
      const path = join(folder, 'given.db');

      open(path);

      expect(existsSync(path)).toBe(true);
      expect(existsSync(join(folder, 'from-env.db'))).toBe(false);
      expect(existsSync(join(folder, 'data'))).toBe(false);
    });
  });

  describe('migrations', () => {
    it('record the schema version in a new database', () => {
      const path = join(folder, 'memory.db');
      open(path);

      expect(schemaVersions(path)).toEqual([MIGRATIONS.length]);
    });

    it('keep the data and the version when the database is opened again', async () => {
      const path = join(folder, 'memory.db');
      const first = open(path);
      await first.mutate(alice, 'topics/a', appendLine('one'), rules);
      await first.mutate(alice, 'people/b', appendLine('béta'), rules);
      const index = await first.index('alice');
      const entries = await first.get('alice', ['topics/a', 'people/b']);
      await first.close();

      const again = open(path);

      expect(await again.index('alice')).toEqual(index);
      expect(await again.get('alice', ['topics/a', 'people/b'])).toEqual(entries);
      expect((await again.mutate(alice, 'topics/a', appendLine('two'), rules)).after).toMatchObject({
        body: 'one\ntwo\n',
        revision: 2,
      });
      expect(schemaVersions(path)).toEqual([MIGRATIONS.length]);
    });

    it('bring a version 1 database forward, keeping its entries', async () => {
      const path = join(folder, 'memory.db');
      inspect(path, (db) => {
        db.exec(MIGRATIONS[0]!);
        db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (1)');
        db.exec(`INSERT INTO entries (user_id, name, description, size, body, created, updated, revision)
                 VALUES ('alice', 'topics/old', 'from version 1', 4, 'old\n', 1, 2, 3)`);
        db.exec(`INSERT INTO users (user_id, total_bytes) VALUES ('alice', 4)`);
      });

      const store = open(path);

      expect(schemaVersions(path)).toEqual([MIGRATIONS.length]);
      expect(await store.index('alice')).toEqual([{ name: 'topics/old', size: 4, description: 'from version 1' }]);
      expect(await store.get('alice', ['topics/old'])).toEqual([
        {
          name: 'topics/old',
          description: 'from version 1',
          body: 'old\n',
          size: 4,
          created: 1,
          updated: 2,
          revision: 3,
        },
      ]);
    });

    it('refuse a database from a newer Engram, saying so, and leave it untouched', async () => {
      const path = join(folder, 'memory.db');
      const store = open(path);
      await store.mutate(alice, 'topics/a', appendLine('precious'), rules);
      await store.close();
      const newer = MIGRATIONS.length + 1;
      inspect(path, (db) => db.prepare('UPDATE schema_version SET version = ?').run(newer));

      expect(() => open(path)).toThrow(
        `The memory's database ${path} is at schema version ${newer}, newer than this Engram knows (${MIGRATIONS.length}): ` +
          'a newer Engram has upgraded it, and this one cannot read it safely. Nothing was changed. Upgrade Engram',
      );
      expect(() => open(path)).toThrow(expect.objectContaining({ name: 'EngramError', code: 'STORE_UNAVAILABLE' }));

      expect(schemaVersions(path)).toEqual([newer]);
      expect(inspect(path, (db) => db.prepare('SELECT body FROM revisions').all())).toEqual([{ body: 'precious\n' }]);
    });
  });

  it('serves the index in name order by entries_live, without sorting it', async () => {
    const path = join(folder, 'memory.db');
    const store = open(path);
    await store.mutate(alice, 'topics/a', appendLine('body'), rules);

    const plan = inspect(path, (db) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${SQL.index}`).all('alice') as { detail: string }[]).map((row) => row.detail),
    );

    expect(plan).toHaveLength(1);
    expect(plan[0]).toMatch(/^SEARCH entries USING INDEX entries_live \(user_id=\?\)$/);
  });

  it('keeps no index of entries on a column a write moves, so an append or replace rewrites no index leaf', async () => {
    const path = join(folder, 'memory.db');
    await open(path).close();

    const indexes = inspect(path, (db) =>
      (db.pragma('index_list(entries)') as { name: string }[])
        .map(({ name }) => [
          name,
          (db.pragma(`index_info(${name})`) as { name: string }[]).map((column) => column.name),
        ])
        .sort(),
    );

    expect(indexes).toEqual([
      ['entries_live', ['user_id', 'name']],
      ['entries_trash', ['user_id', 'dropped_at']],
    ]);
  });

  it('loses no append when two stores on one file take turns 100 times', async () => {
    const path = join(folder, 'memory.db');
    const stores = [open(path), open(path)];

    for (let i = 0; i < 100; i++) await stores[i % 2]!.mutate(alice, 'topics/log', appendLine(`line ${i}`), rules);

    const expected = Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join('');
    for (const store of stores) {
      expect(await store.get('alice', ['topics/log'])).toEqual([
        expect.objectContaining({ body: expected, revision: 100, size: expected.length }),
      ]);
      expect(await store.index('alice')).toEqual([
        { name: 'topics/log', size: expected.length, description: 'appended lines' },
      ]);
    }
  });

  it('keeps tokens across a reopen, and a revoke through one connection is seen by another at once', async () => {
    const path = join(folder, 'memory.db');
    const first = openSqliteStore({ path });
    await first.tokens.add(token('a1'));
    await first.close();

    const server = open(path);
    const cli = open(path);
    expect(await server.tokens.findByHash(token('a1').hash)).toEqual(token('a1'));
    expect(await cli.tokens.revoke('a1')).toBe(true);
    expect(await server.tokens.findByHash(token('a1').hash)).toBeUndefined();
  });

  it('keeps a code redeemed through one connection redeemed for another, and a grant revoked by one gone for both', async () => {
    const path = join(folder, 'memory.db');
    const [server, other] = [open(path), open(path)];
    const code = grantSecret('c1', 'g1');
    await server.accounts.put(account('alice'));
    await server.oauth.saveGrant(grant('g1'), code);

    const redemptions = await Promise.all(
      [server, other, server, other].map((store) => store.oauth.consume(code.hash, 7)),
    );

    expect(redemptions.map((redemption) => redemption?.first)).toEqual([true, false, false, false]);
    expect(await other.oauth.revokeByGrantId('g1')).toBe(true);
    expect(await server.oauth.findSecret(code.hash)).toBeUndefined();
    expect(await server.oauth.saveSecrets('g1', [grantSecret('a1', 'g1', { kind: 'access' })])).toBe(false);
  });

  describe('two processes on one file', () => {
    const fixture = fileURLToPath(new URL('./fixtures/append-lines.mjs', import.meta.url));
    const built = fileURLToPath(new URL('../../dist/storage/sqlite/index.js', import.meta.url));

    /** Starts one appender; resolves once it has opened the database and waits for its go. */
    function startAppender(
      path: string,
      label: string,
    ): { child: ChildProcess; ready: Promise<void>; done: Promise<string> } {
      const child = spawn(process.execPath, [fixture, path, 'topics/shared', label, '50'], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      let signalReady: () => void = () => {};
      const ready = new Promise<void>((resolve) => {
        signalReady = resolve;
      });
      child.stdout!.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.startsWith('ready\n')) signalReady();
      });
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const done = new Promise<string>((resolve, reject) => {
        child.on('error', reject);
        child.on('close', (code) => {
          if (code === 0) resolve(stdout);
          else reject(new Error(`appender ${label} exited with ${code}: ${stderr}`));
        });
      });
      return { child, ready: Promise.race([ready, done.then(() => {})]), done };
    }

    it('lose none of 100 appends, 50 from each, made at the same time', async () => {
      expect(existsSync(built), 'build first: npx tsc -p tsconfig.build.json').toBe(true);
      const path = join(folder, 'memory.db');
      await open(path).close();

      const appenders = [startAppender(path, 'first'), startAppender(path, 'second')];
      await Promise.all(appenders.map((appender) => appender.ready));
      for (const { child } of appenders) child.stdin!.end();
      const outputs = await Promise.all(appenders.map((appender) => appender.done));

      expect(outputs).toEqual(['ready\ndone\n', 'ready\ndone\n']);
      const [entry] = await open(path).get('alice', ['topics/shared']);
      const lines = entry!.body.split('\n').filter((line) => line !== '');
      expect(lines).toHaveLength(100);
      for (const label of ['first', 'second']) {
        expect(lines.filter((line) => line.startsWith(`${label} `))).toEqual(
          Array.from({ length: 50 }, (_, i) => `${label} ${i}`),
        );
      }
      expect(entry!.revision).toBe(100);
    });
  });
});
