/**
 * A backup never replaces a file, even one that appears at its name while the backup is
 * written (a scheduled backup and a cron `engram backup DIR` picking the same
 * `engram-<second>.db`): the finished file is published by a hard link, which fails when
 * the name is taken, never by a rename, which would replace it. A path the person named is
 * then refused; a name Engram chose is chosen again. Shown on the dump's way (PostgreSQL's);
 * test/storage/sqlite-snapshot.test.ts shows SQLite's.
 */

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createApp } from '../../src/app.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';
import { sqliteBackupFiles } from '../../src/storage/sqlite/backup-files.js';
import type { BackupFiles } from '../../src/transfer/backup/port.js';
import { takeBackup } from '../../src/transfer/backup/take.js';
import { tempDir } from '../helpers/temp-dir.js';

describe('a backup from a dump', () => {
  it('is refused at a named path taken meanwhile, and goes to the next free name when Engram chose it', async () => {
    const store = openMemoryStore();
    const app = createApp({ store });
    onTestFinished(() => app.close());
    await app.memory.write({ user: 'ada', label: 'test' }, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    const dir = tempDir();
    const real = sqliteBackupFiles();
    /** The backup files, where someone else writes `name` while the backup is stamped. */
    const racing = (name: string): BackupFiles => ({
      ...real,
      stamp: async (path, stamp) => {
        writeFileSync(dir.file(name), 'theirs');
        return real.stamp(path, stamp);
      },
    });
    const take = (destination: Parameters<typeof takeBackup>[1], files: BackupFiles) =>
      takeBackup({ kind: 'postgres', store }, destination, { files, version: '0.0.0-test', now: () => Date.now() });

    await expect(take(dir.file('named.db'), racing('named.db'))).rejects.toThrow(
      /named\.db already exists: a file appeared there while the copy was made/,
    );
    expect(readFileSync(dir.file('named.db'), 'utf8')).toBe('theirs');

    const names = ['engram-a.db', 'engram-a-2.db'];
    const chooser = { next: () => dir.file(names.find((name) => !existsSync(dir.file(name))) ?? 'none.db') };
    const taken = await take(chooser, racing('engram-a.db'));
    expect(taken.path).toBe(dir.file('engram-a-2.db'));
    expect(readFileSync(dir.file('engram-a.db'), 'utf8')).toBe('theirs');
    expect((await real.inspect(taken.path)).metadata?.counts.entries).toBe(1);
    expect(readdirSync(dir.path).filter((file) => file.includes('.partial'))).toEqual([]);
  });
});
