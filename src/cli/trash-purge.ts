/**
 * `engram serve` may run for weeks, so trash past its retention is purged every hour
 * while it runs (each start is covered by openContext), and with `--auth oauth` so are
 * the authorization codes and tokens past their expiry (their grants stay). The timer never keeps the
 * process alive, runs one purge at a time, and stop() waits for a purge under way so
 * the store is not closed beneath it.
 */

import type { Memory } from '../core/memory.js';

export const TRASH_PURGE_INTERVAL_MS = 60 * 60 * 1000;

export interface TrashPurgeOptions {
  readonly log: (line: string) => void;
  /** For tests; people get the hourly default. */
  readonly intervalMs?: number;
  /** With --auth oauth: deletes expired codes and tokens (OAuthTokens.purgeExpired), returning how many. */
  readonly purgeExpiredSecrets?: () => Promise<number>;
}

export interface TrashPurge {
  stop(): Promise<void>;
}

export function scheduleTrashPurge(memory: Memory, options: TrashPurgeOptions): TrashPurge {
  const { log } = options;
  let running: Promise<void> | undefined;
  const purge = async () => {
    try {
      const count = await memory.recovery.purgeExpired();
      if (count > 0) log(`purged ${count} expired ${count === 1 ? 'entry' : 'entries'} from the trash`);
    } catch (error) {
      log(`purging expired trash failed, will retry: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (options.purgeExpiredSecrets === undefined) return;
    try {
      const count = await options.purgeExpiredSecrets();
      if (count > 0) log(`deleted ${count} expired OAuth ${count === 1 ? 'code or token' : 'codes and tokens'}`);
    } catch (error) {
      log(
        `deleting expired OAuth codes and tokens failed, will retry: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  };
  const timer = setInterval(() => {
    running ??= purge().finally(() => {
      running = undefined;
    });
  }, options.intervalMs ?? TRASH_PURGE_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
