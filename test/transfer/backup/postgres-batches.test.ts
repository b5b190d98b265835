/**
 * A backup of a PostgreSQL memory is read and written a batch at a time, never held whole
 * (a scheduled backup runs inside the server): the dump hands over batches of at most its
 * read batch of rows (entries and their revisions), the next read only once the last is
 * written, and the backup restores to what the memory held. A dump that fails midway
 * leaves no file behind, and is not read again from the start into a file that holds half
 * of it already; one that fails before its first batch is read again, whole. The read
 * batch is made small here, through the dump's own seam, and the memory written so that
 * the key order (user, then id) is not the order of writing, one entry's history alone
 * is more than a batch, and writes land between two batches (the backup is still the one
 * snapshot).
 */

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { createApp } from '../../../src/app.js';
import type { Caller, DumpedEntry, EntryBatches, Store } from '../../../src/memory/port.js';
import type { Connection, Pool } from '../../../src/storage/postgres/driver.js';
import { dumpDatabaseInBatches } from '../../../src/storage/postgres/dump.js';
import { openPostgresStore, type PostgresStore } from '../../../src/storage/postgres/index.js';
import { createPool, serverAddress } from '../../../src/storage/postgres/pool.js';
import { Runner } from '../../../src/storage/postgres/transaction.js';
import { sqliteBackupFiles } from '../../../src/storage/sqlite/backup-files.js';
import { SqliteStore } from '../../../src/storage/sqlite/store.js';
import { type BackupProgress, takeBackup } from '../../../src/transfer/backup/take.js';
import { tempDir } from '../../helpers/engram.js';
import { createTestDatabase, findTestPostgres, queryPostgres, type TestDatabase } from '../../helpers/postgres.js';

const server = await findTestPostgres();
const READ_BATCH = 25;
/** Written round-robin, so that ids interleave across users. */
const USERS = ['ada', 'bob', 'cyd'];
/** Written last, yet first in the key order (before lower case by code point, and by letter). */
const FIRST_USER = 'Aaron';
const ENTRIES_EACH = 30;
/** One entry each, between ada and bob in the key order: a batch holds some users whole. */
const SMALL_USERS = ['ann', 'art', 'ash'];
/** Edits of one entry of ada's: its revisions alone are more rows than a batch. */
const LONG_HISTORY = READ_BATCH + 5;

/** The dump's connection, idle in its transaction, cut off by the server. */
const CUT_DUMP = `SELECT count(pg_terminate_backend(pid))::int AS count FROM pg_stat_activity
  WHERE datname = current_database() AND state = 'idle in transaction' AND pid <> pg_backend_pid()`;

