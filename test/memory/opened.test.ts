/**
 * The entries models open, noted by the Memory service (memory/opened.ts): only what
 * memory_open returned, at most once an hour per entry, written off the read path in one
 * batch (on a timer, when a batch is full, on close), bounded, and never a reader's error.
 */

import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../src/app.js';
import { type Caller, createMemory, type Memory } from '../../src/memory/memory.js';
import { OPENED_GAP_MS, OpenedLog } from '../../src/memory/opened.js';
import type { OpenedEntry } from '../../src/memory/port.js';
import { createToolHandler } from '../../src/memory/tools/handler.js';
import { type MemoryStore, openMemoryStore } from '../../src/storage/memory/index.js';

const model: Caller = { user: 'alice', label: 'claude' };
const START = Date.UTC(2026, 0, 1);
const HOUR = 3_600_000;

/** A memory on a fake clock with topics/a, topics/b and topics/c, whose store's recordOpened calls are spied on. */
async function seeded(options: Parameters<typeof createMemory>[0]['openedLog'] = {}) {
  const clock = { time: START };
  const store = openMemoryStore();
  const recordOpened = vi.spyOn(store, 'recordOpened');
  const memory = createMemory({ store, now: () => clock.time, openedLog: options });
  for (const name of ['topics/a', 'topics/b', 'topics/c']) {
    await memory.write(model, { name, description: name, new: `${name}\n` });
  }
  return { clock, store, memory, recordOpened };
}

async function openedOf(memory: Memory): Promise<Record<string, number | undefined>> {
  const { entries } = await memory.overview(model);
  return Object.fromEntries(entries.map((row) => [row.name, row.opened]));
}

/** The store's recordOpened calls so far, each as its (user, name, at) triples. */
function written(spy: { mock: { calls: unknown[][] } }): OpenedEntry[][] {
  return spy.mock.calls.map(([opens]) => [...(opens as OpenedEntry[])]);
}

afterEach(() => {
  vi.useRealTimers();
});

