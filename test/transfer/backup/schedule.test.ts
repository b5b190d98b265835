/**
 * BackupSchedule (transfer/backup/schedule.ts) on real SQLite files and a clock and timers
 * of the test's: each run takes a backup, verifies it and rotates the folder, keeping the
 * newest good ones; a failed run is logged and leaves the earlier backups and the last
 * good one as they were; a damaged file is never counted good nor deleted; at start the
 * newest good backup already there is found, the next run planned from it, and the
 * temporary copies of backups killed half-way are removed.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Caller, Decide } from '../../../src/memory/port.js';
import { sqliteBackupFiles } from '../../../src/storage/sqlite/backup-files.js';
import { openSqliteStore } from '../../../src/storage/sqlite/index.js';
import { BackupSchedule } from '../../../src/transfer/backup/schedule.js';
import { rules } from '../../helpers/rules.js';
import { tempDir } from '../../helpers/temp-dir.js';

const alice: Caller = { user: 'alice', label: 'schedule-test' };
const put: Decide = (current) => ({
  kind: 'put',
  operation: current ? 'append' : 'create',
  description: 'd',
  body: 'x\n',
});
const HOUR = 3_600_000;

async function memoryAt(path: string): Promise<void> {
  const store = openSqliteStore({ path });
  await store.mutate(alice, 'topics/a', put, rules);
  await store.close();
}

function scheduleFor(dir: string, memory: string, keep: number, start = Date.UTC(2026, 11, 6, 12)) {
  const clock = { now: start };
  const planned: { run: () => void; ms: number }[] = [];
  const log: string[] = [];
  const schedule = new BackupSchedule({
    memory: { kind: 'sqlite', path: memory },
    files: sqliteBackupFiles(),
    dir,
    everyMs: 6 * HOUR,
    keep,
    version: 'test',
    now: () => clock.now,
    log: (line) => log.push(line),
    timers: {
      set: (run, ms) => planned.push({ run, ms }),
      clear: () => {},
    },
  });
  return { schedule, clock, planned, log };
}

describe('BackupSchedule', () => {
  it('takes a backup at once when there is none, then one a period later, keeping the newest good ones', async () => {
    const dir = tempDir();
    const memory = dir.file('memory.db');
    await memoryAt(memory);
    const backups = dir.file('backups');
    mkdirSync(backups);
    const { schedule, clock, planned, log } = scheduleFor(backups, memory, 2);

    expect(schedule.lastGood()).toBeUndefined();
    await schedule.start();
    expect(planned.map((plan) => plan.ms)).toEqual([0]);

    const taken: string[] = [];
    for (let run = 0; run < 4; run += 1) {
      const result = await schedule.runNow();
      expect(result.ok).toBe(true);
      if (result.ok) taken.push(result.backup.path);
      expect(schedule.lastGood()).toEqual({ at: new Date(clock.now), path: taken.at(-1) });
      clock.now += 6 * HOUR;
    }
    expect(readdirSync(backups).sort()).toEqual(taken.slice(-2).map((path) => basename(path)));
    expect(log.filter((line) => line.includes('removed 1 older backup'))).toHaveLength(2);
    await schedule.stop();
  });

  it('never removes the backup it just took, even beside backups named by a clock that was ahead', async () => {
    const dir = tempDir();
    const memory = dir.file('memory.db');
    await memoryAt(memory);
    const backups = dir.file('backups');
    mkdirSync(backups);
    // Two good backups taken while the clock was a day ahead: their names sort after today's.
    const ahead = scheduleFor(backups, memory, 5, Date.UTC(2026, 11, 7, 12));
    await ahead.schedule.runNow();
    ahead.clock.now += HOUR;
    await ahead.schedule.runNow();
    const { schedule } = scheduleFor(backups, memory, 2);

    const result = await schedule.runNow();

    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(existsSync(result.backup.path)).toBe(true);
    expect(schedule.lastGood()?.path).toBe(result.backup.path);
    // Kept: the one just taken and the newest other by its stamp; the older of the two "ahead" is gone.
    expect(result.removed).toHaveLength(1);
    expect(readdirSync(backups)).toHaveLength(2);
  });

  it('logs a failed backup and leaves the earlier ones and the last good one as they were', async () => {
    const dir = tempDir();
    const memory = dir.file('memory.db');
    await memoryAt(memory);
    const { schedule, clock, log } = scheduleFor(dir.path, memory, 1);
    const first = await schedule.runNow();
    const good = schedule.lastGood();
    expect(good).toBeDefined();
    rmSync(memory);
    clock.now += 6 * HOUR;

    const failed = await schedule.runNow();

    expect(failed.ok).toBe(false);
    expect(schedule.lastGood()).toEqual(good);
    expect(first.ok && existsSync(first.backup.path)).toBe(true);
    expect(log.at(-1)).toMatch(/^scheduled backup to .* failed: .*\(the last good one is .*\)$/);
    expect(readdirSync(dir.path).filter((name) => name.endsWith('.partial'))).toEqual([]);
  });

  it('never counts a damaged backup good, nor deletes it; finds the newest good one at start and plans from it', async () => {
    const dir = tempDir();
    const memory = dir.file('memory.db');
    await memoryAt(memory);
    const backups = dir.file('backups');
    mkdirSync(backups);
    const earlier = scheduleFor(backups, memory, 1);
    const first = await earlier.schedule.runNow();
    if (!first.ok) throw first.error;
    // A newer name holding no backup, and the copy of a backup whose process is gone.
    writeFileSync(`${backups}/engram-2026-12-06T13-00-00Z.db`, 'not a backup');
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    writeFileSync(`${backups}/.engram-2026-12-06T14-00-00Z.db.${dead}-0a1b2c3d.partial`, 'half');
    writeFileSync(`${backups}/.engram-2026-12-06T14-00-00Z.db.${process.pid}-0a1b2c3d.partial`, 'being written');

    const later = scheduleFor(backups, memory, 1, Date.UTC(2026, 11, 6, 14));
    await later.schedule.start();

    expect(later.schedule.lastGood()).toEqual({ at: new Date(Date.UTC(2026, 11, 6, 12)), path: first.backup.path });
    // Due four hours from now: six after the last good one.
    expect(later.planned.map((plan) => plan.ms)).toEqual([4 * HOUR]);
    expect(later.log.some((line) => line.includes('engram-2026-12-06T13-00-00Z.db is not an Engram backup'))).toBe(
      true,
    );
    expect(readdirSync(backups).filter((name) => name.endsWith('.partial'))).toEqual([
      `.engram-2026-12-06T14-00-00Z.db.${process.pid}-0a1b2c3d.partial`,
    ]);

    const next = await later.schedule.runNow();
    expect(next.ok).toBe(true);
    // The damaged file stays, for a person to look at; the older good one went, the new one is the one kept.
    expect(
      readdirSync(backups)
        .filter((name) => !name.endsWith('.partial'))
        .sort(),
    ).toEqual(['engram-2026-12-06T13-00-00Z.db', 'engram-2026-12-06T14-00-00Z.db']);
  });
});
