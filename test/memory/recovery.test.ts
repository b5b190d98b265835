/**
 * Recovery over the in-process store: history, one revision, diff, restore, the trash
 * with its purge dates and retention (on an injected clock), undrop and purge — and for
 * every refusal, the message and proof that nothing changed.
 */

import { describe, expect, it } from 'vitest';
import { type Caller, createMemory, type Memory } from '../../src/memory/memory.js';
import type { Policy } from '../../src/memory/model/policy.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';
import { createTransfer } from '../../src/transfer/transfer.js';
import { CALLER, expectEngramError, seed, snapshot } from './fixtures.js';

const START = Date.UTC(2025, 0, 1);
const DAY = 24 * 60 * 60 * 1000;
const CLI: Caller = { user: 'alice', label: 'cli' };

/** A memory whose store and retention share one clock the test moves by hand. */
function clocked(policy: Partial<Policy> = {}) {
  const clock = { now: START };
  const now = () => clock.now;
  const memory = createMemory({ store: openMemoryStore(), now, policy });
  return { memory, clock };
}

/** Everything recovery can see of the names: live entries, index, trash and each history. */
async function state(memory: Memory, names: readonly string[]) {
  const histories: Record<string, unknown> = {};
  for (const name of names) histories[name] = await memory.store.history(CALLER.user, name);
  return { ...(await snapshot(memory)), trash: await memory.store.trash(CALLER.user), histories };
}

/** Expects the action to be refused with this code and exact message, and nothing to change. */
async function expectRefusedRecovery(
  memory: Memory,
  names: readonly string[],
  action: () => unknown,
  code: Parameters<typeof expectEngramError>[1],
  message: string,
): Promise<void> {
  const before = await state(memory, names);
  await expectEngramError(action, code, message);
  expect(await state(memory, names)).toEqual(before);
}

/** topics/editor at revision 3: created, one replace, one new description. */
async function editorWithThreeRevisions(): Promise<{ memory: Memory; clock: { now: number } }> {
  const { memory, clock } = clocked();
  await seed(memory, { 'topics/editor': ['Editor', 'Uses Helix.\nTabs, width 4.\n'] });
  clock.now += 1_000;
  await memory.write(CALLER, { name: 'topics/editor', old: 'Helix', new: 'Neovim' });
  clock.now += 1_000;
  await memory.write(CALLER, { name: 'topics/editor', description: 'Editor preferences' });
  return { memory, clock };
}

describe('history', () => {
  it('lists every revision oldest first: number, operation, actor, time, description and body', async () => {
    const { memory } = await editorWithThreeRevisions();

    expect(await memory.recovery.history(CLI, 'topics/editor')).toEqual([
      {
        revision: 1,
        operation: 'create',
        actor: 'test',
        at: START,
        description: 'Editor',
        body: 'Uses Helix.\nTabs, width 4.\n',
      },
      {
        revision: 2,
        operation: 'replace',
        actor: 'test',
        at: START + 1_000,
        description: 'Editor',
        body: 'Uses Neovim.\nTabs, width 4.\n',
      },
      {
        revision: 3,
        operation: 'describe',
        actor: 'test',
        at: START + 2_000,
        description: 'Editor preferences',
        body: 'Uses Neovim.\nTabs, width 4.\n',
      },
    ]);
  });

  it('records no revision for a write that changes nothing', async () => {
    const { memory } = await editorWithThreeRevisions();

    const { changed } = await memory.write(CALLER, { name: 'topics/editor', description: 'Editor preferences' });

    expect(changed).toBe(false);
    expect(await memory.recovery.history(CLI, 'topics/editor')).toHaveLength(3);
  });

  it('is refused for a name with no entry, live or in the trash', async () => {
    const { memory } = await editorWithThreeRevisions();

    await expectEngramError(
      () => memory.recovery.history(CLI, 'topics/nothing'),
      'NOT_FOUND',
      'topics/nothing has no history: no entry of that name, live or in the trash.',
    );
  });

  it('of a dropped entry ends with the drop, by whom it was dropped', async () => {
    const { memory, clock } = await editorWithThreeRevisions();
    clock.now += 1_000;
    await memory.drop(CLI, 'topics/editor');

    expect((await memory.recovery.history(CLI, 'topics/editor')).at(-1)).toEqual({
      revision: 4,
      operation: 'drop',
      actor: 'cli',
      at: START + 3_000,
      description: 'Editor preferences',
      body: 'Uses Neovim.\nTabs, width 4.\n',
    });
  });
});

