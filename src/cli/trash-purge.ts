/**
 * `engram serve` may run for weeks, so trash past its retention is purged every hour
 * while it runs (each start is covered by openContext), and with `--auth oauth` so are
 * the authorization codes and tokens past their expiry, the grants left holding none, and
 * the registered clients no grant names after a day. The timer never keeps the
 * process alive, runs one purge at a time, and stop() waits for a purge under way so
 * the store is not closed beneath it.
 */

import type { Memory } from '../memory/memory.js';

export const TRASH_PURGE_INTERVAL_MS = 60 * 60 * 1000;

export interface TrashPurgeOptions {
  readonly log: (line: string) => void;
  /** For tests; people get the hourly default. */
  readonly intervalMs?: number;
  /** With --auth oauth: deletes expired codes and tokens, dead grants and unused clients, returning how many. */
  readonly purgeOAuth?: () => Promise<OAuthPurged>;
}

/** What one OAuth purge deleted. */
export interface OAuthPurged {
  /** Codes and tokens past their expiry. */
  readonly secrets: number;
  /** Grants left holding no code or token. */
  readonly grants: number;
  /** Registered clients no grant names, registered over a day ago. */
  readonly clients: number;
}

function describePurged({ secrets, grants, clients }: OAuthPurged): string {
  const parts = [
    [secrets, 'expired OAuth code or token', 'expired OAuth codes and tokens'],
    [grants, 'grant left without any', 'grants left without any'],
    [clients, 'unused registered client', 'unused registered clients'],
  ] as const;
  return parts
    .filter(([count]) => count > 0)
    .map(([count, one, many]) => `${count} ${count === 1 ? one : many}`)
    .join(', ');
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
    if (options.purgeOAuth === undefined) return;
    try {
      const purged = describePurged(await options.purgeOAuth());
      if (purged !== '') log(`deleted ${purged}`);
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
