/**
 * A SQLite store's dump in batches (the source of engram migrate and restore-backup): pages
 * by id of at most a read batch of rows (entries and their revisions), but for a lone entry
 * whose history alone is more, every entry once, with what a whole dump holds; what the
 * receiver of its batches throws ends the dump as it came, not worded as this file's
 * failure (a target's full disk is not the source's), and the read transaction ends with it;
 * a snapshot that finds the file busy as it begins is begun again, as a read is.
 */

import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Caller, DumpedEntry } from '../../src/memory/port.js';
import { dumpDatabaseInBatches } from '../../src/storage/sqlite/dump.js';
import { SqliteStore } from '../../src/storage/sqlite/store.js';
import { rules } from '../helpers/rules.js';
import { tempDir } from '../helpers/temp-dir.js';

const READ_BATCH = 25;

describe('SqliteStore.dumpInBatches', () => {
  it('hands over pages by id of at most a read batch of rows, but for a lone long history, every entry once', async () => {
    const path = tempDir().file('memory.db');
    const store = new SqliteStore({ path });
    // Three users written round-robin, 0 to 3 edits each, some dropped; one entry's history longer than a batch.
    for (let at = 0; at < 30; at++) {
      for (const user of ['ada', 'bob', 'cyd']) {
        const caller: Caller = { user, label: 'test' };
        const name = `topics/n${at}`;
        for (let revision = 0; revision <= at % 4; revision++) {
          const body = `${user} ${at} ${revision}\n`;
          await store.mutate(
            caller,
            name,
            (current) => ({ kind: 'put', operation: current ? 'replace' : 'create', description: 'd', body }),
            rules,
          );
        }
        if (at % 7 === 0) await store.mutate(caller, name, () => ({ kind: 'drop' }), rules);
      }
    }
    for (let edit = 0; edit < READ_BATCH + 5; edit++) {
      const body = `edit ${edit}\n`;
      await store.mutate(
        { user: 'ada', label: 'test' },
        'topics/n5',
        () => ({ kind: 'put', operation: 'replace', description: 'd', body }),
        rules,
      );
    }
    const { entries, ...whole } = await store.dump();
    await store.close();
    const db = new Database(path);
    onTestFinished(() => void db.close());
    const batches: DumpedEntry[][] = [];
    const totals: number[] = [];

    const tables = await dumpDatabaseInBatches(
      db,
      { total: (count) => totals.push(count), batch: async (batch) => void batches.push([...batch]) },
      undefined,
      READ_BATCH,
    );

    expect(tables).toEqual(whole);
    expect(totals).toEqual([entries.length]);
    expect(batches.flat()).toEqual(entries);
    const rows = (batch: readonly DumpedEntry[]) => batch.reduce((sum, entry) => sum + 1 + entry.revisions.length, 0);
    for (const batch of batches) if (rows(batch) > READ_BATCH) expect(batch).toHaveLength(1);
    expect(batches.some((batch) => rows(batch) > READ_BATCH)).toBe(true);
    expect(batches.length).toBeGreaterThanOrEqual(Math.ceil(rows(entries) / READ_BATCH));
    expect(db.inTransaction).toBe(false);
  });

  it('passes on what the receiver throws as it came, and ends its read transaction', async () => {
    const path = tempDir().file('memory.db');
    const store = new SqliteStore({ path });
    onTestFinished(() => store.close());
    await store.mutate(
      { user: 'alice', label: 'cli' },
      'topics/a',
      () => ({ kind: 'put', operation: 'create', description: 'd', body: 'a\n' }),
      rules,
    );
    const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });

    await expect(
      store.dumpInBatches({
        total: () => {},
        batch: async () => {
          throw full;
        },
      }),
    ).rejects.toBe(full);

    // The transaction is over: the store writes and dumps on.
    await store.mutate(
      { user: 'alice', label: 'cli' },
      'topics/b',
      () => ({ kind: 'put', operation: 'create', description: 'd', body: 'b\n' }),
      rules,
    );
    expect((await store.dump()).entries).toHaveLength(2);
  });

  it('tries again while the file is busy as its snapshot begins, then dumps it whole', async () => {
    const path = tempDir().file('memory.db');
    const store = new SqliteStore({ path });
    onTestFinished(() => store.close());
    await store.mutate(
      { user: 'alice', label: 'cli' },
      'topics/a',
      () => ({ kind: 'put', operation: 'create', description: 'd', body: 'a\n' }),
      rules,
    );
    // The first read of the first read transaction finds the file busy, as when another process
    // holds it (a WAL file cannot be held so from a test while the store has it open).
    const db = (store as unknown as { db: Database.Database }).db;
    let begun = false;
    let busy = 0;
    const busyOnce = new Proxy(db, {
      get(target, key) {
        if (key === 'exec') {
          return (sql: string) => {
            if (sql === 'BEGIN' && busy === 0) begun = true;
            return target.exec(sql);
          };
        }
        if (key === 'prepare') {
          return (sql: string) => {
            const statement = target.prepare(sql);
            if (!begun) return statement;
            begun = false;
            busy++;
            const fail = () => {
              throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
            };
            return Object.assign(Object.create(statement), { get: fail, all: fail, pluck: () => ({ get: fail }) });
          };
        }
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    Object.defineProperty(store, 'db', { value: busyOnce });
    const taken: string[] = [];

    const tables = await store.dumpInBatches({
      total: () => {},
      batch: async (entries) => void taken.push(...entries.map((entry) => entry.name)),
    });

    expect({ busy, taken, users: tables.users.map((usage) => usage.user) }).toEqual({
      busy: 1,
      taken: ['topics/a'],
      users: ['alice'],
    });
  });
});
