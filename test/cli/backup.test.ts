/**
 * `engram backup`, `engram backup verify` and `engram restore-backup`, run as a person runs
 * them: a backup restores losslessly (dumps compared: entries, trash, every revision,
 * usage, tokens, accounts, OAuth clients, connected apps and their secrets) into SQLite and
 * into PostgreSQL, from either; a backup written by an older schema is upgraded on a copy,
 * never in place; every command's refusals (a bad DEST, a folder that cannot be written, a
 * missing file, a file that is no backup, a damaged or half-written one, a restore over a
 * memory that holds something) say what was wrong and change nothing. The PostgreSQL
 * cases are skipped, with a notice, where no server is available.
 *
 * The first backup runs the built CLI as a child process; the others run main() in this process.
 */

import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { Caller, Decide, StoreDump } from '../../src/memory/port.js';
import type { StorageBackend } from '../../src/storage/backend.js';
import { account, client, grant, grantSecret, session } from '../../src/storage/contract/setup.js';
import { openPostgresStore } from '../../src/storage/postgres/index.js';
import { sqliteBackupFiles } from '../../src/storage/sqlite/backup-files.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { childEnv, runEngram, tempDir } from '../helpers/engram.js';
import { createTestDatabase, createTestSchema, findTestPostgres, type TestDatabase } from '../helpers/postgres.js';
import { rules } from '../helpers/rules.js';
import { migrateSqliteTo } from '../helpers/sqlite-schema.js';
import { runInProcess, serveInProcess } from './fixtures.js';

const server = await findTestPostgres();
const alice: Caller = { user: 'alice', label: 'claude-desktop' };
const bob: Caller = { user: 'bob', label: 'laptop token' };
const engram = (args: readonly string[], env: NodeJS.ProcessEnv) => runInProcess(args, env);

function put(body: string, description = 'about it'): Decide {
  return (current) => ({ kind: 'put', operation: current ? 'replace' : 'create', description, body });
}

/** Everything a database keeps: history, trash, two users, tokens, an account, a client and a connected app. */
async function fill(store: StorageBackend): Promise<void> {
  await store.mutate(alice, 'topics/editor', put('Uses Helix.\n', 'Editor'), rules);
  await store.mutate(alice, 'topics/editor', put('Uses Helix.\nTabs.\n', 'Editor, keyboard'), rules);
  await store.mutate(alice, 'areas/old', put('old\n'), rules);
  await store.mutate(alice, 'areas/old', () => ({ kind: 'drop' }), rules);
  await store.mutate(bob, 'people/ada', put('Ada ✓ é\n', 'Ada'), rules);
  await store.tokens.add({
    id: 'tok1',
    user: 'alice',
    label: 'webui',
    readOnly: false,
    review: false,
    hash: 'a'.repeat(64),
    created: 1_700_000_000_000,
    lastUsed: undefined,
  });
  await store.accounts.put(account('alice'));
  await store.accounts.addSession(session('browser'));
  await store.oauth.saveClient(client('c1'));
  const code = grantSecret('code', 'g1');
  await store.oauth.saveGrant(grant('g1'), code);
  await store.oauth.saveSecrets('g1', [grantSecret('refresh', 'g1', { kind: 'refresh', expires: 1_800_000_000_000 })]);
}

