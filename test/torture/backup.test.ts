/**
 * Backups under fire. A backup taken while another process writes continuously, restored
 * into an empty memory, holds every write acknowledged before the backup began and a
 * prefix of the ones after (one snapshot, nothing torn): SQLite to SQLite, SQLite to
 * PostgreSQL, PostgreSQL to SQLite. And `engram backup`, `engram restore-backup --force` and
 * a scheduled backup of `engram serve`, each SIGKILLed at varied moments (synchronised on
 * the files they write, never on time): no file at a backup's name is ever anything but
 * a good backup, a `.partial` copy is refused, the memory backed up is untouched, and a
 * memory being restored into holds what it held before or the whole backup, nothing between.
 */

import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Caller, StoreDump } from '../../src/memory/port.js';
import type { StorageBackend } from '../../src/storage/backend.js';
import { sqliteBackupFiles } from '../../src/storage/sqlite/backup-files.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { BackupSchedule } from '../../src/transfer/backup/schedule.js';
import { childEnv, ENGRAM_CLI, queryDatabase, runEngram, tempDir } from '../helpers/engram.js';
import { createTestDatabase, findTestPostgres, queryPostgres, type TestDatabase } from '../helpers/postgres.js';
import { rules } from '../helpers/rules.js';
import { type Child, describeEnding, fixture, startChild } from './child.js';

const server = await findTestPostgres();
const alice: Caller = { user: 'alice', label: 'backup-torture' };

/** The numbers the writer acknowledged so far. */
function acknowledged(writer: Child): number {
  return writer.lines.filter((line) => /^\d+$/.test(line)).length;
}

/** The numbers of the writer's entries a memory holds, ascending. */
function numbersIn(names: readonly string[], prefix = 'topics/n-'): number[] {
  return names
    .map((name) =>
      name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length)) ? name.slice(prefix.length) : undefined,
    )
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

function sqliteNames(path: string): string[] {
  return queryDatabase<{ name: string }>(
    path,
    "SELECT name FROM entries WHERE user_id = 'local' AND dropped_at IS NULL",
  ).map((row) => row.name);
}

async function postgresNames(url: string): Promise<string[]> {
  const rows = (await queryPostgres(
    url,
    "SELECT name FROM entries WHERE user_id = 'local' AND dropped_at IS NULL",
  )) as {
    name: string;
  }[];
  return rows.map((row) => row.name);
}

/** Every write acknowledged before the backup began is there, and what is there is 1..k: one moment's state. */
function expectConsistent(numbers: readonly number[], before: number, after: number): void {
  expect(numbers.length).toBeGreaterThanOrEqual(before);
  // A write may commit before its acknowledgement is printed: one past the last printed at most.
  expect(numbers.length).toBeLessThanOrEqual(after + 1);
  expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i + 1));
}

/** Starts the writer on `target` and waits for some acknowledged writes. */
async function startWriter(backend: 'sqlite' | 'postgres', target: string, prefix?: string): Promise<Child> {
  const writer = startChild(fixture('write-entries.mjs'), [backend, target, ...(prefix === undefined ? [] : [prefix])]);
  await writer.until((lines) => lines.length > 20);
  return writer;
}

/** Backs up while the writer writes; returns the backup and how many writes were acknowledged before it began and once it ended. */
async function backupWhileWriting(writer: Child, args: readonly string[], env: NodeJS.ProcessEnv) {
  const before = acknowledged(writer);
  const run = await runEngram(['backup', ...args, '--json'], env);
  expect(run, run.stderr).toMatchObject({ code: 0 });
  // The writer went on writing through the backup, and after it.
  const reached = acknowledged(writer);
  await writer.until((lines) => lines.length > reached + 5);
  const ending = await writer.kill();
  expect(ending.signal, describeEnding(ending)).toBe('SIGKILL');
  return { path: (JSON.parse(run.stdout) as { path: string }).path, before, after: acknowledged(writer) };
}

