/**
 * The SQLite store's search worker (accelerators: { searchWorker: true }, as `engram serve`
 * opens it): the index catches up after writes on the worker's own thread and connection,
 * never on the event loop; a search still sees every write acknowledged before it; the
 * loop's writes take turns with the worker's batches without waiting on the loop; closing
 * leaves nothing to index; a worker that stops hands the catch-up back to the loop. The
 * entry and search contracts run on such a store too.
 *
 * Invariant of the searchWorker accelerator (docs/accelerators.md, "Storage"; off, the
 * event loop catches up): a search sees every write acknowledged before it began, whoever
 * catches up; a write waits for one catch-up batch at most; a worker that stops frees the
 * write gate and hands the catch-up back to the loop.
 */

import { copyFileSync, renameSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Caller, StoreDump } from '../../src/memory/port.js';
import { describeEntryContract, describeSearchContract } from '../../src/storage/contract/index.js';
import { append, type OpenedStore } from '../../src/storage/contract/setup.js';
import { MMAP_BYTES } from '../../src/storage/sqlite/connection.js';
import type { Database } from '../../src/storage/sqlite/driver.js';
import { openSqliteStore, type SqliteStore } from '../../src/storage/sqlite/index.js';
import { SearchBacklog, WORKER_MMAP_BYTES } from '../../src/storage/sqlite/search-backlog.js';
import { queryDatabase, searchBacklogIn } from '../helpers/engram.js';
import { HELD_LOOP_MS, withEventLoopDelay } from '../helpers/event-loop.js';
import { rules } from '../helpers/rules.js';

async function openWithWorker(): Promise<OpenedStore> {
  const folder = await mkdtemp(join(tmpdir(), 'engram-search-worker-contract-'));
  return {
    store: openSqliteStore({ path: join(folder, 'memory.db'), accelerators: { searchWorker: true } }),
    cleanup: () => rm(folder, { recursive: true, force: true }),
  };
}

describeEntryContract('sqlite with the search worker', openWithWorker);
describeSearchContract('sqlite with the search worker', openWithWorker);

const ada: Caller = { user: 'ada', label: 'worker-test' };
const put = (body: string) => () => ({ kind: 'put' as const, operation: 'create' as const, description: 'd', body });

/** A dump of `count` live entries of ada's, each with one revision. */
function dumpOf(count: number): StoreDump {
  const entries = Array.from({ length: count }, (_, index) => {
    const body = `entry ${index} about tea and ${'words '.repeat(40)}\n`;
    return {
      id: index + 1,
      user: 'ada',
      name: `notes/n${index}`,
      description: `note ${index}`,
      body,
      size: Buffer.byteLength(body),
      created: 1,
      updated: 1,
      revision: 1,
      droppedAt: null,
      droppedBy: null,
      revisions: [
        { revision: 1, operation: 'create', actor: 'load', at: 1, description: `note ${index}`, body } as const,
      ],
    };
  });
  const totalBytes = entries.reduce((sum, entry) => sum + entry.size + entry.name.length + entry.description.length, 0);
  return {
    entries,
    users: [{ user: 'ada', totalBytes, entries: count, historyBytes: totalBytes }],
    tokens: [],
    accounts: [],
    clients: [],
    grants: [],
    grantSecrets: [],
    proposals: [],
  };
}

