/**
 * restoreBackup's temporary copy of the backup, and its words when a step fails. The copy
 * goes beside the target when it is a SQLite file (the memory's own disk: a small tmpfs at
 * /tmp may not hold a large backup), else in the system's temporary folder; one left by a
 * killed restore is removed by the next. A failure says which step failed (the temporary
 * copy, the copy kept of what the target held, or the target) and what to do, never the
 * backup command's "choose a folder you may write".
 */

import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createApp } from '../../../src/app.js';
import { openMemoryStore } from '../../../src/storage/memory/index.js';
import { sqliteBackupFiles } from '../../../src/storage/sqlite/backup-files.js';
import { SqliteStore } from '../../../src/storage/sqlite/store.js';
import type { Destination } from '../../../src/transfer/backup/durable.js';
import { freeBackupNames } from '../../../src/transfer/backup/names.js';
import type { BackupFiles } from '../../../src/transfer/backup/port.js';
import { type RestoreTarget, restoreBackup } from '../../../src/transfer/backup/restore.js';
import { takeBackup } from '../../../src/transfer/backup/take.js';
import { tempDir } from '../../helpers/temp-dir.js';

const real = sqliteBackupFiles();
const ADA = { user: 'ada', label: 'test' };

/** A backup of a memory holding one entry, in a fresh folder: the folder and the backup's path. */
async function aBackup() {
  const dir = tempDir();
  const store = openMemoryStore();
  const app = createApp({ store });
  onTestFinished(() => app.close());
  await app.memory.write(ADA, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
  const taken = await takeBackup({ kind: 'postgres', store }, dir.file('b.db'), {
    files: real,
    version: '0.0.0-test',
    now: () => Date.now(),
  });
  return { dir, file: taken.path };
}

/** A SQLite memory at `path` as a restore target, holding one entry when `full`. */
async function sqliteTarget(path: string, full = false): Promise<RestoreTarget> {
  const store = new SqliteStore({ path });
  onTestFinished(() => store.close());
  if (full) await createApp({ store }).memory.write(ADA, { name: 'topics/old', description: 'Old', new: 'Old.' });
  return { memory: { kind: 'sqlite', path }, store, name: `SQLite ${path}` };
}

/** The in-process store as a target that is not a SQLite file (as PostgreSQL is). */
function otherTarget(): RestoreTarget {
  const store = openMemoryStore();
  return { memory: { kind: 'postgres', store }, store, name: 'PostgreSQL db' };
}

/** The backup files, where making the temporary copy of the backup fails with `error`. */
function failingCopy(error: Error & { code?: string }): BackupFiles {
  return {
    ...real,
    snapshot: async (source, destination, options) => {
      if (source.endsWith('b.db')) throw error;
      return real.snapshot(source, destination, options);
    },
  };
}

const restore = (
  file: string,
  target: RestoreTarget,
  files: BackupFiles = real,
  keep: () => Destination = () => 'unused',
) =>
  restoreBackup(file, async () => target, {
    files,
    force: true,
    keepPath: keep,
    version: '0.0.0-test',
    now: () => Date.now(),
  });

const errno = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('the temporary copy of a restored backup', () => {
  it('goes beside a SQLite target, in the system temporary folder for another, and is removed after', async () => {
    const { dir, file } = await aBackup();
    const seen: string[] = [];
    const watching: BackupFiles = {
      ...real,
      snapshot: (source, destination, options) => {
        seen.push(String(destination));
        return real.snapshot(source, destination, options);
      },
    };
    await restore(file, await sqliteTarget(dir.file('new.db')), watching);
    expect(dirname(seen[0]!)).toBe(dir.path);
    expect(seen[0]).toMatch(new RegExp(`/\\.engram-restore-${process.pid}-[0-9a-f]{8}\\.db$`));
    await restore(file, otherTarget(), watching);
    expect(dirname(seen[1]!)).toBe(tmpdir());
    expect(readdirSync(dir.path).sort()).toEqual(['b.db', 'new.db', 'new.db-shm', 'new.db-wal']);
    expect(existsSync(seen[1]!)).toBe(false);
  });

  it('left by a killed restore is removed by the next, one of a restore still running is not', async () => {
    const { dir, file } = await aBackup();
    // A restore killed while its copy was open (its -wal beside it), one killed while the snapshot wrote it.
    const dead = dir.file('.engram-restore-999999999-0badc0de.db');
    const snapshotting = dir.file('..engram-restore-999999999-0badc0de.db.999999999-12345678.partial');
    const running = dir.file(`.engram-restore-${process.pid}-0badc0de.db`);
    const others = [dir.file('.engram-restore-999999999-0badc0de.txt'), dir.file('engram-restore-999999999-1.db')];
    for (const path of [dead, `${dead}-wal`, snapshotting, running, ...others]) writeFileSync(path, 'left');
    await restore(file, await sqliteTarget(dir.file('new.db')));
    for (const path of [dead, `${dead}-wal`, snapshotting]) expect(existsSync(path), path).toBe(false);
    for (const path of [running, ...others]) expect(existsSync(path), path).toBe(true);
  });
});

describe('a restore that fails says which step failed and what to do', () => {
  it('the temporary copy beside a SQLite target, not writable', async () => {
    const { dir, file } = await aBackup();
    for (const error of [
      errno("EACCES: permission denied, open '…partial'", 'EACCES'),
      errno('unable to open database file', 'SQLITE_CANTOPEN'),
    ]) {
      const target = await sqliteTarget(dir.file('new.db'));
      await expect(restore(file, target, failingCopy(error))).rejects.toMatchObject({
        code: 'STORE_READ_ONLY',
        message:
          `Cannot write the temporary copy of the backup in ${dir.path} (${error.message}), so nothing was restored ` +
          `and SQLite ${dir.file('new.db')} is as it was. The copy is made beside the memory, on its disk: let the ` +
          `user running Engram write ${dir.path}, which the restore needs too, then try again.`,
      });
    }
  });

  it('the temporary copy in the system temporary folder, full', async () => {
    const { file } = await aBackup();
    const error = errno('database or disk is full', 'SQLITE_FULL');
    await expect(restore(file, otherTarget(), failingCopy(error))).rejects.toMatchObject({
      code: 'STORE_FULL',
      message: expect.stringMatching(
        new RegExp(
          `^No room for the temporary copy of the backup in ${tmpdir()} \\(it needs about 1 MB: database or disk ` +
            'is full\\), so nothing was restored and PostgreSQL db is as it was\\. Free that much space there, or ' +
            'set TMPDIR to a folder on a disk with room, then try again\\.$',
        ),
      ),
    });
  });

  it('the temporary copy beside a SQLite target, full; not writable in the system temporary folder', async () => {
    const { dir, file } = await aBackup();
    await expect(
      restore(file, await sqliteTarget(dir.file('new.db')), failingCopy(errno('ENOSPC: no space left', 'ENOSPC'))),
    ).rejects.toMatchObject({
      code: 'STORE_FULL',
      message:
        `No room for the temporary copy of the backup in ${dir.path} (it needs about 1 MB: ENOSPC: no space left), ` +
        `so nothing was restored and SQLite ${dir.file('new.db')} is as it was. Free that much space on the disk ` +
        'of the memory, which the restored memory needs as well, then try again.',
    });
    await expect(restore(file, otherTarget(), failingCopy(errno('EROFS: read-only', 'EROFS')))).rejects.toMatchObject({
      code: 'STORE_READ_ONLY',
      message:
        `Cannot write the temporary copy of the backup in ${tmpdir()} (EROFS: read-only), so nothing was restored ` +
        `and PostgreSQL db is as it was. Let the user running Engram write ${tmpdir()}, or set TMPDIR to a folder ` +
        'it may write, then try again.',
    });
  });

  it('the copy kept of what the target held', async () => {
    const { dir, file } = await aBackup();
    const target = await sqliteTarget(dir.file('old.db'), true);
    const keep = () => {
      throw errno(`EACCES: permission denied, mkdir '${dir.file('backups')}'`, 'EACCES');
    };
    await expect(restore(file, target, real, keep)).rejects.toMatchObject({
      code: 'STORE_READ_ONLY',
      message:
        `Cannot keep a copy of what SQLite ${dir.file('old.db')} holds before replacing it ` +
        `(EACCES: permission denied, mkdir '${dir.file('backups')}'), so nothing was restored and it is as it was. ` +
        'Let the user running Engram write the backups folder (where engram backup writes by default), or ' +
        'restore into an empty memory (--to), then try again.',
    });
    const full = () => freeBackupNames(dir.file('missing-folder'), Date.now());
    await expect(restore(file, target, real, full)).rejects.toMatchObject({ code: 'STORE_READ_ONLY' });
    expect(await target.store.index('ada')).toHaveLength(1);
  });
});