describe('names', () => {
  it('are normalised as everywhere else, in every recovery operation', async () => {
    const { memory } = await editorWithThreeRevisions();

    expect(await memory.recovery.history(CLI, ' Topics/Editor ')).toHaveLength(3);
    expect((await memory.recovery.revision(CLI, 'TOPICS/editor', 1)).revision).toBe(1);
    expect((await memory.recovery.diff(CLI, 'Topics/Editor', 1)).patch).toMatch(/^--- topics\/editor@1/);
    expect((await memory.recovery.restore(CLI, 'Topics/Editor', 1)).name).toBe('topics/editor');
    await memory.drop(CLI, 'topics/editor');
    expect((await memory.recovery.undrop(CLI, 'Topics/Editor')).name).toBe('topics/editor');
    expect(await memory.recovery.purge(CLI, 'Topics/Editor', { force: true })).toBe(1);
  });

  it('are refused when invalid, with the usual message, changing nothing', async () => {
    const { memory } = await editorWithThreeRevisions();

    await expectRefusedRecovery(
      memory,
      ['topics/editor'],
      () => memory.recovery.purge(CLI, 'editor', { force: true }),
      'INVALID_NAME',
      '"editor" is not a valid name: use <group>/<slug>, the slug made of a-z 0-9 - . _ (for example ' +
        'areas/editor). Groups you can write: areas, people, topics.',
    );
  });
});

describe('revision', () => {
  it('returns one revision', async () => {
    const { memory } = await editorWithThreeRevisions();

    expect(await memory.recovery.revision(CLI, 'topics/editor', 2)).toMatchObject({
      revision: 2,
      body: 'Uses Neovim.\nTabs, width 4.\n',
    });
  });

  it('is refused for a revision not kept, with the range that is', async () => {
    const { memory } = await editorWithThreeRevisions();

    await expectEngramError(
      () => memory.recovery.revision(CLI, 'topics/editor', 9),
      'NOT_FOUND',
      'topics/editor has no revision 9; the revisions kept are 1 to 3.',
    );
  });

  it('names the single revision kept when there is one', async () => {
    const { memory } = clocked();
    await seed(memory, { 'topics/one': ['One', 'only\n'] });

    await expectEngramError(
      () => memory.recovery.revision(CLI, 'topics/one', 2),
      'NOT_FOUND',
      'topics/one has no revision 2; the revisions kept are 1.',
    );
  });

  it('counts the range from the oldest revision kept once history is trimmed', async () => {
    const limited = createMemory({ store: openMemoryStore(), policy: { historyLimit: 2 } });
    await seed(limited, { 'topics/log': ['Log', 'one\n'] });
    for (const line of ['two', 'three']) await limited.write(CALLER, { name: 'topics/log', new: line });

    await expectEngramError(
      () => limited.recovery.revision(CLI, 'topics/log', 1),
      'NOT_FOUND',
      'topics/log has no revision 1; the revisions kept are 2 to 3.',
    );
  });
});

