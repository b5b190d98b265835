/**
 * The Memory service over the in-process store: index, open, write, drop, the caps and
 * the read-only caller — and for every refusal, proof that the store did not change.
 */

import { describe, expect, it } from 'vitest';
import { createMemory, MAX_LISTED_NAMES, type Memory, type WriteRequest } from '../../src/memory/memory.js';
import type { ErrorCode } from '../../src/memory/model/errors.js';
import { EMPTY_INDEX, formatIndex, indexLine } from '../../src/memory/model/format.js';
import type { Policy } from '../../src/memory/model/policy.js';
import { CALLER, expectRefused, newMemory, READ_ONLY, seed, snapshot } from './fixtures.js';

const write = (memory: Memory, request: WriteRequest) => memory.write(CALLER, request);
const bodyOf = async (memory: Memory, name: string) => (await memory.store.get(CALLER.user, [name]))[0]?.body;

async function seeded(): Promise<Memory> {
  const memory = newMemory();
  await seed(memory, {
    'people/allozaur': ['llama.cpp WebUI maintainer', 'Works on the WebUI.'],
    'areas/qwentts-cpp': ['TTS in C++', 'Target: 24 kHz.\nModel: small'],
    'topics/preferences': ['How the user likes to work', 'Prefers short answers.'],
  });
  return memory;
}

describe('index', () => {
  it('is sorted by name, with sizes in UTF-8 bytes', async () => {
    const memory = await seeded();
    await seed(memory, { 'areas/aaa': ['first', 'é😀'] });
    expect(formatIndex(await memory.index(CALLER))).toBe(
      [
        'areas/aaa (7 bytes): first',
        'areas/qwentts-cpp (29 bytes): TTS in C++',
        'people/allozaur (20 bytes): llama.cpp WebUI maintainer',
        'topics/preferences (23 bytes): How the user likes to work',
      ].join('\n'),
    );
  });

  it('says how to begin when the memory is empty', async () => {
    expect(await newMemory().index(CALLER)).toEqual([]);
    expect(formatIndex([])).toBe(EMPTY_INDEX);
    expect(EMPTY_INDEX).toContain('memory_write');
  });

  it('is per user', async () => {
    const memory = await seeded();
    expect(await memory.index({ user: 'bob', label: 'test' })).toEqual([]);
  });
});

describe('open', () => {
  it('normalises, de-duplicates and keeps the order asked', async () => {
    const memory = await seeded();
    const { found, missing } = await memory.open(CALLER, [
      ' Topics/Preferences',
      'people/allozaur',
      'topics/preferences',
      'AREAS/qwentts-cpp ',
    ]);
    expect(found.map((entry) => entry.name)).toEqual(['topics/preferences', 'people/allozaur', 'areas/qwentts-cpp']);
    expect(found[2]).toMatchObject({ description: 'TTS in C++', body: 'Target: 24 kHz.\nModel: small\n', size: 29 });
    expect(missing).toEqual([]);
  });

  it('reports names not found with up to 3 suggestions, and still returns the found ones', async () => {
    const memory = await seeded();
    await seed(memory, {
      'people/allozaur2': ['d', 'x'],
      'people/allozaurus': ['d', 'x'],
      'people/allo': ['d', 'x'],
    });
    const { found, missing } = await memory.open(CALLER, ['people/alozaur', 'topics/preferences', 'areas/zzz']);
    expect(found.map((entry) => entry.name)).toEqual(['topics/preferences']);
    expect(missing).toHaveLength(2);
    expect(missing[0]?.name).toBe('people/alozaur');
    expect(missing[0]?.suggestions).toHaveLength(3);
    expect(missing[0]?.suggestions[0]).toBe('people/allozaur');
    expect(missing[1]).toEqual({ name: 'areas/zzz', suggestions: [] });
  });

  it('takes at most 50 names, counted after de-duplication', async () => {
    const memory = await seeded();
    const names = Array.from({ length: 50 }, (_, i) => `topics/t${i}`);
    expect((await memory.open(CALLER, [...names, 'Topics/T0'])).missing).toHaveLength(50);
    await expectRefused(
      memory,
      () => memory.open(CALLER, [...names, 'topics/t50']),
      'INVALID_ARGUMENT',
      'memory_open takes at most 50 names per call; 51 were given. ' +
        'Open the entries you need most first, then the rest in another call.',
    );
  });

  it('refuses an invalid name', async () => {
    const memory = await seeded();
    await expectRefused(
      memory,
      () => memory.open(CALLER, ['people/allozaur', 'people/John Smith']),
      'INVALID_NAME',
      /^"people\/John Smith" is not a valid name/,
    );
  });

  it('reads entries of groups that are not writable', async () => {
    const memory = await seeded();
    await seed(sameStore(memory, { groups: { notes: 'scratch' } }), { 'notes/todo': ['old notes', 'buy milk'] });
    expect((await memory.open(CALLER, ['notes/todo'])).found[0]?.body).toBe('buy milk\n');
    expect((await memory.index(CALLER)).map((row) => row.name)).toContain('notes/todo');
  });

  it('is allowed to a read-only caller', async () => {
    const memory = await seeded();
    expect((await memory.open(READ_ONLY, ['people/allozaur'])).found).toHaveLength(1);
    expect(await memory.index(READ_ONLY)).toHaveLength(3);
  });
});