async function withSqlite<T>(path: string, work: (store: StorageBackend) => Promise<T>): Promise<T> {
  const store = openSqliteStore({ path });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

async function withPostgres<T>(url: string, work: (store: StorageBackend) => Promise<T>): Promise<T> {
  const store = await openPostgresStore({ connectionString: url });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

const dumpOf = (store: StorageBackend): Promise<StoreDump> => store.dump();

function setup() {
  const dir = tempDir();
  return { dir, env: childEnv(dir.path), db: dir.file('memory.db') };
}

async function filled(path: string): Promise<StoreDump> {
  return withSqlite(path, async (store) => {
    await fill(store);
    return store.dump();
  });
}

const COUNTS = { users: 2, entries: 2, trash: 1, revisions: 5, tokens: 1, accounts: 1, apps: 1 };

describe('engram backup and restore-backup, SQLite', () => {
  it('backs up into a backups folder beside the memory, verifies, and restores losslessly into an empty memory', async () => {
    const { dir, env, db } = setup();
    const original = await filled(db);

    const taken = await runEngram(['backup', '--db', db], env);

    expect(taken).toMatchObject({ code: 0, stderr: '' });
    const [name] = readdirSync(dir.file('backups'));
    expect(name).toMatch(/^engram-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z\.db$/);
    const file = join(dir.file('backups'), name as string);
    expect(taken.stdout).toMatch(
      new RegExp(
        `^Backed up SQLite ${escapeRegExp(db)} to ${escapeRegExp(file)} \\(\\d+ KB\\): 2 users, 2 entries, 1 in the trash, ` +
          '5 revisions, 1 token, 1 account, 1 connected app\\.\\n$',
      ),
    );
    // Readable by its owner alone, as the memory is; one file, nothing beside it.
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir.file('backups'))).toEqual([name]);

    const verified = await engram(['backup', 'verify', file, '--json'], env);
    expect(verified.code).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({
      ok: true,
      path: file,
      source: 'sqlite',
      restorable: true,
      counts: COUNTS,
    });
    const said = await engram(['backup', 'verify', file], env);
    expect(said.stdout).toMatch(/ is a good backup: taken .* \(less than a minute ago\) from SQLite by Engram /);

    const restored = await engram(['restore-backup', file, '--to', dir.file('new.db'), '--json'], env);
    expect(restored.code).toBe(0);
    expect(JSON.parse(restored.stdout)).toMatchObject({ replaced: false, kept: null, counts: COUNTS });
    // Signed-in browsers are not kept: they sign in again.
    expect(await withSqlite(dir.file('new.db'), dumpOf)).toEqual(original);
    expect(await withSqlite(db, dumpOf)).toEqual(original);
  });

  it('writes to a file or into a folder named, and answers --json', async () => {
    const { dir, env, db } = setup();
    await filled(db);

    const toFile = await engram(['backup', dir.file('mine.db'), '--db', db, '--json'], env);
    expect(toFile.code).toBe(0);
    expect(JSON.parse(toFile.stdout)).toMatchObject({
      path: dir.file('mine.db'),
      from: `SQLite ${db}`,
      source: 'sqlite',
      counts: COUNTS,
    });
    const twice = [
      await engram(['backup', dir.path, '--db', db, '--json'], env),
      await engram(['backup', dir.path, '--db', db, '--json'], env),
    ].map((run) => JSON.parse(run.stdout).path as string);
    expect(new Set(twice).size).toBe(2);
    for (const path of twice) expect(path).toMatch(/\/engram-[^/]*Z(-\d+)?\.db$/);
  });

  it('refuses to restore over a memory that holds anything, unchanged; with --force, keeps a backup of it first', async () => {
    const { dir, env, db } = setup();
    const original = await filled(db);
    await engram(['backup', dir.file('b.db'), '--db', db], env);
    const other = dir.file('other.db');
    const held = await withSqlite(other, async (store) => {
      await store.mutate(bob, 'topics/mine', put('mine\n'), rules);
      return store.dump();
    });

    const refused = await engram(['restore-backup', dir.file('b.db'), '--db', other], env);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toBe(
      `SQLite ${other} is not empty: it holds entries, trash, tokens, accounts or connected apps, so nothing was ` +
        'restored. Pass --force to replace all of it with the backup (a backup of it is taken first), or restore ' +
        'into an empty memory (--to).\n',
    );
    expect(await withSqlite(other, dumpOf)).toEqual(held);

    const forced = await engram(['restore-backup', dir.file('b.db'), '--db', other, '--force', '--json'], env);
    expect(forced.code).toBe(0);
    const { kept, replaced } = JSON.parse(forced.stdout) as { kept: string; replaced: boolean };
    expect(replaced).toBe(true);
    expect(kept).toMatch(new RegExp(`^${escapeRegExp(dir.file('backups'))}/engram-before-restore-.*Z\\.db$`));
    expect(await withSqlite(other, dumpOf)).toEqual(original);
    // What was replaced is a good backup, and restores to what the memory held.
    expect((await engram(['backup', 'verify', kept], env)).code).toBe(0);
    await engram(['restore-backup', kept, '--to', dir.file('again.db')], env);
    expect(await withSqlite(dir.file('again.db'), dumpOf)).toEqual(held);
  });

  it('restores a backup of an older schema through an upgraded copy, leaving the backup as it was', async () => {
    const { dir, env } = setup();
    const old = dir.file('old.db');
    const db = new Database(old);
    migrateSqliteTo(db, 4);
    db.prepare(
      `INSERT INTO entries (user_id, name, description, size, body, created, updated, revision)
       VALUES ('alice', 'topics/a', 'about a', 4, 'one\n', 1, 1, 1)`,
    ).run();
    db.prepare(
      `INSERT INTO revisions (entry_id, revision, operation, actor, at, description, body)
       VALUES (1, 1, 'create', 'cli', 1, 'about a', 'one\n')`,
    ).run();
    db.close();
    await sqliteBackupFiles().stamp(old, { takenAt: Date.now(), engramVersion: '0.0.1', source: 'sqlite' });
    const before = readFileSync(old);

    const verified = await engram(['backup', 'verify', old, '--json'], env);
    expect(JSON.parse(verified.stdout)).toMatchObject({ schemaVersion: 4, restorable: true, engramVersion: '0.0.1' });
    const restored = await engram(['restore-backup', old, '--to', dir.file('new.db')], env);

    expect(restored.code).toBe(0);
    expect(readFileSync(old).equals(before)).toBe(true);
    const index = await withSqlite(dir.file('new.db'), (store) => store.index('alice'));
    expect(index.map((row) => row.name)).toEqual(['topics/a']);
  });

  it('refuses a backup from a newer Engram, saying to upgrade', async () => {
    const { dir, env, db } = setup();
    await filled(db);
    await engram(['backup', dir.file('b.db'), '--db', db], env);
    const file = new Database(dir.file('b.db'));
    file.exec('UPDATE schema_version SET version = 999; UPDATE engram_backup SET schema_version = 999');
    file.close();

    const verified = await engram(['backup', 'verify', dir.file('b.db')], env);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toContain('cannot restore it: upgrade Engram first.');
    const refused = await engram(['restore-backup', dir.file('b.db'), '--to', dir.file('new.db')], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/newer than this Engram \(schema version \d+\): upgrade Engram, then restore it\./);
  });
});

