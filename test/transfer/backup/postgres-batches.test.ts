/**
 * A backup of a PostgreSQL memory is read and written a batch at a time, never held whole
 * (a scheduled backup runs inside the server): the dump hands over batches of at most its
 * read batch of rows (entries and their revisions), the next read only once the last is
 * written, and the backup restores to what the memory held. A dump that fails midway
 * leaves no file behind, and is not read again from the start into a file that holds half
 * of it already. The read batch is made small here, through the dump's own seam.
 */

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { createApp } from '../../../src/app.js';
import type { Caller, DumpedEntry, EntryBatches, Store } from '../../../src/memory/port.js';
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
const USERS = ['ada', 'bob', 'cyd'];
const ENTRIES_EACH = 30;

describe.skipIf(!server)('a backup of a PostgreSQL memory, in batches', () => {
  let database: TestDatabase | undefined;

  afterAll(async () => {
    await database?.drop();
  });

  /** A store on a fresh database holding three users' entries (several revisions each, some dropped), and a runner on it. */
  async function filled(): Promise<{ store: PostgresStore; runner: Runner }> {
    database ??= await createTestDatabase(server!);
    await queryPostgres(database.url, 'DROP SCHEMA public CASCADE; CREATE SCHEMA public');
    const store = await openPostgresStore({ connectionString: database.url });
    const app = createApp({ store });
    onTestFinished(() => app.close());
    for (const user of USERS) {
      const caller: Caller = { user, label: 'test' };
      for (let at = 0; at < ENTRIES_EACH; at++) {
        const name = `topics/n${at}`;
        await app.memory.write(caller, { name, description: `Note ${at}`, new: `Body ${at} of ${user}.` });
        for (let edit = 0; edit < at % 4; edit++) await app.memory.write(caller, { name, new: `Line ${edit}.` });
        if (at % 7 === 0) await app.memory.drop(caller, name);
      }
    }
    const pool = createPool({ connectionString: database.url });
    onTestFinished(() => pool.end());
    return { store, runner: new Runner(pool, serverAddress(database.url)) };
  }

  /** `store`, dumping in batches of READ_BATCH rows through `runner`, each batch first shown to `seen` (and awaited). */
  function inSmallBatches(
    store: Store,
    runner: Runner,
    seen: (entries: readonly DumpedEntry[]) => void | Promise<void>,
  ) {
    const dumpInBatches = (batches: EntryBatches) =>
      dumpDatabaseInBatches(
        runner,
        {
          total: (entries) => batches.total(entries),
          batch: async (entries) => {
            await seen(entries);
            await batches.batch(entries);
          },
        },
        READ_BATCH,
      );
    return Object.assign(Object.create(store) as Store, { dumpInBatches });
  }

  it('reads at most a batch of rows at once, writes each before the next is read, and restores identically', async () => {
    const { store, runner } = await filled();
    const sizes: number[] = [];
    let writing = false;
    const progress: BackupProgress[] = [];
    const watched = inSmallBatches(store, runner, (entries) => {
      expect(writing).toBe(false);
      sizes.push(entries.reduce((rows, entry) => rows + 1 + entry.revisions.length, 0));
      writing = true;
    });
    const destination = join(tempDir().path, 'backup.db');

    await takeBackup({ kind: 'postgres', store: watched }, destination, {
      files: sqliteBackupFiles(),
      version: '0.0.0-test',
      now: () => Date.now(),
      onProgress: (step) => {
        progress.push(step);
        if (step.phase === 'writing') writing = false;
      },
    });

    const whole = await store.dump();
    const rows = whole.entries.reduce((sum, entry) => sum + 1 + entry.revisions.length, 0);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(rows);
    expect(sizes.length).toBeGreaterThanOrEqual(Math.ceil(rows / READ_BATCH));
    for (const size of sizes) expect(size).toBeLessThanOrEqual(READ_BATCH);
    const written = progress.filter((step) => step.phase === 'writing');
    expect(progress[0]).toEqual({ phase: 'reading' });
    expect(written).toHaveLength(sizes.length);
    expect(written.at(-1)).toEqual({ phase: 'writing', entries: whole.entries.length, total: whole.entries.length });

    const copy = new SqliteStore({ path: destination });
    onTestFinished(() => copy.close());
    expect(await copy.dump()).toEqual(whole);
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
      const [cut] = await queryPostgres<{ count: number }>(
        database!.url,
        `SELECT count(pg_terminate_backend(pid))::int AS count FROM pg_stat_activity
         WHERE datname = current_database() AND state = 'idle in transaction' AND pid <> pg_backend_pid()`,
      );
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
});