describe('diff', () => {
  it('is a unified diff of the body from a revision to the latest, headed by names and descriptions', async () => {
    const { memory } = await editorWithThreeRevisions();

    expect((await memory.recovery.diff(CLI, 'topics/editor', 1)).patch).toBe(
      [
        '--- topics/editor@1\tEditor',
        '+++ topics/editor@3\tEditor preferences',
        '@@ -1,2 +1,2 @@',
        '-Uses Helix.',
        '+Uses Neovim.',
        ' Tabs, width 4.',
        '',
      ].join('\n'),
    );
  });

  it('compares two given revisions, in the order given', async () => {
    const { memory } = await editorWithThreeRevisions();

    expect((await memory.recovery.diff(CLI, 'topics/editor', 2, 1)).patch).toBe(
      [
        '--- topics/editor@2\tEditor',
        '+++ topics/editor@1\tEditor',
        '@@ -1,2 +1,2 @@',
        '-Uses Neovim.',
        '+Uses Helix.',
        ' Tabs, width 4.',
        '',
      ].join('\n'),
    );
  });

  it('has no hunk when only the description changed', async () => {
    const { memory } = await editorWithThreeRevisions();

    expect((await memory.recovery.diff(CLI, 'topics/editor', 2, 3)).patch).toBe(
      '--- topics/editor@2\tEditor\n+++ topics/editor@3\tEditor preferences\n',
    );
  });

  it('is refused for a revision not kept, on either side', async () => {
    const { memory } = await editorWithThreeRevisions();

    await expectEngramError(
      () => memory.recovery.diff(CLI, 'topics/editor', 4),
      'NOT_FOUND',
      /no revision 4; .* 1 to 3/,
    );
    await expectEngramError(
      () => memory.recovery.diff(CLI, 'topics/editor', 1, 7),
      'NOT_FOUND',
      /no revision 7; .* 1 to 3/,
    );
  });
});

describe('restore', () => {
  it("brings back a revision's description and body as a new restore revision, and back again", async () => {
    const { memory, clock } = await editorWithThreeRevisions();
    clock.now += 1_000;

    const restored = await memory.recovery.restore(CLI, 'topics/editor', 1);

    expect(restored).toMatchObject({
      description: 'Editor',
      body: 'Uses Helix.\nTabs, width 4.\n',
      revision: 4,
      updated: START + 3_000,
    });
    expect(await memory.store.get(CALLER.user, ['topics/editor'])).toEqual([restored]);
    expect((await memory.recovery.history(CLI, 'topics/editor')).at(-1)).toEqual({
      revision: 4,
      operation: 'restore',
      actor: 'cli',
      at: START + 3_000,
      description: 'Editor',
      body: 'Uses Helix.\nTabs, width 4.\n',
    });

    const again = await memory.recovery.restore(CLI, 'topics/editor', 3);

    expect(again).toMatchObject({
      description: 'Editor preferences',
      body: 'Uses Neovim.\nTabs, width 4.\n',
      revision: 5,
    });
    expect((await memory.recovery.history(CLI, 'topics/editor')).map((item) => item.operation)).toEqual([
      'create',
      'replace',
      'describe',
      'restore',
      'restore',
    ]);
  });

  it('records nothing when the entry already is that revision', async () => {
    const { memory } = await editorWithThreeRevisions();

    const entry = await memory.recovery.restore(CLI, 'topics/editor', 3);

    expect(entry.revision).toBe(3);
    expect(await memory.recovery.history(CLI, 'topics/editor')).toHaveLength(3);
  });

  it('is refused for an entry in the trash, saying to undrop it first', async () => {
    const { memory } = await editorWithThreeRevisions();
    await memory.drop(CLI, 'topics/editor');

    await expectRefusedRecovery(
      memory,
      ['topics/editor'],
      () => memory.recovery.restore(CLI, 'topics/editor', 1),
      'NOT_FOUND',
      'topics/editor is in the trash: undrop it first, then restore.',
    );
  });

  it('is refused for a revision not kept, changing nothing', async () => {
    const { memory } = await editorWithThreeRevisions();

    await expectRefusedRecovery(
      memory,
      ['topics/editor'],
      () => memory.recovery.restore(CLI, 'topics/editor', 4),
      'NOT_FOUND',
      'topics/editor has no revision 4; the revisions kept are 1 to 3.',
    );
  });
});