/** Another Memory over the same store, with another policy (other groups, other caps). */
function sameStore(memory: Memory, policy: Partial<Policy>): Memory {
  return createMemory({ store: memory.store, policy: { ...memory.policy, ...policy } });
}

describe('write: the table', () => {
  it('creates, with the final newline, and returns the index line', async () => {
    const memory = newMemory();
    const { entry, changed } = await write(memory, {
      name: 'People/Allozaur',
      description: ' WebUI\nmaintainer ',
      new: 'Hi',
    });
    expect(changed).toBe(true);
    expect(entry).toMatchObject({ name: 'people/allozaur', description: 'WebUI maintainer', body: 'Hi\n', size: 3 });
    expect(entry.revision).toBe(1);
    expect(indexLine(entry)).toBe('people/allozaur (3 bytes): WebUI maintainer');
    expect(formatIndex(await memory.index(CALLER))).toBe(indexLine(entry));
  });

  it('appends, replaces, removes and describes, one revision each', async () => {
    const memory = await seeded();
    const name = 'areas/qwentts-cpp';
    const steps: [WriteRequest, string, string][] = [
      [{ name, new: 'License: MIT' }, 'Target: 24 kHz.\nModel: small\nLicense: MIT\n', 'TTS in C++'],
      [{ name, old: '24 kHz', new: '$& 48 kHz' }, 'Target: $& 48 kHz.\nModel: small\nLicense: MIT\n', 'TTS in C++'],
      [{ name, old: 'Model: small' }, 'Target: $& 48 kHz.\nLicense: MIT\n', 'TTS in C++'],
      [{ name, description: 'Qwen TTS in C++' }, 'Target: $& 48 kHz.\nLicense: MIT\n', 'Qwen TTS in C++'],
      [{ name, old: '$& ', new: '' }, 'Target: 48 kHz.\nLicense: MIT\n', 'Qwen TTS in C++'],
    ];
    for (const [index, [request, body, description]] of steps.entries()) {
      const { entry, changed } = await write(memory, request);
      expect(changed).toBe(true);
      expect(entry).toMatchObject({ body, description, revision: index + 2 });
    }
  });

  it('normalises CRLF and CR line endings in new and old', async () => {
    const memory = newMemory();
    await write(memory, { name: 'topics/t', description: 'd', new: 'a\r\nb\rc' });
    expect(await bodyOf(memory, 'topics/t')).toBe('a\nb\nc\n');
    await write(memory, { name: 'topics/t', old: 'a\r\nb', new: 'x\r\ny' });
    expect(await bodyOf(memory, 'topics/t')).toBe('x\ny\nc\n');
  });

  it('a write that changes nothing succeeds, returns the line and keeps the revision', async () => {
    const memory = await seeded();
    const before = await snapshot(memory);
    for (const request of [
      { name: 'topics/preferences', description: 'How the user likes to work' },
      { name: 'topics/preferences', old: 'short', new: 'short' },
      { name: 'topics/preferences', new: '' },
    ]) {
      const { entry, changed } = await write(memory, request);
      expect(changed).toBe(false);
      expect(indexLine(entry)).toBe('topics/preferences (23 bytes): How the user likes to work');
      expect(entry.revision).toBe(1);
    }
    expect(await snapshot(memory)).toEqual(before);
  });
});

