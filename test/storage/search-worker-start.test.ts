/**
 * A search worker that cannot even start (Node throws ERR_WORKER_INIT_FAILED from the
 * Worker constructor when no thread can be made: a process or container at its limit of
 * threads) leaves the catch-up to the event loop, as one that stops does, and says so:
 * it was thrown inside the timer that starts the worker, an uncaught exception that ended
 * the server.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { Caller } from '../../src/memory/port.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { searchBacklogIn } from '../helpers/engram.js';
import { rules } from '../helpers/rules.js';

const ada: Caller = { user: 'ada', label: 'worker-start-test' };
const put = (body: string) => () => ({ kind: 'put' as const, operation: 'create' as const, description: 'd', body });

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'engram-search-worker-start-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(folder, { recursive: true, force: true });
});

it('catches up on the event loop, and says so once, when no worker thread can be started', async () => {
  const path = join(folder, 'memory.db');
  const warnings: string[] = [];
  // The worker's construction throws, as Node's Worker does when no thread can be made (the
  // thread made here is ended at once). vi.mock cannot stand in for Node's Worker: the test
  // files of a vitest worker share their modules (vitest.config.ts), the store's among them.
  vi.spyOn(Worker.prototype, 'unref').mockImplementationOnce(function (this: Worker) {
    void this.terminate();
    throw Object.assign(new Error('Worker initialization failure: EAGAIN'), { code: 'ERR_WORKER_INIT_FAILED' });
  });
  const store = openSqliteStore({
    path,
    accelerators: { searchWorker: true },
    onWarning: (message) => warnings.push(message),
  });
  try {
    await store.mutate(ada, 'notes/a', put('tea\n'), rules);
    await vi.waitFor(() => expect(searchBacklogIn(path)).toBe(0), { timeout: 5_000, interval: 20 });
    await store.mutate(ada, 'notes/b', put('more tea\n'), rules);
    await vi.waitFor(() => expect(searchBacklogIn(path)).toBe(0), { timeout: 5_000, interval: 20 });
    expect(warnings.filter((line) => line.includes('search indexing'))).toEqual([
      'search indexing stays on the main thread: Worker initialization failure: EAGAIN',
    ]);
    expect((await store.search('ada', ['tea'], { limit: 5 })).map((hit) => hit.name)).toHaveLength(2);
  } finally {
    await store.close();
  }
});
