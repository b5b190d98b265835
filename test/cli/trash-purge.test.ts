/**
 * The hourly trash purge of `engram serve`, on an injected clock and fake timers (no
 * sleeping): entries past retention go at the next tick and not before, a failure is
 * logged and retried at the next tick, and after stop() nothing runs.
 */

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { scheduleTrashPurge, TRASH_PURGE_INTERVAL_MS } from '../../src/cli/trash-purge.js';
import { createMemory, type Memory } from '../../src/memory/memory.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const ME = { user: 'local', label: 'test' };

interface Setup {
  readonly memory: Memory;
  readonly logs: string[];
  /** Moves the injected clock on, without firing timers. */
  advanceClock(ms: number): void;
}

async function setup(): Promise<Setup> {
  let now = Date.UTC(2026, 0, 1);
  const clock = () => now;
  const memory = createMemory({ store: openMemoryStore(), now: clock });
  await memory.write(ME, { name: 'topics/old', description: 'Old', new: 'Stale.' });
  await memory.drop(ME, 'topics/old');
  return {
    memory,
    logs: [],
    advanceClock: (ms) => {
      now += ms;
    },
  };
}

const trashNames = async (memory: Memory) => (await memory.recovery.trash(ME)).map((item) => item.name);

/** Makes the next purgeExpired hang until `finish` is called: a purge still under way. */
function purgeUnderWay(memory: Memory) {
  let finish: () => void = () => {};
  const purgeExpired = vi.spyOn(memory.recovery, 'purgeExpired').mockImplementationOnce(
    () =>
      new Promise((resolve) => {
        finish = () => resolve(0);
      }),
  );
  return { purgeExpired, finish: () => finish() };
}

describe('scheduleTrashPurge', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('purges trash past its retention at the next hourly tick, and keeps newer trash', async () => {
    const { memory, logs, advanceClock } = await setup();
    const purge = scheduleTrashPurge(memory, { log: (line) => logs.push(line) });
    advanceClock(31 * DAY_MS);
    await vi.advanceTimersByTimeAsync(TRASH_PURGE_INTERVAL_MS - 1);
    expect(await trashNames(memory)).toEqual(['topics/old']);
    await vi.advanceTimersByTimeAsync(1);
    expect(await trashNames(memory)).toEqual([]);
    expect(logs).toEqual(['purged 1 expired entry from the trash']);
    await purge.stop();
  });

  it('leaves trash within its retention, and logs nothing when nothing expired', async () => {
    const { memory, logs, advanceClock } = await setup();
    const purge = scheduleTrashPurge(memory, { log: (line) => logs.push(line) });
    advanceClock(29 * DAY_MS);
    await vi.advanceTimersByTimeAsync(3 * TRASH_PURGE_INTERVAL_MS);
    expect(await trashNames(memory)).toEqual(['topics/old']);
    expect(logs).toEqual([]);
    await purge.stop();
  });

  it('logs a failed purge and tries again at the next tick', async () => {
    const { memory, logs, advanceClock } = await setup();
    const purgeExpired = vi
      .spyOn(memory.recovery, 'purgeExpired')
      .mockRejectedValueOnce(new Error('database is locked'));
    const purge = scheduleTrashPurge(memory, { log: (line) => logs.push(line) });
    advanceClock(31 * DAY_MS);
    await vi.advanceTimersByTimeAsync(TRASH_PURGE_INTERVAL_MS);
    expect(await trashNames(memory)).toEqual(['topics/old']);
    await vi.advanceTimersByTimeAsync(TRASH_PURGE_INTERVAL_MS);
    expect(await trashNames(memory)).toEqual([]);
    expect(purgeExpired).toHaveBeenCalledTimes(2);
    expect(logs).toEqual([
      'purging expired trash failed, will retry: database is locked',
      'purged 1 expired entry from the trash',
    ]);
    await purge.stop();
  });

  it('runs nothing after stop(), and stop() waits for a purge under way', async () => {
    const { memory, logs, advanceClock } = await setup();
    const { purgeExpired, finish } = purgeUnderWay(memory);
    const purge = scheduleTrashPurge(memory, { log: (line) => logs.push(line) });
    await vi.advanceTimersByTimeAsync(TRASH_PURGE_INTERVAL_MS);
    let stopped = false;
    const stopping = purge.stop().then(() => {
      stopped = true;
    });
    await Promise.resolve();
    expect(stopped).toBe(false);
    finish();
    await stopping;
    advanceClock(31 * DAY_MS);
    await vi.advanceTimersByTimeAsync(5 * TRASH_PURGE_INTERVAL_MS);
    expect(purgeExpired).toHaveBeenCalledTimes(1);
    expect(await trashNames(memory)).toEqual(['topics/old']);
  });

  it('with --auth oauth, deletes expired codes and tokens, dead grants and unused clients at the same tick, and logs a failure to retry', async () => {
    const { memory, logs } = await setup();
    const counts = [
      { secrets: 2, grants: 1, clients: 3 },
      { secrets: 1, grants: 0, clients: 1 },
      { secrets: 0, grants: 0, clients: 0 },
    ];
    const purgeOAuth = vi.fn(async () => {
      const purged = counts.shift();
      if (purged === undefined) throw new Error('database is locked');
      return purged;
    });
    const purge = scheduleTrashPurge(memory, { log: (line) => logs.push(line), purgeOAuth });
    await vi.advanceTimersByTimeAsync(TRASH_PURGE_INTERVAL_MS - 1);
    expect(purgeOAuth).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(3 * TRASH_PURGE_INTERVAL_MS + 1);
    expect(purgeOAuth).toHaveBeenCalledTimes(4);
    expect(logs).toEqual([
      'deleted 2 expired OAuth codes and tokens, 1 grant left without any, 3 unused registered clients',
      'deleted 1 expired OAuth code or token, 1 unused registered client',
      'deleting expired OAuth codes and tokens failed, will retry: database is locked',
    ]);
    await purge.stop();
  });

  it('starts no purge while the previous one is still running', async () => {
    const { memory, logs } = await setup();
    const { purgeExpired, finish } = purgeUnderWay(memory);
    const purge = scheduleTrashPurge(memory, { log: (line) => logs.push(line) });
    await vi.advanceTimersByTimeAsync(3 * TRASH_PURGE_INTERVAL_MS);
    expect(purgeExpired).toHaveBeenCalledTimes(1);
    finish();
    await purge.stop();
  });
});
