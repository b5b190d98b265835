/**
 * The names of backup files (transfer/backup/names.ts): the UTC time without colons, names
 * that sort as times (`-10` after `-9` in one second), and which names are unfinished copies.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { intervalMs } from '../../src/cli/interval.js';
import { backupName, backupsIn, isBackupName, isPartialName } from '../../src/transfer/backup/names.js';

describe('backup names', () => {
  it('are the UTC time of the backup, without colons', () => {
    expect(backupName(Date.UTC(2026, 11, 6, 13, 45, 0, 123))).toBe('engram-2026-12-06T13-45-00Z.db');
    expect(backupName(Date.UTC(2026, 0, 2, 3, 4, 5), 'engram-before-restore')).toBe(
      'engram-before-restore-2026-01-02T03-04-05Z.db',
    );
    expect(isBackupName('engram-2026-12-06T13-45-00Z.db')).toBe(true);
    expect(isBackupName('engram-2026-12-06T13-45-00Z-12.db')).toBe(true);
    // Kept by a restore, a failed one, an unfinished one: none is the schedule's to rotate.
    expect(isBackupName('engram-before-restore-2026-12-06T13-45-00Z.db')).toBe(false);
    expect(isBackupName('engram-2026-12-06T13-45-00Z.db.failed')).toBe(false);
    expect(isBackupName('.engram-2026-12-06T13-45-00Z.db.12-ab.partial')).toBe(false);
  });

  it('sort newest first, the tenth of one second after the ninth', () => {
    const folder = mkdtempSync(join(tmpdir(), 'engram-names-'));
    onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
    const names = [
      'engram-2026-12-06T13-45-00Z.db',
      'engram-2026-12-06T13-45-00Z-9.db',
      'engram-2026-12-06T13-45-00Z-10.db',
      'engram-2026-12-07T00-00-00Z.db',
      'notes.txt',
    ];
    for (const name of names) writeFileSync(join(folder, name), '');
    expect(backupsIn(folder).map((path) => basename(path))).toEqual([
      'engram-2026-12-07T00-00-00Z.db',
      'engram-2026-12-06T13-45-00Z-10.db',
      'engram-2026-12-06T13-45-00Z-9.db',
      'engram-2026-12-06T13-45-00Z.db',
    ]);
  });

  it('tell unfinished copies, and the files SQLite keeps beside them', () => {
    for (const name of [
      '.a.db.1-ab.partial',
      '.a.db.1-ab.partial-journal',
      '.a.db.1-ab.partial-wal',
      'x.partial-shm',
    ]) {
      expect(isPartialName(name), name).toBe(true);
    }
    expect(isPartialName('engram-2026-12-06T13-45-00Z.db')).toBe(false);
    expect(isPartialName('partial.db')).toBe(false);
  });
});

describe('intervals of scheduled backups', () => {
  it('are a number and a unit, from a second to 24 days (a longer timer of Node fires at once)', () => {
    expect(intervalMs('6h')).toBe(6 * 3_600_000);
    expect(intervalMs('24d')).toBe(24 * 86_400_000);
    expect(intervalMs('25d')).toBeUndefined();
    expect(intervalMs('30d')).toBeUndefined();
    expect(intervalMs('999999h')).toBeUndefined();
    expect(intervalMs('30m')).toBe(1_800_000);
    expect(intervalMs('1d')).toBe(86_400_000);
    expect(intervalMs('90s')).toBe(90_000);
    for (const wrong of ['0s', '6', 'h', '6 hours', '1.5h', '-1h']) expect(intervalMs(wrong), wrong).toBeUndefined();
  });
});