describe.skipIf(!server)('a backup of a PostgreSQL memory, in batches', () => {
  let database: TestDatabase | undefined;

  afterAll(async () => {
    await database?.drop();
  });

  /**
   * A store on a fresh database holding seven users' entries (several revisions each, some
   * dropped, one with a long history; three users of one entry), a runner on it, and `cutBeforeNextStatement`: the
   * runner's connection is cut off by the server before the next statement it sends.
   */
  async function filled(): Promise<{ store: PostgresStore; runner: Runner; cutBeforeNextStatement: () => void }> {
    database ??= await createTestDatabase(server!);
    await queryPostgres(database.url, 'DROP SCHEMA public CASCADE; CREATE SCHEMA public');
    const store = await openPostgresStore({ connectionString: database.url });
    const app = createApp({ store });
    onTestFinished(() => app.close());
    const write = async (user: string, at: number) => {
      const caller: Caller = { user, label: 'test' };
      const name = `topics/n${at}`;
      await app.memory.write(caller, { name, description: `Note ${at}`, new: `Body ${at} of ${user}.` });
      for (let edit = 0; edit < at % 4; edit++) await app.memory.write(caller, { name, new: `Line ${edit}.` });
      if (at % 7 === 0) await app.memory.drop(caller, name);
    };
    for (let at = 0; at < ENTRIES_EACH; at++) for (const user of USERS) await write(user, at);
    for (let at = 0; at < ENTRIES_EACH; at++) await write(FIRST_USER, at);
    for (const user of SMALL_USERS) await write(user, 1);
    const ada: Caller = { user: 'ada', label: 'test' };
    for (let edit = 0; edit < LONG_HISTORY; edit++)
      await app.memory.write(ada, { name: 'topics/n5', new: `Edit ${edit}.` });
    const { pool, cutBeforeNextStatement } = cuttable(createPool({ connectionString: database.url }));
    onTestFinished(() => pool.end());
    return { store, runner: new Runner(pool, serverAddress(database.url)), cutBeforeNextStatement };
  }

  /** `pool`, whose connections, once cut is asked for, are cut off by the server before their next statement. */
  function cuttable(pool: Pool): { pool: Pool; cutBeforeNextStatement: () => void } {
    let cut = false;
    const connect = async (): Promise<Connection> => {
      const connection = await pool.connect();
      const query = async (statement: Parameters<Connection['query']>[0]) => {
        if (cut) {
          cut = false;
          const [done] = await queryPostgres<{ count: number }>(database!.url, CUT_DUMP);
          expect(done?.count).toBe(1);
        }
        return connection.query(statement);
      };
      return { query: query as Connection['query'], release: (error) => connection.release(error) };
    };
    return {
      pool: { query: (statement) => pool.query(statement), connect, end: () => pool.end() } as Pool,
      cutBeforeNextStatement: () => {
        cut = true;
      },
    };
  }

  /**
   * `store`, dumping in batches of READ_BATCH rows through `runner`, each batch first shown
   * to `seen` (and awaited), the total first shown to `told`.
   */
  function inSmallBatches(
    store: Store,
    runner: Runner,
    seen: (entries: readonly DumpedEntry[]) => void | Promise<void>,
    told: (entries: number) => void = () => {},
  ) {
    const dumpInBatches = (batches: EntryBatches) =>
      dumpDatabaseInBatches(
        runner,
        {
          total: (entries) => {
            told(entries);
            batches.total(entries);
          },
          batch: async (entries) => {
            await seen(entries);
            await batches.batch(entries);
          },
        },
        READ_BATCH,
      );
    return Object.assign(Object.create(store) as Store, { dumpInBatches });
  }

  /** Rows of entries and revisions. */
  const rowsOf = (entries: readonly DumpedEntry[]) =>
    entries.reduce((rows, entry) => rows + 1 + entry.revisions.length, 0);

  /** `store` backed up to a new file through `dumping`, with what it reports. */
  async function backUp(dumping: Store, onProgress?: (step: BackupProgress) => void): Promise<SqliteStore> {
    const destination = join(tempDir().path, 'backup.db');
    await takeBackup({ kind: 'postgres', store: dumping }, destination, {
      files: sqliteBackupFiles(),
      version: '0.0.0-test',
      now: () => Date.now(),
      ...(onProgress && { onProgress }),
    });
    const copy = new SqliteStore({ path: destination });
    onTestFinished(() => copy.close());
    return copy;
  }

  it('reads at most a batch of rows at once, writes each before the next is read, and restores identically', async () => {
    const { store, runner } = await filled();
    const before = await store.dump();
    const batches: DumpedEntry[][] = [];
    let writing = false;
    const progress: BackupProgress[] = [];
    const later = createApp({ store });
    onTestFinished(() => later.close());
    const watched = inSmallBatches(store, runner, async (entries) => {
      expect(writing).toBe(false);
      batches.push([...entries]);
      writing = true;
      if (batches.length > 1) return;
      // Between two batches, entries not read yet are added, edited and dropped: the backup is still the snapshot.
      const cyd: Caller = { user: 'cyd', label: 'test' };
      await later.memory.write(cyd, { name: 'topics/added', description: 'Added', new: 'Added midway.' });
      await later.memory.write(cyd, { name: 'topics/n29', new: 'Edited midway.' });
      await later.memory.drop(cyd, 'topics/n27');
      await later.memory.write({ user: 'bob', label: 'test' }, { name: 'topics/n1', new: 'Edited midway.' });
    });

    const copy = await backUp(watched, (step) => {
      progress.push(step);
      if (step.phase === 'writing') writing = false;
    });

    expect(await store.dump()).not.toEqual(before);
    expect(await copy.dump()).toEqual(before);
    // Every entry once, in the key order: user (code point order here), then id.
    const keys = batches.flat().map((entry) => [entry.user, entry.id] as const);
    const byKey = [...before.entries]
      .sort((a, b) => (a.user === b.user ? a.id - b.id : a.user < b.user ? -1 : 1))
      .map((entry) => [entry.user, entry.id] as const);
    expect(keys).toEqual(byKey);
    expect(keys[0]?.[0]).toBe(FIRST_USER);
    expect(batches.some((batch) => SMALL_USERS.every((user) => batch.some((entry) => entry.user === user)))).toBe(true);
    // At most a batch of rows, but for a lone entry whose history alone is more.
    const sizes = batches.map(rowsOf);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(rowsOf(before.entries));
    for (const [index, size] of sizes.entries()) {
      if (size > READ_BATCH) expect(batches[index]).toHaveLength(1);
    }
    expect(sizes.some((size) => size > READ_BATCH)).toBe(true);
    expect(batches.length).toBeGreaterThanOrEqual(Math.ceil(rowsOf(before.entries) / READ_BATCH));
    const written = progress.filter((step) => step.phase === 'writing');
    expect(progress[0]).toEqual({ phase: 'reading' });
    expect(written).toHaveLength(batches.length);
    expect(written.at(-1)).toEqual({ phase: 'writing', entries: before.entries.length, total: before.entries.length });
  });

  it('reads again from the start when the connection is lost before the first batch, and restores identically', async () => {
    const { store, runner, cutBeforeNextStatement } = await filled();
    const totals: number[] = [];
    let batches = 0;
    const watched = inSmallBatches(
      store,
      runner,
      () => {
        batches++;
      },
      (entries) => {
        totals.push(entries);
        if (totals.length === 1) cutBeforeNextStatement();
      },
    );

    const copy = await backUp(watched);

    const whole = await store.dump();
    expect(totals).toEqual([whole.entries.length, whole.entries.length]);
    expect(await copy.dump()).toEqual(whole);
    expect(batches).toBeGreaterThan(1);
  });

  it('leaves no file when the read fails midway, and does not read again into the half-written file', async () => {
    const { store, runner } = await filled();
    const folder = tempDir().path;
    let batches = 0;
    let partials: string[] = [];
    const failing = inSmallBatches(store, runner, async () => {
      batches++;
      if (batches > 1) return;
      partials = readdirSync(folder).filter((name) => name.endsWith('.partial'));
      // The dump's connection, idle in its transaction while this batch is handed over, is cut off.
      const [cut] = await queryPostgres<{ count: number }>(database!.url, CUT_DUMP);
      expect(cut?.count).toBe(1);
    });

    const taking = takeBackup({ kind: 'postgres', store: failing }, join(folder, 'backup.db'), {
      files: sqliteBackupFiles(),
      version: '0.0.0-test',
      now: () => Date.now(),
    });

    await expect(taking).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(partials).toHaveLength(1);
    // Not read again from the start (the first batch would come twice).
    expect(batches).toBe(1);
    expect(readdirSync(folder)).toEqual([]);
  });

  it("passes on what the receiver of a batch throws as it came, not worded as this database's failure", async () => {
    const { store, runner } = await filled();
    // Another PostgreSQL database's full disk (a migration's target), or its lost connection.
    const full = Object.assign(new Error('could not extend file: No space left on device'), { code: '53100' });
    const lost = Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });

    for (const failure of [full, lost]) {
      const refusing = inSmallBatches(store, runner, () => {
        throw failure;
      });
      await expect(refusing.dumpInBatches!({ total: () => {}, batch: async () => {} })).rejects.toBe(failure);
    }
  });
});
