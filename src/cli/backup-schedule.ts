/**
 * `engram serve --backup-dir DIR --backup-every 6h --backup-keep 14` (or "backupDir",
 * "backupEvery", "backupKeep" in the config file; a flag wins): backups on a schedule while
 * the server runs (transfer/backup/schedule.ts). The folder is made if it is missing (0700).
 */

import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { BackupSchedule } from '../transfer/backup/schedule.js';
import type { Settings } from './config.js';
import type { Context } from './context.js';
import { describeInterval, INTERVAL_SYNTAX, intervalMs } from './interval.js';
import { UsageError } from './output.js';

export interface BackupScheduleFlags {
  readonly backupDir?: string;
  /** In ms (parsed by parseInterval). */
  readonly backupEvery?: number;
  readonly backupKeep?: number;
}

export const DEFAULT_BACKUP_EVERY = '6h';
export const DEFAULT_BACKUP_KEEP = 14;

function parseInterval(value: string): number {
  const ms = intervalMs(value);
  if (ms === undefined) {
    throw new InvalidArgumentError(
      `give ${INTERVAL_SYNTAX}. For backups further apart, run engram backup from cron or a systemd timer.`,
    );
  }
  return ms;
}

function parseKeep(value: string): number {
  const keep = Number(value);
  if (!Number.isInteger(keep) || keep < 1) throw new InvalidArgumentError('give how many backups to keep, 1 or more.');
  return keep;
}

export function addBackupScheduleOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--backup-dir <folder>',
        'take backups on a schedule into this folder, verified and rotated (else the config\'s "backupDir")',
      ),
    )
    .addOption(
      new Option(
        '--backup-every <interval>',
        `time between scheduled backups: 30m, 6h, 1d (else the config's "backupEvery", else ${DEFAULT_BACKUP_EVERY})`,
      ).argParser(parseInterval),
    )
    .addOption(
      new Option(
        '--backup-keep <n>',
        `how many good scheduled backups to keep (else the config's "backupKeep", else ${DEFAULT_BACKUP_KEEP})`,
      ).argParser(parseKeep),
    );
}

/** Refuses --backup-every or --backup-keep without a folder, before anything is opened. */
export function checkBackupFlags(flags: BackupScheduleFlags, settings: Settings): void {
  if (flags.backupDir ?? settings.backupDir) return;
  if (flags.backupEvery !== undefined || flags.backupKeep !== undefined) {
    throw new UsageError('--backup-every and --backup-keep need a folder for the backups: add --backup-dir DIR.');
  }
}

/** The schedule the flags and config file ask for, started; undefined when no backup folder is named. */
export async function startBackupSchedule(
  context: Context,
  flags: BackupScheduleFlags,
  settings: Settings,
  log: (line: string) => void,
): Promise<BackupSchedule | undefined> {
  const dir = flags.backupDir ?? settings.backupDir;
  const everyMs = flags.backupEvery ?? settings.backupEveryMs ?? (intervalMs(DEFAULT_BACKUP_EVERY) as number);
  const keep = flags.backupKeep ?? settings.backupKeep ?? DEFAULT_BACKUP_KEEP;
  checkBackupFlags(flags, settings);
  if (dir === undefined) return undefined;
  const folder = resolve(dir);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const schedule = await context.backups.schedule({ dir: folder, everyMs, keep, log });
  // Not waited for: checking the newest backup already there (every page of it) must not delay serving.
  schedule.start().catch((error: unknown) => {
    log(`scheduled backups stopped: cannot look into ${folder}: ${(error as Error).message}`);
  });
  log(`backups every ${describeInterval(everyMs)} into ${folder}, keeping the newest ${keep} good ones`);
  return schedule;
}