describe('write: refusals change nothing', () => {
  it.each<[string, WriteRequest, ErrorCode, string | RegExp]>([
    [
      'old on a missing entry, with suggestions',
      { name: 'topics/preference', old: 'a', new: 'b' },
      'NOT_FOUND',
      'topics/preference not found. Did you mean topics/preferences? ' +
        'To create it, call memory_write with name, description and new (without old).',
    ],
    ['create without description', { name: 'topics/new', new: 'x' }, 'INVALID_ARGUMENT', /does not exist yet/],
    ['nothing to do', { name: 'topics/preferences' }, 'NOTHING_TO_DO', /^Nothing to do/],
    ['old = ""', { name: 'topics/preferences', old: '', new: 'x' }, 'INVALID_ARGUMENT', /old must not be empty/],
    [
      'old not found',
      { name: 'areas/qwentts-cpp', old: 'Target: 22 kHz.' },
      'NO_MATCH',
      /Closest line: "Target: 24 kHz\."/,
    ],
    ['old ambiguous', { name: 'areas/qwentts-cpp', old: 'a', new: 'b' }, 'AMBIGUOUS', /occurs \d+ times/],
    ['invalid name', { name: 'people/John Smith', new: 'x', description: 'd' }, 'INVALID_NAME', /not a valid name/],
    ['group not writable', { name: 'notes/x', new: 'x', description: 'd' }, 'READ_ONLY_GROUP', /cannot be written/],
    [
      'description too long',
      { name: 'topics/preferences', description: 'd'.repeat(201) },
      'TOO_LARGE',
      /^description is 201 characters; the cap is 200\./,
    ],
    [
      'entry too large',
      { name: 'topics/preferences', new: 'x'.repeat(16_384) },
      'TOO_LARGE',
      'topics/preferences would be 16,408 bytes; the cap is 16,384. ' +
        'Split the subject: move part of it to a new entry such as topics/preferences-more, then remove it here.',
    ],
  ])('%s', async (_, request, code, message) => {
    const memory = await seeded();
    await expectRefused(memory, () => write(memory, request), code, message);
  });

  it('a read-only caller cannot write', async () => {
    const memory = await seeded();
    await expectRefused(
      memory,
      () => memory.write(READ_ONLY, { name: 'topics/preferences', new: 'x' }),
      'READ_ONLY_TOKEN',
      'This connection is read-only: it can use memory_open but not memory_write or memory_drop. ' +
        'Ask the user to connect with a read-write token to change memory.',
    );
  });

  it('a read-only OAuth app cannot write, and is told to have the app connected again without "Read only"', async () => {
    const memory = await seeded();
    await expectRefused(
      memory,
      () =>
        memory.write({ ...READ_ONLY, oauthApp: true, readOnlyGrant: true }, { name: 'topics/preferences', new: 'x' }),
      'READ_ONLY_TOKEN',
      'This connection is read-only: it can use memory_open but not memory_write or memory_drop. The user ' +
        'connected this app to Engram with "Read only". To change memory, ask them to connect the app again ' +
        '(remove the connector and add it back) and choose "Read and change my memory" on Engram’s consent page ' +
        '(only "Read only" is offered when the app asked only to read: it must then ask for the scope memory:write).',
    );
  });

  it('an OAuth app that narrowed its own token to memory:read is told to authorize again, not that the user chose "Read only"', async () => {
    const memory = await seeded();
    await expectRefused(
      memory,
      () =>
        memory.write({ ...READ_ONLY, oauthApp: true, readOnlyGrant: false }, { name: 'topics/preferences', new: 'x' }),
      'READ_ONLY_TOKEN',
      'This connection is read-only: it can use memory_open but not memory_write or memory_drop. The user let ' +
        'this app change memory, but the app narrowed its own token to the scope memory:read when refreshing it, ' +
        'and a refresh cannot widen it again. To change memory, the app must authorize again, asking for the ' +
        'scope "memory:read memory:write".',
    );
  });
});