describe('trash', () => {
  it('lists dropped entries with when, by whom, and the purge date of the retention period', async () => {
    const { memory, clock } = clocked({ trashRetentionDays: 7 });
    await seed(memory, { 'topics/a': ['A', 'a\n'], 'topics/b': ['B', 'b\n'] });
    clock.now = START + 1_000;
    await memory.drop(CLI, 'topics/a');
    clock.now = START + 2_000;
    await memory.drop({ user: 'alice', label: 'claude-desktop' }, 'topics/b');

    const trash = await memory.recovery.trash(CLI);

    expect(trash.map(({ name, droppedAt, droppedBy, purgeAt }) => ({ name, droppedAt, droppedBy, purgeAt }))).toEqual([
      { name: 'topics/b', droppedAt: START + 2_000, droppedBy: 'claude-desktop', purgeAt: START + 2_000 + 7 * DAY },
      { name: 'topics/a', droppedAt: START + 1_000, droppedBy: 'cli', purgeAt: START + 1_000 + 7 * DAY },
    ]);
    expect(trash[1]).toMatchObject({ description: 'A', body: 'a\n', size: 2 });
  });

  it('keeps an entry 30 days by default', async () => {
    const { memory } = clocked();
    await seed(memory, { 'topics/a': ['A', 'a\n'] });
    await memory.drop(CLI, 'topics/a');

    expect((await memory.recovery.trash(CLI))[0]?.purgeAt).toBe(START + 30 * DAY);
  });

  it('is empty when nothing was dropped', async () => {
    const { memory } = clocked();
    await seed(memory, { 'topics/a': ['A', 'a\n'] });

    expect(await memory.recovery.trash(CLI)).toEqual([]);
  });
});

describe('retention', () => {
  it('purges an entry once its purge date has come, not a millisecond before', async () => {
    const { memory, clock } = clocked({ trashRetentionDays: 2 });
    await seed(memory, {
      'topics/old': ['Old', 'old\n'],
      'topics/young': ['Young', 'young\n'],
      'topics/live': ['Live', 'x\n'],
    });
    await memory.drop(CLI, 'topics/old');
    clock.now = START + DAY;
    await memory.drop(CLI, 'topics/young');

    clock.now = START + 2 * DAY - 1;
    expect(await memory.recovery.purgeExpired()).toBe(0);
    expect((await memory.recovery.trash(CLI)).map((item) => item.name)).toEqual(['topics/young', 'topics/old']);

    clock.now = START + 2 * DAY;
    expect(await memory.recovery.purgeExpired()).toBe(1);
    expect((await memory.recovery.trash(CLI)).map((item) => item.name)).toEqual(['topics/young']);
    await expectEngramError(() => memory.recovery.history(CLI, 'topics/old'), 'NOT_FOUND');

    clock.now = START + 3 * DAY;
    expect(await memory.recovery.purgeExpired()).toBe(1);
    expect(await memory.recovery.trash(CLI)).toEqual([]);
    expect((await memory.index(CLI)).map((row) => row.name)).toEqual(['topics/live']);
  });

  it('purges every user’s expired trash', async () => {
    const { memory, clock } = clocked({ trashRetentionDays: 1 });
    const bob: Caller = { user: 'bob', label: 'cli' };
    await seed(memory, { 'topics/a': ['A', 'a\n'] });
    await seed(memory, { 'topics/b': ['B', 'b\n'] }, bob);
    await memory.drop(CLI, 'topics/a');
    await memory.drop(bob, 'topics/b');
    clock.now = START + DAY;

    expect(await memory.recovery.purgeExpired()).toBe(2);
    expect(await memory.recovery.trash(bob)).toEqual([]);
  });

  it('of 0 days purges a dropped entry at once, with its history', async () => {
    const { memory } = clocked({ trashRetentionDays: 0 });
    await seed(memory, { 'topics/a': ['A', 'a\n'], 'topics/kept': ['Kept', 'k\n'] });
    await memory.write(CALLER, { name: 'topics/a', new: 'more' });

    const { entry: dropped } = await memory.drop(CLI, 'topics/a');

    expect(dropped).toMatchObject({ name: 'topics/a', body: 'a\nmore\n' });
    expect(await memory.store.trash(CALLER.user)).toEqual([]);
    expect(await memory.store.history(CALLER.user, 'topics/a')).toEqual([]);
    expect((await memory.index(CLI)).map((row) => row.name)).toEqual(['topics/kept']);
    await expectEngramError(() => memory.recovery.undrop(CLI, 'topics/a'), 'NOT_FOUND');
  });
});