describe('SQLite search worker', () => {
  let folder: string;
  let path: string;
  const opened: SqliteStore[] = [];
  const open = (options: { onWarning?: (message: string) => void } = {}) => {
    const store = openSqliteStore({ path, accelerators: { searchWorker: true }, ...options });
    opened.push(store);
    return store;
  };

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-search-worker-'));
    path = join(folder, 'memory.db');
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    for (const store of opened.splice(0)) await store.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('brings the index up to date after writes on its own thread, not the event loop', async () => {
    const drain = vi.spyOn(SearchBacklog.prototype, 'drain');
    const store = open();
    for (let index = 0; index < 5; index++) await store.mutate(ada, `notes/n${index}`, put(`tea ${index}\n`), rules);
    expect(searchBacklogIn(path)).toBeGreaterThan(0);
    await vi.waitFor(() => expect(searchBacklogIn(path)).toBe(0), { timeout: 5_000, interval: 20 });
    expect(drain).not.toHaveBeenCalled();
    expect((await store.search('ada', ['tea'], { limit: 10 })).map((hit) => hit.name)).toHaveLength(5);
  });

  it('indexes what an append added as a part of its own on its thread (search-parts.test.ts)', async () => {
    const drain = vi.spyOn(SearchBacklog.prototype, 'drain');
    const store = open();
    const caughtUp = () => vi.waitFor(() => expect(searchBacklogIn(path)).toBe(0), { timeout: 5_000, interval: 20 });
    await store.mutate(ada, 'notes/tea', put('green tea\n'), rules);
    await caughtUp();
    await store.mutate(ada, 'notes/tea', append('oolong pot'), rules);
    await caughtUp();
    expect(drain).not.toHaveBeenCalled();
    expect(queryDatabase(path, 'SELECT entry_id, parts, chars FROM search_parts')).toEqual([
      { entry_id: 1, parts: 2, chars: 21 },
    ]);
    expect((await store.search('ada', ['green', 'oolong'], { limit: 5 })).map((hit) => hit.name)).toEqual([
      'notes/tea',
    ]);
  });

  it('lets a search see every write acknowledged before it, however soon', async () => {
    const store = open();
    await store.mutate(ada, 'notes/first', put('oolong\n'), rules);
    expect((await store.search('ada', ['oolong'], { limit: 5 })).map((hit) => hit.name)).toEqual(['notes/first']);
    await store.mutate(ada, 'notes/first', put('sencha\n'), rules);
    expect(await store.search('ada', ['oolong'], { limit: 5 })).toEqual([]);
    expect((await store.search('ada', ['sencha'], { limit: 5 })).map((hit) => hit.name)).toEqual(['notes/first']);
  });

  it("takes turns with the loop's writes: writes during a long catch-up succeed, and the loop is never held", async () => {
    const store = open();
    // 3,000 loaded entries wait to be indexed: about 190 of the worker's batches.
    await store.load(dumpOf(3_000), { replace: false });
    const { maxDelayMs } = await withEventLoopDelay(async () => {
      for (let round = 0; round < 40; round++) {
        await store.mutate(ada, `notes/n${round}`, put(`written while indexing ${round}\n`), rules);
      }
    });
    expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
    await vi.waitFor(() => expect(searchBacklogIn(path)).toBe(0), { timeout: 20_000, interval: 50 });
    const hits = await store.search('ada', ['indexing'], { limit: 50 });
    expect(hits).toHaveLength(40);
  });

  it("gives a write its turn within a batch even while the loop's timers run late, not after the backlog", async () => {
    const store = open();
    // 20,000 loaded entries wait: over a thousand of the worker's batches, seconds of catch-up.
    await store.load(dumpOf(20_000), { replace: false });
    await store.mutate(ada, 'notes/first', put('first\n'), rules);
    const backlog = searchBacklogIn(path);
    await vi.waitFor(() => expect(searchBacklogIn(path)).toBeLessThan(backlog - 500), {
      timeout: 20_000,
      interval: 20,
    });
    // A busy server's loop: its retry timers fire 80 ms late. The worker stepped aside for
    // 20 ms, so every retry came after the worker had taken the gate back, the busy retries
    // grew to 100 ms, and the write waited for the whole backlog.
    const lag = setInterval(() => {
      const until = performance.now() + 80;
      while (performance.now() < until) {}
    }, 0);
    try {
      await store.mutate(ada, 'notes/late', put('written while indexing\n'), rules);
    } finally {
      clearInterval(lag);
    }
    expect(searchBacklogIn(path)).toBeGreaterThan(backlog / 4);
  });

  it('leaves nothing to index once closed, whatever it had not reached', async () => {
    const store = open();
    await store.load(dumpOf(500), { replace: false });
    await store.mutate(ada, 'notes/late', put('written last\n'), rules);
    await store.close();
    expect(searchBacklogIn(path)).toBe(0);
  });

  it('hands the catch-up back to the loop, and says so once, when the file it indexes was replaced', async () => {
    const warnings: string[] = [];
    const store = open({ onWarning: (message) => warnings.push(message) });
    await store.mutate(ada, 'notes/a', put('one\n'), rules);
    // Replaced before the worker's catch-up: it finds another file at the path and stops.
    copyFileSync(path, `${path}.copy`);
    renameSync(`${path}.copy`, path);
    await vi.waitFor(() => expect(warnings.some((line) => line.includes('search indexing moved back'))).toBe(true), {
      timeout: 5_000,
      interval: 20,
    });
    expect(warnings.filter((line) => line.includes('search indexing moved back'))).toHaveLength(1);
    expect(warnings.join('\n')).toContain('removed or replaced');
    // The checkpoints are the loop's again, every 1,000 pages as SQLite has them, and the file mapped again.
    const loop = (store as unknown as { db: Database }).db;
    expect(loop.pragma('wal_autocheckpoint', { simple: true })).toBe(1_000);
    expect(loop.pragma('mmap_size', { simple: true })).toBe(MMAP_BYTES);
    // The loop's writes are refused for the replaced file, as without a worker.
    await expect(store.mutate(ada, 'notes/b', put('two\n'), rules)).rejects.toMatchObject({ code: 'STORE_REPLACED' });
  });

  it("checkpoints the log after its catch-ups, the loop's connection only as a backstop", async () => {
    const store = open();
    const loop = (store as unknown as { db: Database }).db;
    expect(loop.pragma('wal_autocheckpoint', { simple: true })).toBe(1_000);
    expect(loop.pragma('mmap_size', { simple: true })).toBe(MMAP_BYTES);
    for (let index = 0; index < 5; index++) await store.mutate(ada, `notes/n${index}`, put(`tea ${index}\n`), rules);
    await vi.waitFor(() => expect(searchBacklogIn(path)).toBe(0), { timeout: 5_000, interval: 20 });
    expect(loop.pragma('wal_autocheckpoint', { simple: true })).toBe(4_000);
    // No memory map while the worker's catch-ups grow the file (search-backlog.ts, WORKER_MMAP_BYTES).
    expect(loop.pragma('mmap_size', { simple: true })).toBe(WORKER_MMAP_BYTES);
    // The file alone, without its log, holds the writes: a few pages each, far from either
    // connection's automatic checkpoint, so the worker's checkpoint put them there.
    const alone = join(folder, 'alone.db');
    await vi.waitFor(
      () => {
        copyFileSync(path, alone);
        expect(queryDatabase(alone, 'SELECT count(*) AS entries FROM entries')).toEqual([{ entries: 5 }]);
      },
      { timeout: 5_000, interval: 20 },
    );
  });

  it('starts no worker for a process that only reads', async () => {
    const writer = openSqliteStore({ path });
    await writer.mutate(ada, 'notes/a', put('one\n'), rules);
    await writer.close();
    const { Worker } = await import('node:worker_threads');
    const started = vi.spyOn(Worker.prototype, 'postMessage');
    const reader = open();
    expect(await reader.index('ada')).toHaveLength(1);
    expect(await reader.search('ada', ['one'], { limit: 5 })).toHaveLength(1);
    expect(started).not.toHaveBeenCalled();
  });
});