describe('the openings a Memory notes', () => {
  it('are the entries memory_open returned, written once the memory closes; missing names and the index are not', async () => {
    const { memory, recordOpened } = await seeded();
    const handle = createToolHandler(memory);

    await handle(model, 'memory_open', { names: ['topics/a', 'topics/missing'] });
    await handle(model, 'memory_open', {});
    expect(recordOpened).not.toHaveBeenCalled();
    await memory.close();

    expect(written(recordOpened)).toEqual([[{ user: 'alice', name: 'topics/a', at: START }]]);
    expect(recordOpened.mock.calls[0]?.[1]).toBe(OPENED_GAP_MS);
    expect(await openedOf(memory)).toEqual({ 'topics/a': START, 'topics/b': undefined, 'topics/c': undefined });
  });

  it('leave out every read not by a model through the tools (the web UI, engram open, a merge)', async () => {
    const { memory, recordOpened } = await seeded();

    await memory.open(model, ['topics/a']);
    await memory.close();

    expect(recordOpened).not.toHaveBeenCalled();
  });

  it('note an entry at most once an hour', async () => {
    const { clock, memory, recordOpened } = await seeded();
    const opened = memory.opened as OpenedLog;

    await memory.open(model, ['topics/a'], { byModel: true });
    await opened.flush();
    clock.time = START + HOUR - 1;
    await memory.open(model, ['topics/a', 'topics/a'], { byModel: true });
    expect(opened.waiting).toBe(0);
    clock.time = START + HOUR + 1;
    await memory.open(model, ['topics/a'], { byModel: true });
    await memory.close();

    expect(written(recordOpened)).toEqual([
      [{ user: 'alice', name: 'topics/a', at: START }],
      [{ user: 'alice', name: 'topics/a', at: START + HOUR + 1 }],
    ]);
    expect(await openedOf(memory)).toMatchObject({ 'topics/a': START + HOUR + 1 });
  });

  it('are written by a timer, in one batch', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { memory, recordOpened } = await seeded({ flushAfterMs: 30_000 });

    await memory.open(model, ['topics/a'], { byModel: true });
    await memory.open(model, ['topics/b', 'topics/c'], { byModel: true });
    await vi.advanceTimersByTimeAsync(29_999);
    expect(recordOpened).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);

    expect(written(recordOpened)).toEqual([
      ['topics/a', 'topics/b', 'topics/c'].map((name) => ({ user: 'alice', name, at: START })),
    ]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('are written at once, off the read, when a batch is full', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { memory, recordOpened } = await seeded({ batch: 2 });

    await memory.open(model, ['topics/a', 'topics/b', 'topics/c'], { byModel: true });
    expect(recordOpened).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(0);

    expect(written(recordOpened).map((batch) => batch.map((open) => open.name))).toEqual([
      ['topics/a', 'topics/b'],
      ['topics/c'],
    ]);
  });

  it('are bounded: past maxPending a note is dropped (and noted at a later open), past maxRecent the oldest is forgotten', async () => {
    const { clock, memory, recordOpened } = await seeded({ maxPending: 2, maxRecent: 2 });
    const opened = memory.opened as OpenedLog;

    await memory.open(model, ['topics/a', 'topics/b', 'topics/c'], { byModel: true });
    expect(opened.waiting).toBe(2);
    await opened.flush();
    expect(
      written(recordOpened)
        .flat()
        .map((open) => open.name),
    ).toEqual(['topics/a', 'topics/b']);
    clock.time = START + 1;
    await memory.open(model, ['topics/c'], { byModel: true });
    expect(opened.waiting).toBe(1);
    // topics/a is forgotten (two others were noted since): noted again within the hour, and
    // written again, where the store keeps the time it has (the gap is its rule too).
    await memory.open(model, ['topics/a', 'topics/c'], { byModel: true });
    expect(opened.waiting).toBe(2);
    await memory.close();
    expect(await openedOf(memory)).toEqual({ 'topics/a': START, 'topics/b': START, 'topics/c': START + 1 });
  });

  it('keep being written after a teller of failures that throws', async () => {
    const { memory, recordOpened } = await seeded({
      onError: () => {
        throw new Error('the log is gone');
      },
    });
    recordOpened.mockRejectedValueOnce('not an Error');
    await memory.open(model, ['topics/a'], { byModel: true });
    await (memory.opened as OpenedLog).flush();
    await memory.open(model, ['topics/b'], { byModel: true });
    await memory.close();
    expect(recordOpened).toHaveBeenCalledTimes(2);
    expect(await openedOf(memory)).toMatchObject({ 'topics/b': START });
  });

  it('never fail memory_open: a store that cannot write them is logged, and close still resolves', async () => {
    const store = openMemoryStore();
    const failures: unknown[] = [];
    const memory = createMemory({ store, openedLog: { onError: (error) => failures.push(error) } });
    await memory.write(model, { name: 'topics/a', description: 'a', new: 'a\n' });
    vi.spyOn(store, 'recordOpened').mockRejectedValue(new Error('disk full'));
    const handle = createToolHandler(memory);

    const answer = await handle(model, 'memory_open', { names: ['topics/a'] });
    await memory.close();

    expect(answer.isError).toBe(false);
    expect(failures).toEqual([new Error('disk full')]);
  });

  it('are not noted at all with openedLog false', async () => {
    const store = openMemoryStore();
    const recordOpened = vi.spyOn(store, 'recordOpened');
    const memory = createMemory({ store, openedLog: false });
    await memory.write(model, { name: 'topics/a', description: 'a', new: 'a\n' });

    await memory.open(model, ['topics/a'], { byModel: true });
    await memory.close();

    expect(recordOpened).not.toHaveBeenCalled();
  });

  it('are written before the app closes its store, a failure logged in words', async () => {
    const store: MemoryStore = openMemoryStore();
    const order: string[] = [];
    vi.spyOn(store, 'recordOpened').mockImplementation(async () => {
      order.push('recordOpened');
      throw new Error('locked');
    });
    const close = store.close.bind(store);
    vi.spyOn(store, 'close').mockImplementation(async () => {
      order.push('close');
      await close();
    });
    const logs: string[] = [];
    const app = createApp({ store, log: (line) => logs.push(line) });
    await app.memory.write(model, { name: 'topics/a', description: 'a', new: 'a\n' });

    await app.memory.open(model, ['topics/a'], { byModel: true });
    await app.close();

    expect(order).toEqual(['recordOpened', 'close']);
    expect(logs).toEqual(['could not record when entries were last opened: locked']);
  });
});

describe('OpenedLog', () => {
  it('keeps the notes of users apart, whatever their names hold', async () => {
    const opens: OpenedEntry[] = [];
    const log = new OpenedLog({ store: { recordOpened: async (batch) => void opens.push(...batch) }, now: () => 5 });

    log.note('a', ['bc/d']);
    log.note('ab', ['c/d']);
    await log.close();
    log.note('a', ['x/y']);

    expect(opens).toEqual([
      { user: 'a', name: 'bc/d', at: 5 },
      { user: 'ab', name: 'c/d', at: 5 },
    ]);
  });
});