describe('a backup taken while another process writes continuously', () => {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });

  async function database(): Promise<TestDatabase> {
    const created = await createTestDatabase(server as string);
    databases.push(created);
    return created;
  }

  it('SQLite: restored into an empty SQLite memory, holds every acknowledged write before it, nothing torn', async () => {
    const dir = tempDir();
    const env = childEnv(dir.path);
    const writer = await startWriter('sqlite', dir.file('memory.db'));
    const { path, before, after } = await backupWhileWriting(
      writer,
      [dir.file('b.db'), '--db', dir.file('memory.db')],
      env,
    );

    const restored = await runEngram(['restore-backup', path, '--to', dir.file('new.db')], env);

    expect(restored.code, restored.stderr).toBe(0);
    expectConsistent(numbersIn(sqliteNames(dir.file('new.db'))), before, after);
    expect(numbersIn(sqliteNames(dir.file('memory.db'))).length).toBeGreaterThanOrEqual(after);
  });

  it("SQLite, two processes writing at once: each one's acknowledged writes are there", async () => {
    const dir = tempDir();
    const env = childEnv(dir.path);
    const one = await startWriter('sqlite', dir.file('memory.db'), 'topics/one-');
    const two = await startWriter('sqlite', dir.file('memory.db'), 'areas/two-');
    const before = [acknowledged(one), acknowledged(two)];
    const run = await runEngram(['backup', dir.file('b.db'), '--db', dir.file('memory.db')], env);
    expect(run.code, run.stderr).toBe(0);
    const after = [];
    for (const writer of [one, two]) {
      const reached = acknowledged(writer);
      await writer.until((lines) => lines.length > reached + 5);
      await writer.kill();
      after.push(acknowledged(writer));
    }

    const restored = await runEngram(['restore-backup', dir.file('b.db'), '--to', dir.file('new.db')], env);

    expect(restored.code, restored.stderr).toBe(0);
    const names = sqliteNames(dir.file('new.db'));
    expectConsistent(numbersIn(names, 'topics/one-'), before[0] as number, after[0] as number);
    expectConsistent(numbersIn(names, 'areas/two-'), before[1] as number, after[1] as number);
  });

  it.skipIf(server === undefined)('SQLite backup restored into PostgreSQL', async () => {
    const dir = tempDir();
    const env = childEnv(dir.path);
    const writer = await startWriter('sqlite', dir.file('memory.db'));
    const { path, before, after } = await backupWhileWriting(
      writer,
      [dir.file('b.db'), '--db', dir.file('memory.db')],
      env,
    );
    const target = await database();

    const restored = await runEngram(['restore-backup', path, '--to', target.url], env);

    expect(restored.code, restored.stderr).toBe(0);
    expectConsistent(numbersIn(await postgresNames(target.url)), before, after);
  });

  it.skipIf(server === undefined)('PostgreSQL backup restored into SQLite', async () => {
    const dir = tempDir();
    const env = childEnv(dir.path);
    const source = await database();
    const writer = await startWriter('postgres', source.url);
    const { path, before, after } = await backupWhileWriting(
      writer,
      [dir.file('b.db'), '--database-url', source.url],
      env,
    );

    const restored = await runEngram(['restore-backup', path, '--to', dir.file('new.db')], env);

    expect(restored.code, restored.stderr).toBe(0);
    expectConsistent(numbersIn(sqliteNames(dir.file('new.db'))), before, after);
  });
});

/** A memory of some megabytes (so a copy takes a while), and its dump. */
async function bigMemory(path: string, entries = 2_000): Promise<StoreDump> {
  const store = openSqliteStore({ path });
  try {
    await store.mutateAll(
      alice,
      () =>
        Array.from({ length: entries }, (_, i) => ({
          name: `topics/n${i}`,
          change: {
            kind: 'put' as const,
            operation: 'create' as const,
            description: `entry ${i}`,
            body: `${`${i} `.repeat(2_000)}\n`,
          },
        })),
      rules,
    );
    return await store.dump();
  } finally {
    await store.close();
  }
}

async function dumpOf(path: string): Promise<StoreDump> {
  const store: StorageBackend = openSqliteStore({ path });
  try {
    return await store.dump();
  } finally {
    await store.close();
  }
}

function integrity(path: string): string {
  return queryDatabase<{ integrity_check: string }>(path, 'PRAGMA integrity_check')[0]?.integrity_check ?? '';
}