describe('write: the per-user total cap', () => {
  // Each entry below takes 9 bytes besides its body: its name (8) and description (1).
  const small = () => newMemory({ userCap: 100, entryCap: 80 });

  it('allows up to the cap and refuses past it', async () => {
    const memory = small();
    await write(memory, { name: 'topics/a', description: 'd', new: 'a'.repeat(49) });
    await write(memory, { name: 'topics/b', description: 'd', new: 'b'.repeat(31) });
    await expectRefused(
      memory,
      () => write(memory, { name: 'topics/c', description: 'd', new: 'c' }),
      'TOO_LARGE',
      'topics/c would bring this memory to 111 bytes (names, descriptions and bodies); the cap is 100. ' +
        'Make room first: shorten or drop entries that are no longer needed (memory_open() shows their sizes), then call again.',
    );
    await expectRefused(memory, () => write(memory, { name: 'topics/a', new: 'x' }), 'TOO_LARGE', /to 102 bytes/);
  });

  it('counts names and descriptions: a longer description alone can pass the cap', async () => {
    const memory = small();
    await write(memory, { name: 'topics/a', description: 'd', new: 'a'.repeat(89 - 9 - 1) });
    await write(memory, { name: 'topics/b', description: 'd', new: '' });
    await expectRefused(
      memory,
      () => write(memory, { name: 'topics/b', description: 'a much longer description' }),
      'TOO_LARGE',
      /^topics\/b would bring this memory to 122 bytes/,
    );
  });

  it("counts the entry's new size in place of its old one", async () => {
    const memory = small();
    await write(memory, { name: 'topics/a', description: 'd', new: 'a'.repeat(49) });
    await write(memory, { name: 'topics/b', description: 'd', new: 'b'.repeat(21) });
    const { entry } = await write(memory, { name: 'topics/a', old: 'a'.repeat(49), new: `${'é'.repeat(29)}a` });
    expect(entry.size).toBe(60);
  });

  it('lets a memory over the cap shrink', async () => {
    const memory = small();
    await write(memory, { name: 'topics/a', description: 'd', new: `keep\n${'a'.repeat(73)}` });
    const tighter = sameStore(memory, { userCap: 10 });
    expect((await tighter.write(CALLER, { name: 'topics/a', old: 'keep' })).entry.size).toBe(74);
    expect((await tighter.write(CALLER, { name: 'topics/a', description: 'e' })).changed).toBe(true);
    await expectRefused(
      tighter,
      () => tighter.write(CALLER, { name: 'topics/a', new: 'b' }),
      'TOO_LARGE',
      /to 85 bytes/,
    );
  });
});

describe('write: the per-user entry cap', () => {
  it('refuses a new entry past the cap, saying how to make room, and still edits existing ones', async () => {
    const memory = newMemory({ maxEntries: 2 });
    await write(memory, { name: 'topics/a', description: 'A', new: 'a' });
    await write(memory, { name: 'topics/b', description: 'B', new: 'b' });
    await expectRefused(
      memory,
      () => write(memory, { name: 'topics/c', description: 'C', new: 'c' }),
      'TOO_MANY_ENTRIES',
      'topics/c would make 3 entries in this memory; the cap is 2. Make room first: merge related entries into one, ' +
        'or drop entries that are no longer needed (memory_open() lists them), then call again.',
    );
    expect((await write(memory, { name: 'topics/a', new: 'more' })).changed).toBe(true);
    await memory.drop(CALLER, 'topics/b');
    expect((await write(memory, { name: 'topics/c', description: 'C', new: 'c' })).changed).toBe(true);
  });
});

