/**
 * Backups on a schedule, for a server that runs for months (`engram serve --backup-dir DIR
 * --backup-every 6h --backup-keep 14`): one every period, taken off the event loop (the
 * copy, the stamp and the check run on worker threads), verified once written, and the
 * folder rotated: the newest `keep` good backups stay, older ones go, a file that fails its
 * check is left for a person to look at and never counted as good, and the only good one is
 * never deleted. A failed backup is logged and leaves the earlier ones as they were. The
 * last good backup (its time and path) is there for whoever watches the server (lastGood).
 */

import { renameSync, rmSync } from 'node:fs';
import { removeDeadLeftovers } from './durable.js';
import { backupsIn, freeBackupNames } from './names.js';
import type { BackupFiles } from './port.js';
import { type LiveMemory, type TakenBackup, takeBackup } from './take.js';
import { verifyBackup } from './verify.js';

/** The temporary copy of a backup killed half-way (names.ts), SQLite's files beside it: the group is its process's id. */
const DEAD_PARTIAL = /\.(\d+)-[0-9a-f]+\.partial(-journal|-wal|-shm)?$/;

export interface BackupScheduleOptions {
  readonly memory: LiveMemory;
  readonly files: BackupFiles;
  /** The folder backups go to; it must exist. */
  readonly dir: string;
  /** The time between two backups, in ms. */
  readonly everyMs: number;
  /** How many good backups to keep (at least 1). */
  readonly keep: number;
  readonly version: string;
  readonly now: () => number;
  /** Where a backup taken or failed is reported, a line each. */
  readonly log: (line: string) => void;
  /** The timers to wait on: the process's unless a test brings its own. */
  readonly timers?: {
    readonly set: (run: () => void, ms: number) => unknown;
    readonly clear: (handle: unknown) => void;
  };
}

/** The last backup known good: when it was taken, and where it is. */
export interface LastGoodBackup {
  readonly at: Date;
  readonly path: string;
}

/** What one scheduled run did. */
export type BackupRun =
  | { readonly ok: true; readonly backup: TakenBackup; readonly removed: readonly string[] }
  | { readonly ok: false; readonly error: Error };

const processTimers = {
  set: (run: () => void, ms: number) => setTimeout(run, ms).unref(),
  clear: (handle: unknown) => clearTimeout(handle as NodeJS.Timeout),
};

export class BackupSchedule {
  private last: LastGoodBackup | undefined;
  private timer: unknown;
  private running: Promise<BackupRun> | undefined;
  private starting: Promise<void> | undefined;
  private stopped = false;
  /** The backups found good, by path: each is checked once. */
  private readonly good = new Map<string, LastGoodBackup>();
  private readonly timers: NonNullable<BackupScheduleOptions['timers']>;

  constructor(private readonly options: BackupScheduleOptions) {
    if (!(options.keep >= 1)) throw new RangeError('a backup schedule keeps at least one backup');
    this.timers = options.timers ?? processTimers;
  }

  /** The last good backup: taken by this schedule, or found in the folder at start; undefined when there is none. */
  lastGood(): LastGoodBackup | undefined {
    return this.last;
  }

  /**
   * Finds the newest good backup already in the folder, removes the temporary copies of
   * backups killed half-way, and plans the next backup: one period after the newest good
   * one, or now when there is none or it is older than that.
   */
  start(): Promise<void> {
    this.starting ??= this.scan();
    return this.starting;
  }

  private async scan(): Promise<void> {
    removeDeadLeftovers(this.options.dir, DEAD_PARTIAL);
    for (const path of backupsIn(this.options.dir)) {
      const found = await this.check(path);
      if (found !== undefined) {
        this.last = found;
        break;
      }
    }
    const due = this.last === undefined ? 0 : this.last.at.getTime() + this.options.everyMs - this.options.now();
    this.plan(Math.max(0, due));
  }

  /** Takes a backup now, verifies it, rotates the folder; resolves when done (a failure is logged, not thrown). */
  runNow(): Promise<BackupRun> {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Stops planning backups, and waits for the look at the folder and a backup that are running to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
    await this.starting?.catch(() => {});
    await this.running;
  }

  private plan(ms: number): void {
    if (this.stopped) return;
    this.timer = this.timers.set(() => {
      this.timer = undefined;
      // Whatever befalls a run (the folder removed under it), the next one is planned, and nothing is left unhandled.
      void this.runNow()
        .catch((error: unknown) => this.options.log(`scheduled backup failed: ${(error as Error).message ?? error}`))
        .finally(() => this.plan(this.options.everyMs));
    }, ms);
  }

  private async run(): Promise<BackupRun> {
    const { options } = this;
    let backup: TakenBackup;
    try {
      backup = await takeBackup(options.memory, freeBackupNames(options.dir, options.now()), options);
      await this.verifyTaken(backup.path);
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      options.log(
        `scheduled backup to ${options.dir} failed: ${failure.message}` +
          (this.last ? ` (the last good one is ${this.last.path}, of ${this.last.at.toISOString()})` : ''),
      );
      return { ok: false, error: failure };
    }
    this.last = { at: new Date(backup.metadata.takenAt), path: backup.path };
    this.good.set(backup.path, this.last);
    const removed = await this.rotate(backup.path);
    options.log(
      `backed up to ${backup.path}${removed.length > 0 ? `; removed ${removed.length} older backup(s)` : ''}`,
    );
    return { ok: true, backup, removed };
  }

  /** Verifies a backup just taken; one that fails is renamed `….failed`, so it is never taken for a backup. */
  private async verifyTaken(path: string): Promise<void> {
    try {
      await verifyBackup(path, this.options.files, this.options.now);
    } catch (error) {
      renameSync(path, `${path}.failed`);
      throw error;
    }
  }

  /**
   * Keeps the backup just `taken` and the newest good ones beside it, `keep` in all, newest
   * by when each was taken (its stamp, not its name: names from a clock that was once ahead
   * must not push out the backup just taken); removes the other good ones. A bad one is left
   * and logged.
   */
  private async rotate(taken: string): Promise<string[]> {
    const others: LastGoodBackup[] = [];
    for (const path of backupsIn(this.options.dir)) {
      if (path === taken) continue;
      const good = await this.check(path);
      if (good !== undefined) others.push(good);
    }
    others.sort((a, b) => b.at.getTime() - a.at.getTime());
    const removed: string[] = [];
    for (const { path } of others.slice(this.options.keep - 1)) {
      try {
        rmSync(path);
        this.good.delete(path);
        removed.push(path);
      } catch (error) {
        this.options.log(`could not remove the old backup ${path}: ${(error as Error).message}`);
      }
    }
    return removed;
  }

  /** The backup at `path` as a good one, or undefined (logged) when it fails its check. Each is checked once. */
  private async check(path: string): Promise<LastGoodBackup | undefined> {
    const known = this.good.get(path);
    if (known !== undefined) return known;
    try {
      const verified = await verifyBackup(path, this.options.files, this.options.now);
      const good = { at: new Date(verified.metadata.takenAt), path };
      this.good.set(path, good);
      return good;
    } catch (error) {
      this.options.log(`${(error as Error).message} It is left in place, and not counted as a good backup.`);
      return undefined;
    }
  }
}
