/**
 * The backup services of one memory (a SQLite file or a PostgreSQL database), as app.ts
 * builds them for the CLI and `engram serve`: take, verify, restore, and the schedule. A
 * SQLite memory is copied by SQLite from its file, without being opened as a store; the
 * store (PostgreSQL's, or the target of a restore) is opened only when it is needed.
 */

import type { Store } from '../../memory/port.js';
import type { Destination } from './durable.js';
import type { BackupFiles } from './port.js';
import { type Restored, restoreBackup } from './restore.js';
import { BackupSchedule, type BackupScheduleOptions } from './schedule.js';
import { type BackupProgress, type LiveMemory, type TakenBackup, takeBackup } from './take.js';
import { type VerifiedBackup, verifyBackup } from './verify.js';

export interface BackupsConfig {
  readonly files: BackupFiles;
  /** The Engram version written into backups. */
  readonly version: string;
  readonly now: () => number;
  /** The memory's SQLite file, or undefined for PostgreSQL (backed up through its store's snapshot). */
  readonly sqlitePath: string | undefined;
  /** The memory's store, opened when first needed (creating an empty SQLite memory where there is none). */
  readonly store: () => Promise<Store>;
  /** Closes the store if it was opened for these services (not when it belongs to an App). */
  readonly close: () => Promise<void>;
}

export class Backups {
  constructor(private readonly config: BackupsConfig) {}

  /** Backs the memory up to `destination` (a path that must not exist, or free names, in a folder that does). */
  async take(destination: Destination, onProgress?: (progress: BackupProgress) => void): Promise<TakenBackup> {
    const { files, version, now } = this.config;
    return takeBackup(await this.memory(), destination, { files, version, now, onProgress });
  }

  /** Checks a backup file: sound, stamped, its counts matching its rows. */
  verify(path: string): Promise<VerifiedBackup> {
    return verifyBackup(path, this.config.files, this.config.now);
  }

  /**
   * Restores `file` into the memory (named `name` in messages): refused over one that holds
   * anything unless `force`, and then what it held is backed up first, to `keepPath()`.
   */
  async restore(
    file: string,
    options: {
      name: string;
      force: boolean;
      keepPath: () => Destination;
      onProgress?: (written: number, total: number) => void;
    },
  ): Promise<Restored> {
    const { files, version, now } = this.config;
    const { name, ...rest } = options;
    return restoreBackup(file, async () => ({ memory: await this.memory(), store: await this.config.store(), name }), {
      files,
      version,
      now,
      ...rest,
    });
  }

  /** Backups on a schedule into `dir`; started by its start(). */
  async schedule(
    options: Pick<BackupScheduleOptions, 'dir' | 'everyMs' | 'keep' | 'log' | 'timers'>,
  ): Promise<BackupSchedule> {
    const { files, version, now } = this.config;
    return new BackupSchedule({ ...options, memory: await this.memory(), files, version, now });
  }

  /** Closes what these services opened. */
  close(): Promise<void> {
    return this.config.close();
  }

  private async memory(): Promise<LiveMemory> {
    const { sqlitePath } = this.config;
    return sqlitePath === undefined
      ? { kind: 'postgres', store: await this.config.store() }
      : { kind: 'sqlite', path: sqlitePath };
  }
}