describe('undrop', () => {
  it('brings a dropped entry back as a new undrop revision', async () => {
    const { memory, clock } = await editorWithThreeRevisions();
    await memory.drop(CLI, 'topics/editor');
    clock.now += 1_000;

    const entry = await memory.recovery.undrop(CLI, 'topics/editor');

    expect(entry).toMatchObject({ name: 'topics/editor', body: 'Uses Neovim.\nTabs, width 4.\n', revision: 5 });
    expect((await memory.open(CLI, ['topics/editor'])).found).toEqual([entry]);
    expect(await memory.recovery.trash(CLI)).toEqual([]);
    expect((await memory.recovery.history(CLI, 'topics/editor')).slice(-2)).toMatchObject([
      { revision: 4, operation: 'drop', actor: 'cli' },
      { revision: 5, operation: 'undrop', actor: 'cli', at: START + 3_000 },
    ]);
  });

  it('is refused when a live entry has taken the name, changing nothing', async () => {
    const { memory } = await editorWithThreeRevisions();
    await memory.drop(CLI, 'topics/editor');
    await seed(memory, { 'topics/editor': ['New editor notes', 'Uses Zed.\n'] });

    await expectRefusedRecovery(
      memory,
      ['topics/editor'],
      () => memory.recovery.undrop(CLI, 'topics/editor'),
      'CONFLICT',
      'topics/editor cannot be undropped: a live entry has taken the name since. Rename or drop the live one first, ' +
        'then undrop again.',
    );
  });

  it('is refused for a name not in the trash', async () => {
    const { memory } = await editorWithThreeRevisions();

    await expectRefusedRecovery(
      memory,
      ['topics/editor'],
      () => memory.recovery.undrop(CLI, 'topics/editor'),
      'NOT_FOUND',
      'topics/editor is not in the trash; nothing was undropped.',
    );
  });
});

describe('purge', () => {
  it('forgets an entry in the trash and all its history', async () => {
    const { memory } = await editorWithThreeRevisions();
    await seed(memory, { 'topics/kept': ['Kept', 'k\n'] });
    await memory.drop(CLI, 'topics/editor');

    expect(await memory.recovery.purge(CLI, 'topics/editor', { force: false })).toBe(1);

    expect(await memory.recovery.trash(CLI)).toEqual([]);
    expect(await memory.store.history(CALLER.user, 'topics/editor')).toEqual([]);
    expect((await memory.index(CLI)).map((row) => row.name)).toEqual(['topics/kept']);
  });

  it('forgets every dropped copy of the name and counts them', async () => {
    const { memory } = clocked();
    for (const body of ['first\n', 'second\n']) {
      await seed(memory, { 'topics/e': ['E', body] });
      await memory.drop(CLI, 'topics/e');
    }

    expect(await memory.recovery.purge(CLI, 'topics/e', { force: false })).toBe(2);
    expect(await memory.recovery.trash(CLI)).toEqual([]);
  });

  it('is refused for a live entry without force, changing nothing', async () => {
    const { memory } = await editorWithThreeRevisions();

    await expectRefusedRecovery(
      memory,
      ['topics/editor'],
      () => memory.recovery.purge(CLI, 'topics/editor', { force: false }),
      'CONFLICT',
      'topics/editor is a live entry: drop it first, or purge it with force to remove it and all its history now.',
    );
  });

  it('with force forgets a live entry, its history and its dropped copies', async () => {
    const { memory } = await editorWithThreeRevisions();
    await memory.drop(CLI, 'topics/editor');
    await seed(memory, { 'topics/editor': ['Again', 'again\n'] });

    expect(await memory.recovery.purge(CLI, 'topics/editor', { force: true })).toBe(2);

    expect(await memory.index(CLI)).toEqual([]);
    expect(await memory.recovery.trash(CLI)).toEqual([]);
    expect(await memory.store.history(CALLER.user, 'topics/editor')).toEqual([]);
  });

  it('is refused for a name neither live nor in the trash', async () => {
    const { memory } = await editorWithThreeRevisions();

    await expectRefusedRecovery(
      memory,
      ['topics/editor', 'topics/nothing'],
      () => memory.recovery.purge(CLI, 'topics/nothing', { force: true }),
      'NOT_FOUND',
      'topics/nothing is neither live nor in the trash; nothing was purged.',
    );
  });
});