describe("restoring on a new machine, and the schedule's settings", () => {
  it('restores into the default memory, making its folders', async () => {
    const { dir, env, db } = setup();
    const original = await filled(db);
    await engram(['backup', dir.file('b.db'), '--db', db], env);
    const fresh = { ...env, XDG_DATA_HOME: dir.file('new-home/data') };

    const restored = await engram(['restore-backup', dir.file('b.db')], fresh);

    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain(`into SQLite ${dir.file('new-home/data/engram/memory.db')}: 2 users`);
    expect(await withSqlite(dir.file('new-home/data/engram/memory.db'), dumpOf)).toEqual(original);
  });

  it('engram serve --backup-dir takes a verified backup at once into a folder it makes, and logs it', async () => {
    const { dir, env, db } = setup();
    const original = await filled(db);
    const folder = dir.file('sched/backups');
    const { main } = await import('../../src/cli/program.js');
    const served = serveInProcess(main, ['--db', db, '--port', '0', '--json', '--backup-dir', folder], env);
    await served.listening;
    while (!/backed up to /.test(served.out.stderr)) await new Promise((resolve) => setTimeout(resolve, 5));
    served.stop('SIGTERM');
    expect(await served.exited).toBe(0);

    expect(served.out.stderr).toContain(`engram: backups every 6h into ${folder}, keeping the newest 14 good ones\n`);
    const [name] = readdirSync(folder);
    expect(served.out.stderr).toContain(`engram: backed up to ${join(folder, name as string)}\n`);
    expect((await engram(['backup', 'verify', join(folder, name as string)], env)).code).toBe(0);
    await engram(['restore-backup', join(folder, name as string), '--to', dir.file('new.db')], env);
    expect(await withSqlite(dir.file('new.db'), dumpOf)).toEqual(original);
  });

  it('takes backupDir, backupEvery and backupKeep from the config file, and refuses what it cannot read', async () => {
    const { dir, env } = setup();
    const good = dir.config({ backupDir: dir.file('b'), backupEvery: '30m', backupKeep: 3 }, 'good.json');
    const bad = dir.config({ backupEvery: 'often' }, 'bad.json');
    const { loadSettings } = await import('../../src/cli/config.js');
    const where = { config: undefined, defaultConfigPath: dir.file('none.json') };
    expect(loadSettings(good, where)).toMatchObject({
      backupDir: dir.file('b'),
      backupEveryMs: 1_800_000,
      backupKeep: 3,
    });
    expect(() => loadSettings(bad, where)).toThrow(/backupEvery: a number and a unit, from 1s to 24d: 30m, 6h, 1d/);

    const alone = await engram(['serve', '--db', dir.file('m.db'), '--backup-every', '1h'], env);
    expect(alone).toMatchObject({ code: 2 });
    expect(alone.stderr).toContain(
      '--backup-every and --backup-keep need a folder for the backups: add --backup-dir DIR.',
    );
    const wrong = await engram(
      ['serve', '--db', dir.file('m.db'), '--backup-dir', dir.path, '--backup-every', '6 hours'],
      env,
    );
    expect(wrong).toMatchObject({ code: 2 });
    expect(wrong.stderr).toContain('give a number and a unit, from 1s to 24d: 30m, 6h, 1d');
    const tooLong = await engram(
      ['serve', '--db', dir.file('m.db'), '--backup-dir', dir.path, '--backup-every', '30d'],
      env,
    );
    expect(tooLong).toMatchObject({ code: 2 });
    expect(tooLong.stderr).toContain('For backups further apart, run engram backup from cron or a systemd timer.');
    expect(existsSync(dir.file('m.db'))).toBe(false);
  });
});

