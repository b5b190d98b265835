/**
 * The Activity service (memory/activity.ts) over the in-process store: the bounds of a page
 * and its cursor checked before the store is asked, pages that follow one another through
 * `next`, and watching through the Memory service.
 */

import { describe, expect, it } from 'vitest';
import { ACTIVITY_LIMIT_CAP, activityCursor, parseCursor } from '../../src/memory/activity.js';
import { createMemory } from '../../src/memory/memory.js';
import type { EngramError } from '../../src/memory/model/errors.js';
import type { Caller } from '../../src/memory/port.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';

const alice: Caller = { user: 'alice', label: 'claude' };

async function memoryWith(writes: number) {
  let time = Date.UTC(2025, 0, 1);
  const memory = createMemory({ store: openMemoryStore(), now: () => time++ });
  for (let index = 0; index < writes; index++) {
    await memory.write(alice, { name: `topics/n${index % 3}`, new: `line ${index}\n`, description: 'lines' });
  }
  return memory;
}

function refusal(run: () => unknown): EngramError | undefined {
  try {
    run();
  } catch (error) {
    return error as EngramError;
  }
  return undefined;
}

describe('Activity', () => {
  it('pages newest first through next, each item once, the last page without next', async () => {
    const memory = await memoryWith(7);
    const seen: string[] = [];
    let before: string | undefined;
    let pages = 0;
    do {
      const page = await memory.activity.list(alice, { limit: 3, ...(before ? { before } : {}) });
      seen.push(...page.items.map((item) => item.cursor));
      before = page.next;
      pages++;
    } while (before);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
    const whole = await memory.activity.list(alice, { limit: 10 });
    expect(whole.next).toBeUndefined();
    expect(whole.items.map((item) => item.cursor)).toEqual(seen);
    expect(whole.items[0]).toMatchObject({ name: 'topics/n0', revision: 3, actor: 'claude', operation: 'append' });
  });

  it('gives next only when another item follows', async () => {
    const memory = await memoryWith(3);
    expect((await memory.activity.list(alice, { limit: 3 })).next).toBeUndefined();
    expect((await memory.activity.list(alice, { limit: 2 })).next).toBeDefined();
  });

  it('filters by actor and lists the actors', async () => {
    const memory = await memoryWith(2);
    await memory.write({ user: 'alice', label: 'cli' }, { name: 'topics/cli', new: 'x', description: 'd' });
    const page = await memory.activity.list(alice, { actor: 'cli' });
    expect(page.items.map((item) => item.name)).toEqual(['topics/cli']);
    expect((await memory.activity.actors(alice)).map(({ actor, changes }) => [actor, changes])).toEqual([
      ['claude', 2],
      ['cli', 1],
    ]);
  });

  it('refuses a limit outside 1 to the cap, a cursor it did not make, and an empty actor', async () => {
    const memory = await memoryWith(1);
    for (const limit of [0, -1, 1.5, ACTIVITY_LIMIT_CAP + 1, Number.NaN]) {
      await expect(memory.activity.list(alice, { limit })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    await expect(memory.activity.list(alice, { limit: ACTIVITY_LIMIT_CAP })).resolves.toBeDefined();
    for (const before of ['', 'abc', '1.2', '1.2.3.4', '-1.2.3', '01.2.3', `1.2.${2 ** 31}`, '99999999999999999.1.1']) {
      await expect(memory.activity.list(alice, { before })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    await expect(memory.activity.list(alice, { actor: '' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('reads back the position of every cursor it makes', () => {
    const position = { at: 1_735_689_600_000, entry: 42, revision: 7 };
    expect(parseCursor(activityCursor(position))).toEqual(position);
    expect(refusal(() => parseCursor('x'))?.message).toContain('is not an activity cursor');
  });

  it('tells a watcher through the Memory service, synchronously on the in-process store', async () => {
    const memory = await memoryWith(0);
    const told: unknown[] = [];
    const stop = await memory.activity.watch(alice, (change) => told.push(change));
    await memory.write(alice, { name: 'topics/a', new: 'x', description: 'd' });
    expect(told).toEqual([{ version: expect.any(Number), name: 'topics/a', revision: 1, operation: 'create' }]);
    stop();
    await memory.write(alice, { name: 'topics/a', new: 'y' });
    expect(told).toHaveLength(1);
  });
});