describe('a read-only caller', () => {
  it('may read history and trash but not restore, undrop, purge, import or wipe', async () => {
    const memory = createMemory({ store: openMemoryStore() });
    const writer = { user: 'local', label: 'test' };
    const reader = { ...writer, readOnly: true };
    await memory.write(writer, { name: 'topics/a', description: 'A', new: 'one' });
    await memory.write(writer, { name: 'topics/a', new: 'two' });
    await memory.write(writer, { name: 'topics/b', description: 'B', new: 'x' });
    await memory.drop(writer, 'topics/b');
    const document = await createTransfer(memory).export(writer);
    expect(await memory.recovery.history(reader, 'topics/a')).toHaveLength(2);
    expect(await memory.recovery.trash(reader)).toHaveLength(1);
    const refusals = [
      memory.recovery.restore(reader, 'topics/a', 1),
      memory.recovery.undrop(reader, 'topics/b'),
      memory.recovery.purge(reader, 'topics/b', { force: false }),
      createTransfer(memory).import(reader, document, { mode: 'replace' }),
      createTransfer(memory).wipe(reader),
    ];
    for (const refusal of refusals) await expect(refusal).rejects.toMatchObject({ code: 'READ_ONLY_TOKEN' });
    expect(await memory.recovery.history(writer, 'topics/a')).toHaveLength(2);
    expect(await memory.recovery.trash(writer)).toHaveLength(1);
    expect((await memory.index(writer)).map((row) => row.name)).toEqual(['topics/a']);
  });
});

describe('undrop and the caps', () => {
  it('is refused when it would pass the entry cap, changing nothing', async () => {
    const { memory } = clocked({ maxEntries: 1 });
    await seed(memory, { 'topics/a': ['A', 'a'] });
    await memory.drop(CLI, 'topics/a');
    await seed(memory, { 'topics/b': ['B', 'b'] });
    await expectRefusedRecovery(
      memory,
      ['topics/a', 'topics/b'],
      () => memory.recovery.undrop(CLI, 'topics/a'),
      'TOO_MANY_ENTRIES',
      'topics/a would make 2 entries in this memory; the cap is 1. Make room first: merge related entries into one, ' +
        'or drop entries that are no longer needed (memory_open() lists them), then call again.',
    );
  });

  it('is refused when it would pass the byte cap', async () => {
    const { memory } = clocked({ userCap: 30 });
    await seed(memory, { 'topics/a': ['A', 'a'.repeat(15)] });
    await memory.drop(CLI, 'topics/a');
    await seed(memory, { 'topics/b': ['B', 'b'.repeat(15)] });
    await expectEngramError(
      () => memory.recovery.undrop(CLI, 'topics/a'),
      'TOO_LARGE',
      /^topics\/a would bring this memory to 50 bytes/,
    );
  });
});

describe('restore and the caps', () => {
  it('is refused when the revision would pass the byte cap', async () => {
    const { memory } = clocked({ userCap: 40 });
    await seed(memory, { 'topics/a': ['A', 'a'.repeat(25)] });
    await memory.write(CLI, { name: 'topics/a', old: 'a'.repeat(25), new: 'short' });
    await seed(memory, { 'topics/b': ['B', 'b'] });
    await expectEngramError(
      () => memory.recovery.restore(CLI, 'topics/a', 1),
      'TOO_LARGE',
      /^topics\/a would bring this memory to 46 bytes/,
    );
  });
});