describe('the refusals of engram backup, backup verify and restore-backup', () => {
  it('backup: no memory, a DEST whose folder is missing, a DEST that exists, a folder that cannot be written', async () => {
    const { dir, env, db } = setup();
    const none = await engram(['backup', dir.file('b.db'), '--db', dir.file('absent.db')], env);
    expect(none).toMatchObject({ code: 1, stdout: '' });
    expect(none.stderr).toBe(
      `There is no memory at ${dir.file('absent.db')} to back up: check --db (or ENGRAM_DB, or "db" in the config file).\n`,
    );
    await filled(db);

    const noFolder = await engram(['backup', dir.file('nope/b.db'), '--db', db], env);
    expect(noFolder).toMatchObject({ code: 2, stdout: '' });
    expect(noFolder.stderr).toBe(
      `engram: ${dir.file('nope/b.db')}: the folder ${dir.file('nope')} does not exist. Create it first, or name a folder that exists.\n`,
    );
    writeFileSync(dir.file('taken.db'), 'mine');
    const exists = await engram(['backup', dir.file('taken.db'), '--db', db], env);
    expect(exists).toMatchObject({ code: 2, stdout: '' });
    expect(exists.stderr).toContain('already exists: a backup never replaces a file');
    expect(readFileSync(dir.file('taken.db'), 'utf8')).toBe('mine');

    // A folder in which no file can be made (root may write any folder, but not under a file).
    const unwritable = await engram(['backup', '/proc/b.db', '--db', db, '--json'], env);
    expect(unwritable.code).toBe(1);
    expect(JSON.parse(unwritable.stdout).error.message).toMatch(/^Cannot write the backup there/);
    expect(existsSync('/proc/b.db')).toBe(false);
  });

  it('backup: a folder its user may not write, when not run as root', async (context) => {
    if (process.getuid?.() === 0) context.skip();
    const { dir, env, db } = setup();
    await filled(db);
    chmodSync(dir.path, 0o500);
    try {
      const refused = await engram(['backup', dir.path, '--db', db], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^Cannot write the backup there/);
    } finally {
      chmodSync(dir.path, 0o700);
    }
  });

  it('verify and restore-backup: a missing file, a file that is no database, a memory that is no backup', async () => {
    const { dir, env, db } = setup();
    await filled(db);
    const cases = [
      [
        dir.file('absent.db'),
        `There is no file at ${dir.file('absent.db')}: give the path of a backup file (engram-….db).`,
      ],
      [dir.file('notes.txt'), `${dir.file('notes.txt')} is not an Engram backup: it is not a SQLite database.`],
      [db, `${db} is an Engram memory but not a backup (it has no engram_backup stamp).`],
      [
        dir.file('other.sqlite'),
        `${dir.file('other.sqlite')} is a SQLite database but not an Engram backup: it has no Engram tables.`,
      ],
      [dir.path, `${dir.path} is not a file: give the path of a backup file (engram-….db).`],
    ];
    writeFileSync(dir.file('notes.txt'), 'These are my notes, not a database at all. '.repeat(50));
    const foreign = new Database(dir.file('other.sqlite'));
    foreign.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
    foreign.close();
    for (const [file, message] of cases as [string, string][]) {
      const verified = await engram(['backup', 'verify', file], env);
      expect(verified, file).toMatchObject({ code: 1, stdout: '' });
      expect(verified.stderr).toContain(message);
      const restored = await engram(['restore-backup', file, '--to', dir.file('new.db')], env);
      expect(restored.code, file).toBe(1);
      expect(restored.stderr).toContain(message);
    }
    expect(existsSync(dir.file('new.db'))).toBe(false);
    const json = await engram(['backup', 'verify', dir.file('notes.txt'), '--json'], env);
    expect(JSON.parse(json.stdout)).toEqual({
      error: {
        code: 'INVALID_ARGUMENT',
        message: `${dir.file('notes.txt')} is not an Engram backup: it is not a SQLite database.`,
      },
    });
  });

  it('restore-backup: a target that cannot be made is said as the target, never in the backup command’s words', async () => {
    const { dir, env, db } = setup();
    await filled(db);
    expect((await engram(['backup', dir.file('b.db'), '--db', db], env)).code).toBe(0);
    // The default memory's folder cannot be made: its data folder is under a file.
    writeFileSync(dir.file('file'), 'not a folder');
    const memory = dir.file('file/data/engram/memory.db');
    const noFolder = await engram(['restore-backup', dir.file('b.db')], {
      ...env,
      XDG_DATA_HOME: dir.file('file/data'),
    });
    expect(noFolder).toMatchObject({ code: 1, stdout: '' });
    expect(noFolder.stderr).toBe(
      `Cannot restore into SQLite ${memory} (ENOTDIR: not a directory, mkdir '${dirname(memory)}'). Let the user ` +
        "running Engram create and write the memory's file and its folder, or restore into another memory (--to), " +
        'then try again.\n',
    );
    // A file the target's store cannot open: the store's own words, which name the memory's database.
    const underFile = await engram(['restore-backup', dir.file('b.db'), '--to', dir.file('file/new.db')], env);
    expect(underFile.code).toBe(1);
    expect(underFile.stderr).toMatch(/^The memory's database .*file\/new\.db cannot be opened/);
    expect(underFile.stderr).not.toContain('backup there');
  });

  it('verify: a truncated backup, one with a page overwritten, one changed after it was taken, and a .partial', async () => {
    const { dir, env, db } = setup();
    await withSqlite(db, (store) =>
      store.mutateAll(
        alice,
        () =>
          Array.from({ length: 400 }, (_, i) => ({
            name: `topics/n${i}`,
            change: { kind: 'put', operation: 'create', description: 'numbered', body: `${'text '.repeat(40)}${i}\n` },
          })),
        rules,
      ),
    );
    await engram(['backup', dir.file('good.db'), '--db', db], env);
    const good = readFileSync(dir.file('good.db'));

    writeFileSync(dir.file('truncated.db'), good.subarray(0, Math.floor(good.length / 2)));
    const damaged = Buffer.from(good);
    damaged.fill(0x5a, 4096 * 3, 4096 * 3 + 2048);
    writeFileSync(dir.file('damaged.db'), damaged);
    writeFileSync(dir.file('changed.db'), good);
    const changed = new Database(dir.file('changed.db'));
    changed.exec("UPDATE entries SET dropped_at = 1, dropped_by = 'cli' WHERE name = 'topics/n1'");
    changed.close();
    writeFileSync(dir.file('.engram-x.db.123-abcd.partial'), good);

    for (const [file, message] of [
      ['truncated.db', /is damaged/],
      ['damaged.db', /is damaged/],
      ['changed.db', /does not hold what its stamp says \(400 entries recorded, 399 held; 0 trash recorded, 1 held\)/],
      ['.engram-x.db.123-abcd.partial', /is an unfinished backup \(a \.partial file\)/],
    ] as const) {
      const run = await engram(['backup', 'verify', dir.file(file)], env);
      expect(run, file).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr).toMatch(message);
    }
    expect((await engram(['backup', 'verify', dir.file('good.db')], env)).code).toBe(0);
  });
});