describe('drop', () => {
  it('removes the entry from the index and from open, returning it', async () => {
    const memory = await seeded();
    const { entry: dropped } = await memory.drop(CALLER, ' People/Allozaur ');
    expect(indexLine(dropped)).toBe('people/allozaur (20 bytes): llama.cpp WebUI maintainer');
    expect((await memory.index(CALLER)).map((row) => row.name)).toEqual(['areas/qwentts-cpp', 'topics/preferences']);
    expect((await memory.open(CALLER, ['people/allozaur'])).found).toEqual([]);
  });

  it('drops entries of groups that are not writable', async () => {
    const memory = await seeded();
    await seed(sameStore(memory, { groups: { notes: 'scratch' } }), { 'notes/todo': ['d', 'x'] });
    expect((await memory.drop(CALLER, 'notes/todo')).entry.name).toBe('notes/todo');
  });

  it('refuses an unknown name with suggestions', async () => {
    const memory = await seeded();
    await expectRefused(
      memory,
      () => memory.drop(CALLER, 'people/allozor'),
      'NOT_FOUND',
      'people/allozor not found, nothing was dropped. Did you mean people/allozaur? memory_open() lists every entry.',
    );
    await expectRefused(
      memory,
      () => memory.drop(CALLER, 'areas/zzz'),
      'NOT_FOUND',
      'areas/zzz not found, nothing was dropped. memory_open() lists every entry.',
    );
  });

  it('refuses an invalid name and a read-only caller', async () => {
    const memory = await seeded();
    await expectRefused(memory, () => memory.drop(CALLER, 'allozaur'), 'INVALID_NAME');
    await expectRefused(memory, () => memory.drop(READ_ONLY, 'people/allozaur'), 'READ_ONLY_TOKEN');
  });
});

describe('suggestions', () => {
  it('compare slugs, so a shared group alone suggests nothing', async () => {
    const memory = newMemory();
    await seed(memory, { 'areas/qwentts-cpp': ['TTS', 'x'], 'topics/qwentts': ['TTS notes', 'x'] });
    expect((await memory.open(CALLER, ['areas/nothing'])).missing).toEqual([
      { name: 'areas/nothing', suggestions: [] },
    ]);
    expect((await memory.open(CALLER, ['areas/qwentts'])).missing[0]?.suggestions).toEqual([
      'topics/qwentts',
      'areas/qwentts-cpp',
    ]);
  });
});

describe('names', () => {
  it('are those starting with what was typed, or whose slug does, case folded, in index order', async () => {
    const memory = await seeded();
    await seed(memory, { 'topics/allergies': ['Allergies', 'None.'] });
    expect(await memory.names(CALLER, 'to')).toEqual({ names: ['topics/allergies', 'topics/preferences'], total: 2 });
    expect(await memory.names(CALLER, ' AL')).toEqual({ names: ['people/allozaur', 'topics/allergies'], total: 2 });
    expect(await memory.names(CALLER, 'areas/q')).toEqual({ names: ['areas/qwentts-cpp'], total: 1 });
    expect(await memory.names(CALLER, 'zz')).toEqual({ names: [], total: 0 });
    expect((await memory.names(CALLER)).total).toBe(4);
    expect(await memory.names({ user: 'bob', label: 'test' }, '')).toEqual({ names: [], total: 0 });
  });

  it('are at most the limit asked, and never more than MAX_LISTED_NAMES, with how many matched', async () => {
    const memory = newMemory();
    const many = Array.from({ length: MAX_LISTED_NAMES + 5 }, (_, i) => `topics/n${String(i).padStart(3, '0')}`);
    await seed(memory, Object.fromEntries(many.map((name) => [name, ['a note', 'x']])));
    expect(await memory.names(CALLER, 'n', 3)).toEqual({ names: many.slice(0, 3), total: many.length });
    expect(await memory.names(CALLER, 'n', 10_000)).toEqual({
      names: many.slice(0, MAX_LISTED_NAMES),
      total: many.length,
    });
    expect(await memory.names(CALLER, '')).toEqual({ names: many.slice(0, MAX_LISTED_NAMES), total: many.length });
  });
});
