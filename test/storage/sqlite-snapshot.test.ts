/**
 * snapshotSqlite (snapshot.ts): a live SQLite memory copied consistently to a path, whole or
 * not at all, by either driver: the copy holds every commit made before it and a prefix of
 * those made meanwhile, passes integrity_check, and appears at its name only once whole;
 * a failure (a source that is no database, a hook that throws) leaves no file behind, and
 * a destination that exists is never replaced.
 */

import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Database } from '../../src/storage/sqlite/driver.js';
import { sqliteDriver } from '../../src/storage/sqlite/drivers.js';
import { type SnapshotProgress, snapshotSqlite } from '../../src/storage/sqlite/snapshot.js';
import { driversUnderTest } from '../helpers/sqlite-drivers.js';
import { tempDir } from '../helpers/temp-dir.js';

for (const { name, missing } of driversUnderTest()) {
  describe.skipIf(missing !== undefined)(`snapshotSqlite by ${name}${missing ? ` (skipped: ${missing})` : ''}`, () => {
    const open = (path: string): Database => {
      const db = new (sqliteDriver(name).Database)(path);
      onTestFinished(() => db.close());
      return db;
    };

    /** A WAL database of `rows` numbered rows of some size, its writer left open. */
    const live = (path: string, rows: number): Database => {
      const db = open(path);
      db.pragma('journal_mode = WAL');
      db.exec('CREATE TABLE t (n INTEGER PRIMARY KEY, body TEXT NOT NULL)');
      const insert = db.prepare('INSERT INTO t (n, body) VALUES (?, ?)');
      db.transaction(() => {
        for (let n = 1; n <= rows; n += 1) insert.run(n, `row ${n} `.repeat(40));
      })();
      return db;
    };

    it('copies every commit before it, and a prefix of those made while it runs, into a whole file', async () => {
      const dir = tempDir();
      const writer = live(dir.file('memory.db'), 5000);
      const insert = writer.prepare('INSERT INTO t (n, body) VALUES (?, ?)');
      const progress: SnapshotProgress[] = [];
      const copying = snapshotSqlite(dir.file('memory.db'), dir.file('copy.db'), {
        driver: name,
        onProgress: (p) => progress.push(p),
      });
      // The event loop is free while the worker copies: keep writing until the copy is done.
      let n = 5000;
      let done = false;
      void copying.finally(() => {
        done = true;
      });
      while (!done) {
        n += 1;
        insert.run(n, `row ${n}`);
        await new Promise((resolve) => setImmediate(resolve));
      }
      const snapshot = await copying;
      expect(snapshot.path).toBe(dir.file('copy.db'));
      expect(snapshot.bytes).toBeGreaterThan(0);
      expect(progress.at(-1)?.bytes).toBe(snapshot.bytes);
      // Readable by its owner alone, as the memory is.
      expect(statSync(dir.file('copy.db')).mode & 0o777).toBe(0o600);

      const copy = open(dir.file('copy.db'));
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      const count = copy.prepare('SELECT count(*) FROM t').pluck().get() as number;
      const max = copy.prepare('SELECT max(n) FROM t').pluck().get() as number;
      expect(count).toBeGreaterThanOrEqual(5000);
      expect(max).toBe(count); // a prefix: no commit missing before the last one copied
      expect(readdirSync(dir.path).filter((file) => file.endsWith('.partial'))).toEqual([]);
    });

    it('lets the hook write into the copy before it is renamed, and abandons the copy when the hook throws', async () => {
      const dir = tempDir();
      live(dir.file('memory.db'), 10);
      await snapshotSqlite(dir.file('memory.db'), dir.file('marked.db'), {
        driver: name,
        beforeRename: (partial) => {
          expect(partial.endsWith('.partial')).toBe(true);
          expect(readdirSync(dir.path)).not.toContain('marked.db');
          const db = new (sqliteDriver(name).Database)(partial);
          db.exec("CREATE TABLE mark (what TEXT); INSERT INTO mark VALUES ('hook')");
          db.close();
        },
      });
      expect(open(dir.file('marked.db')).prepare('SELECT what FROM mark').pluck().get()).toBe('hook');

      await expect(
        snapshotSqlite(dir.file('memory.db'), dir.file('abandoned.db'), {
          driver: name,
          beforeRename: () => {
            throw new Error('the hook refused');
          },
        }),
      ).rejects.toThrow('the hook refused');
      expect(readdirSync(dir.path).sort()).toEqual(['marked.db', 'memory.db', 'memory.db-shm', 'memory.db-wal']);
    });

    it('never replaces a file that appears at its name while it copies: a named path is refused, a chooser picks again', async () => {
      const dir = tempDir();
      live(dir.file('memory.db'), 10);
      // A cron `engram backup DIR` and a scheduled backup picking one name: the other one finishes first.
      const theirs = (name: string) => () => writeFileSync(dir.file(name), 'theirs');
      await expect(
        snapshotSqlite(dir.file('memory.db'), dir.file('named.db'), { driver: name, beforeRename: theirs('named.db') }),
      ).rejects.toThrow(/named\.db already exists: a file appeared there while the copy was made/);
      expect(readFileSync(dir.file('named.db'), 'utf8')).toBe('theirs');
      const names = ['free.db', 'free-2.db', 'free-3.db'];
      const chooser = { next: () => dir.file(names.find((name) => !existsSync(dir.file(name))) ?? 'none.db') };
      const taken = await snapshotSqlite(dir.file('memory.db'), chooser, {
        driver: name,
        beforeRename: theirs('free.db'),
      });
      expect(taken.path).toBe(dir.file('free-2.db'));
      expect(readFileSync(dir.file('free.db'), 'utf8')).toBe('theirs');
      expect(open(taken.path).prepare('SELECT count(*) FROM t').pluck().get()).toBe(10);
      expect(readdirSync(dir.path).filter((file) => file.includes('.partial'))).toEqual([]);
    });

    it('never replaces a file, and leaves nothing behind when the source is no database', async () => {
      const dir = tempDir();
      live(dir.file('memory.db'), 1);
      writeFileSync(dir.file('taken.db'), 'mine');
      await expect(snapshotSqlite(dir.file('memory.db'), dir.file('taken.db'), { driver: name })).rejects.toThrow(
        /already exists/,
      );
      writeFileSync(dir.file('notes.txt'), 'not a database, but long enough to look like a header '.repeat(10));
      await expect(snapshotSqlite(dir.file('notes.txt'), dir.file('copy.db'), { driver: name })).rejects.toThrow(
        /not a database/,
      );
      await expect(snapshotSqlite(dir.file('missing.db'), dir.file('copy.db'), { driver: name })).rejects.toThrow(
        /ENOENT/,
      );
      expect(readdirSync(dir.path).sort()).toEqual([
        'memory.db',
        'memory.db-shm',
        'memory.db-wal',
        'notes.txt',
        'taken.db',
      ]);
    });
  });
}