describe.skipIf(server === undefined)('backups across backends (PostgreSQL)', () => {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });

  it('restores a SQLite backup into PostgreSQL, and a PostgreSQL backup into SQLite, losslessly', async () => {
    const { dir, env, db } = setup();
    const original = await filled(db);
    await engram(['backup', dir.file('from-sqlite.db'), '--db', db], env);
    const database = await createTestDatabase(server as string);
    databases.push(database);

    const intoPostgres = await engram(['restore-backup', dir.file('from-sqlite.db'), '--to', database.url], env);
    expect(intoPostgres.code).toBe(0);
    expect(await withPostgres(database.url, dumpOf)).toEqual(original);

    const fromPostgres = await engram(
      ['backup', dir.file('from-pg.db'), '--database-url', database.url, '--json'],
      env,
    );
    expect(fromPostgres.code).toBe(0);
    expect(JSON.parse(fromPostgres.stdout)).toMatchObject({
      from: expect.stringMatching(/^PostgreSQL /),
      source: 'postgres',
      counts: COUNTS,
    });
    const verified = await engram(['backup', 'verify', dir.file('from-pg.db'), '--json'], env);
    expect(JSON.parse(verified.stdout)).toMatchObject({ source: 'postgres', counts: COUNTS });
    const intoSqlite = await engram(['restore-backup', dir.file('from-pg.db'), '--to', dir.file('back.db')], env);
    expect(intoSqlite.code).toBe(0);
    expect(await withSqlite(dir.file('back.db'), dumpOf)).toEqual(original);
  });

  it('refuses to restore over a PostgreSQL memory that holds anything unless --force, then keeps a copy', async () => {
    const { dir, env, db } = setup();
    const original = await filled(db);
    await engram(['backup', dir.file('b.db'), '--db', db], env);
    const database = await createTestDatabase(server as string);
    databases.push(database);
    const schema = await createTestSchema(database);
    const held = await withPostgres(schema.url, async (store) => {
      await store.mutate(bob, 'topics/mine', put('mine\n'), rules);
      return store.dump();
    });

    const refused = await engram(['restore-backup', dir.file('b.db'), '--database-url', schema.url], env);
    expect(refused.code).toBe(1);
    expect(await withPostgres(schema.url, dumpOf)).toEqual(held);
    const forced = await engram(
      ['restore-backup', dir.file('b.db'), '--database-url', schema.url, '--force', '--json'],
      { ...env, XDG_DATA_HOME: dir.file('data') },
    );
    expect(forced.code).toBe(0);
    const { kept } = JSON.parse(forced.stdout) as { kept: string };
    expect(kept.startsWith(dir.file('data/engram/backups/engram-before-restore-'))).toBe(true);
    expect(await withPostgres(schema.url, dumpOf)).toEqual(original);
    await engram(['restore-backup', kept, '--to', dir.file('kept.db')], env);
    expect(await withSqlite(dir.file('kept.db'), dumpOf)).toEqual(held);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&');
}