/** Waits, checking the folder between turns, until `predicate` holds or the child has ended. */
async function untilFiles(folder: string, child: Child, predicate: (names: string[]) => boolean): Promise<void> {
  let ended = false;
  void child.ended.then(() => {
    ended = true;
  });
  while (!ended && !predicate(existsSync(folder) ? readdirSync(folder) : [])) {
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

const isPartial = (name: string) => /\.partial(-journal|-wal|-shm)?$/.test(name);
const partialOf = (names: string[]) => names.find((name) => name.endsWith('.partial'));

/** The moments to kill at: on start; once the copy's file appears; once it is half the memory; once it is whole. */
function killPoints(folder: string, size: number) {
  const finished = new Set(existsSync(folder) ? readdirSync(folder) : []);
  // Grown to `share` of the memory's size, or finished (a copy may come out smaller than the memory).
  const grown = (share: number) => (names: string[]) => {
    const done = names.filter((name) => name.endsWith('.db') && !finished.has(name));
    for (const name of done) finished.add(name);
    if (done.length > 0) return true;
    const partial = partialOf(names);
    return (
      partial !== undefined && (statSync(join(folder, partial), { throwIfNoEntry: false })?.size ?? 0) >= size * share
    );
  };
  return [
    { name: 'on start', wait: undefined },
    { name: 'as the copy appears', wait: (names: string[]) => partialOf(names) !== undefined },
    { name: 'half-way through the copy', wait: grown(0.5) },
    { name: 'with the copy about whole', wait: grown(0.95) },
  ];
}

/** Every file at a backup's name in `folder` verifies good; every `.partial` is refused. Returns the good ones. */
async function expectOnlyGoodBackups(folder: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const good: string[] = [];
  for (const name of existsSync(folder) ? readdirSync(folder) : []) {
    const run = await runEngram(['backup', 'verify', join(folder, name)], env);
    if (isPartial(name)) {
      expect(run.code, name).toBe(1);
      expect(run.stderr).toContain('is an unfinished backup');
    } else {
      expect(run.code, `${name}: ${run.stderr}`).toBe(0);
      good.push(name);
    }
  }
  return good;
}

describe('kill -9', () => {
  it('during engram backup: nothing half-written at a backup name, the memory untouched', async () => {
    const dir = tempDir();
    const env = childEnv(dir.path);
    const memory = dir.file('memory.db');
    const original = await bigMemory(memory);
    const size = statSync(memory).size;
    const folder = dir.file('backups');
    mkdirSync(folder);

    let midCopy = 0;
    for (const point of killPoints(folder, size)) {
      const child = startChild(ENGRAM_CLI, ['backup', folder, '--db', memory], env);
      if (point.wait !== undefined) await untilFiles(folder, child, point.wait);
      const ending = await child.kill();
      if (ending.signal === 'SIGKILL' && readdirSync(folder).some(isPartial)) midCopy += 1;
      await expectOnlyGoodBackups(folder, env);
      expect(integrity(memory), point.name).toBe('ok');
    }
    // The kills did land while a copy was being written, not only before or after.
    expect(midCopy).toBeGreaterThan(0);
    expect(await dumpOf(memory)).toEqual(original);
    // The folder still takes backups, and they restore what the memory holds.
    const taken = await runEngram(['backup', folder, '--db', memory, '--json'], env);
    expect(taken.code, taken.stderr).toBe(0);
    await runEngram(['restore-backup', JSON.parse(taken.stdout).path, '--to', dir.file('new.db')], env);
    expect(await dumpOf(dir.file('new.db'))).toEqual(original);
  });

  it('during engram restore-backup --force: the memory holds what it held or the whole backup, nothing between', async () => {
    const dir = tempDir();
    const env = childEnv(dir.path);
    const backupOf = await bigMemory(dir.file('source.db'));
    const backup = dir.file('b.db');
    expect((await runEngram(['backup', backup, '--db', dir.file('source.db')], env)).code).toBe(0);
    const target = dir.file('target.db');
    const held = await bigMemory(target, 3);
    const kept = dir.file('backups');

    const backups = (names: string[]) => names.filter((name) => name.endsWith('.db')).length;
    const points = [
      { name: 'on start', wait: undefined },
      // What the memory held is kept first, then the load begins.
      {
        name: 'as the copy of what it held is written',
        wait: () => (names: string[]) => partialOf(names) !== undefined,
      },
      {
        name: 'as the load begins',
        wait: (before: number) => (names: string[]) => backups(names) > before,
      },
    ];
    for (const point of points) {
      mkdirSync(kept, { recursive: true });
      const before = backups(readdirSync(kept));
      const child = startChild(ENGRAM_CLI, ['restore-backup', backup, '--db', target, '--force'], env);
      if (point.wait !== undefined) await untilFiles(kept, child, point.wait(before));
      await child.kill();
      expect(integrity(target), point.name).toBe('ok');
      const after = JSON.stringify(await dumpOf(target));
      expect(
        after === JSON.stringify(held) || after === JSON.stringify(backupOf),
        `${point.name}: the memory holds neither what it held nor the backup`,
      ).toBe(true);
      await expectOnlyGoodBackups(kept, env);
    }
    // Run to its end, the restore leaves the backup's memory, whatever came before.
    const done = await runEngram(['restore-backup', backup, '--db', target, '--force'], env);
    expect(done.code, done.stderr).toBe(0);
    expect(await dumpOf(target)).toEqual(backupOf);
  });

  it('during a scheduled backup of engram serve: no bad backup is kept, the memory untouched, the next start cleans up', async () => {
    const dir = tempDir();
    const env = childEnv(dir.path);
    const memory = dir.file('memory.db');
    const original = await bigMemory(memory);
    const size = statSync(memory).size;
    const folder = dir.file('backups');

    for (const point of killPoints(folder, size).slice(1)) {
      const child = startChild(
        ENGRAM_CLI,
        ['serve', '--db', memory, '--port', '0', '--backup-dir', folder, '--backup-every', '1h', '--json'],
        env,
      );
      await untilFiles(folder, child, point.wait as (names: string[]) => boolean);
      await child.kill();
      await expectOnlyGoodBackups(folder, env);
      expect(integrity(memory), point.name).toBe('ok');
    }
    expect(await dumpOf(memory)).toEqual(original);

    // The next schedule removes the copies of the killed ones and carries on.
    const schedule = new BackupSchedule({
      memory: { kind: 'sqlite', path: memory },
      files: sqliteBackupFiles(),
      dir: folder,
      everyMs: 3_600_000,
      keep: 14,
      version: 'test',
      now: Date.now,
      log: () => {},
      timers: { set: () => undefined, clear: () => {} },
    });
    await schedule.start();
    expect(readdirSync(folder).filter(isPartial)).toEqual([]);
    const run = await schedule.runNow();
    expect(run.ok).toBe(true);
    expect(schedule.lastGood()?.path).toBe(run.ok ? run.backup.path : undefined);
    await schedule.stop();
  });
});
