/**
 * SQLite's failures in words: every failure of the database file becomes a store error
 * with a stable code and a message naming the file and what to do — from SQLite's codes
 * one by one, then from a real full disk, read-only connection and damaged file.
 */

import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EngramError } from '../../src/memory/model/errors.js';
import type { Caller } from '../../src/memory/port.js';
import { appendLine, put } from '../../src/storage/contract/setup.js';
import { explainFailure } from '../../src/storage/sqlite/errors.js';
import { openSqliteStore, type SqliteStore } from '../../src/storage/sqlite/index.js';
import { rules } from '../helpers/rules.js';
import { fillDisk, makeReadOnly } from '../helpers/sqlite-faults.js';

const alice: Caller = { user: 'alice', label: 'errors-test' };
const context = { path: '/data/memory.db', busyDeadlineMs: 10_000 };

function sqliteError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('explainFailure', () => {
  it.each([
    [
      'SQLITE_BUSY',
      'database is locked',
      'STORE_BUSY',
      "The memory's database is busy: another program is writing to it (/data/memory.db) and did not finish within 10 s. Nothing was changed; try again in a moment.",
    ],
    [
      'SQLITE_BUSY_SNAPSHOT',
      'database is locked',
      'STORE_BUSY',
      "The memory's database is busy: another program is writing to it (/data/memory.db) and did not finish within 10 s. Nothing was changed; try again in a moment.",
    ],
    [
      'SQLITE_READONLY',
      'attempt to write a readonly database',
      'STORE_READ_ONLY',
      "The memory's database /data/memory.db cannot be written: the file, its folder or its file system is read-only (attempt to write a readonly database (SQLITE_READONLY)). Nothing was changed. Give the user running Engram write access to the file and its folder, then try again.",
    ],
    [
      'SQLITE_READONLY_DBMOVED',
      'attempt to write a readonly database',
      'STORE_REPLACED',
      'The database file at /data/memory.db was removed or replaced while Engram had it open, so nothing was written: a write now would be lost when Engram restarts. Restart Engram so that it opens the file at that path (restore the file from a backup first if it was removed by mistake).',
    ],
    [
      'SQLITE_FULL',
      'database or disk is full',
      'STORE_FULL',
      "The disk holding the memory's database /data/memory.db is full (database or disk is full (SQLITE_FULL)). Nothing was changed. Free some space on that disk, then try again.",
    ],
    [
      'SQLITE_CANTOPEN',
      'unable to open database file',
      'STORE_UNAVAILABLE',
      "The memory's database /data/memory.db cannot be opened (unable to open database file (SQLITE_CANTOPEN)). Check that the file and its folder exist and that the user running Engram may read and write both, then try again.",
    ],
    [
      'SQLITE_NOTADB',
      'file is not a database',
      'STORE_UNAVAILABLE',
      'The file /data/memory.db is not a readable Engram database (file is not a database (SQLITE_NOTADB)): it is damaged, or not a database at all. Nothing was changed. Check the path; if the file was damaged, restore it from a backup.',
    ],
    [
      'SQLITE_CORRUPT',
      'database disk image is malformed',
      'STORE_UNAVAILABLE',
      'The file /data/memory.db is not a readable Engram database (database disk image is malformed (SQLITE_CORRUPT)): it is damaged, or not a database at all. Nothing was changed. Check the path; if the file was damaged, restore it from a backup.',
    ],
    [
      'SQLITE_IOERR_WRITE',
      'disk I/O error',
      'STORE_UNAVAILABLE',
      "Reading or writing the memory's database /data/memory.db failed (disk I/O error (SQLITE_IOERR_WRITE)). Check the disk and the file system that hold it, then try again; if a change was being made, read the entry back first: it may not have been saved.",
    ],
  ])('puts %s in words as a store error', (code, message, expectedCode, expectedMessage) => {
    const explained = explainFailure(sqliteError(code, message), context);
    expect(explained).toBeInstanceOf(EngramError);
    expect(explained).toMatchObject({ code: expectedCode, message: expectedMessage });
  });

  it('says how long a short deadline was', () => {
    expect(
      (explainFailure(sqliteError('SQLITE_BUSY', 'x'), { ...context, busyDeadlineMs: 300 }) as Error).message,
    ).toMatch(/did not finish within 300 ms\./);
  });

  it('leaves alone what is not a failure of the file: refusals, constraint errors, programming errors', () => {
    const refusal = new EngramError('NO_MATCH', 'not found');
    const constraint = sqliteError('SQLITE_CONSTRAINT_UNIQUE', 'UNIQUE constraint failed');
    const bug = new TypeError('x is undefined');
    for (const error of [refusal, constraint, bug]) expect(explainFailure(error, context)).toBe(error);
  });
});

describe.each([
  { label: 'with group commit', groupCommit: true },
  { label: 'without group commit', groupCommit: false },
])('SqliteStore failures, $label', ({ groupCommit }) => {
  let folder: string;
  let path: string;
  let store: SqliteStore;

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-sqlite-errors-'));
    path = join(folder, 'memory.db');
    store = openSqliteStore({ path, accelerators: { groupCommit } });
    await store.mutate(alice, 'topics/a', appendLine('kept'), rules);
  });

  afterEach(async () => {
    await store.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('refuses a write on a full disk with STORE_FULL naming the file, changing nothing', async () => {
    fillDisk(store);

    await expect(store.mutate(alice, 'topics/big', put('x'.repeat(64 * 1024)), rules)).rejects.toMatchObject({
      code: 'STORE_FULL',
      message: expect.stringContaining(`The disk holding the memory's database ${path} is full`),
    });
    expect(await store.index('alice')).toEqual([{ name: 'topics/a', size: 5, description: 'appended lines' }]);
  });

  it('refuses a write on a read-only file with STORE_READ_ONLY naming the file, and still reads', async () => {
    makeReadOnly(store);

    await expect(store.mutate(alice, 'topics/a', appendLine('more'), rules)).rejects.toMatchObject({
      code: 'STORE_READ_ONLY',
      message: expect.stringContaining(`The memory's database ${path} cannot be written`),
    });
    expect(await store.get('alice', ['topics/a'])).toEqual([expect.objectContaining({ body: 'kept\n' })]);
  });
});

describe('opening a file that is not a database', () => {
  it('is refused with STORE_UNAVAILABLE naming the file, which is left as it was', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'engram-sqlite-errors-'));
    const path = join(folder, 'notes.txt');
    const text = 'These are my notes, not a database.\n'.repeat(200);
    writeFileSync(path, text);
    try {
      expect(() => openSqliteStore({ path })).toThrow(
        expect.objectContaining({
          name: 'EngramError',
          code: 'STORE_UNAVAILABLE',
          message: expect.stringContaining(`The file ${path} is not a readable Engram database`),
        }),
      );
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
