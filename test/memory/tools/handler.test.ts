/**
 * Dispatch from a tool call to a plain-text result, exactly as DESIGN §2 shows it:
 * index lines, opened entries, the write's index line, the drop line; isError only for
 * refusals, and never an exception.
 */

import { describe, expect, it } from 'vitest';
import type { Memory } from '../../../src/memory/memory.js';
import { EMPTY_INDEX, formatMissing } from '../../../src/memory/model/format.js';
import type { Store } from '../../../src/memory/port.js';
import { createToolHandler } from '../../../src/memory/tools/handler.js';
import { boundaryTagOf } from '../../helpers/boundary.js';
import { CALLER, expectEngramError, newMemory, READ_ONLY, seed, snapshot } from '../fixtures.js';

async function setup() {
  const memory = newMemory();
  await seed(memory, {
    'people/allozaur': ['llama.cpp WebUI maintainer', 'Works on the WebUI.\nLikes short PRs.'],
    'areas/qwentts-cpp': ['TTS in C++', 'Target: 24 kHz.'],
  });
  const handler = createToolHandler(memory);
  return { memory, call: (tool: string, args: unknown, caller = CALLER) => handler(caller, tool, args) };
}

/** Calls the tool and checks that the memory did not change. */
async function callUnchanged(memory: Memory, call: () => Promise<unknown>) {
  const before = await snapshot(memory);
  const result = await call();
  expect(await snapshot(memory)).toEqual(before);
  return result;
}

describe('memory_open', () => {
  it('with no names (or an empty list) returns the index lines, sorted', async () => {
    const { call } = await setup();
    const index = {
      text: 'areas/qwentts-cpp (16 bytes): TTS in C++\npeople/allozaur (37 bytes): llama.cpp WebUI maintainer',
      isError: false,
    };
    expect(await call('memory_open', {})).toEqual(index);
    expect(await call('memory_open', { names: [] })).toEqual(index);
    expect(await call('memory_open', '')).toEqual(index);
  });

  it('on an empty memory says how to begin', async () => {
    const handler = createToolHandler(newMemory());
    expect(await handler(CALLER, 'memory_open', {})).toEqual({ text: EMPTY_INDEX, isError: false });
  });

  it('returns every entry asked for: index line, body, then a line that ends it', async () => {
    const { call } = await setup();
    const result = await call('memory_open', { names: ['People/Allozaur', 'areas/qwentts-cpp'] });
    const tag = boundaryTagOf(result.text);
    expect(result).toEqual({
      text:
        'people/allozaur (37 bytes): llama.cpp WebUI maintainer\nWorks on the WebUI.\nLikes short PRs.' +
        `\n=== end of people/allozaur [${tag}] ===\n\n` +
        `areas/qwentts-cpp (16 bytes): TTS in C++\nTarget: 24 kHz.\n=== end of areas/qwentts-cpp [${tag}] ===`,
      isError: false,
    });
  });

  it('reports missing names after the found ones, without isError', async () => {
    const { call } = await setup();
    const result = await call('memory_open', { names: ['people/alozaur', 'areas/qwentts-cpp'] });
    expect(result).toEqual({
      text:
        'areas/qwentts-cpp (16 bytes): TTS in C++\nTarget: 24 kHz.' +
        `\n=== end of areas/qwentts-cpp [${boundaryTagOf(result.text)}] ===\n\n` +
        formatMissing({ name: 'people/alozaur', suggestions: ['people/allozaur'] }),
      isError: false,
    });
  });

  it('is an error when none is found', async () => {
    const { call } = await setup();
    expect(await call('memory_open', { names: ['people/alozaur', 'topics/zzz'] })).toEqual({
      text:
        `${formatMissing({ name: 'people/alozaur', suggestions: ['people/allozaur'] })}\n` +
        `${formatMissing({ name: 'topics/zzz', suggestions: [] })}\n` +
        'memory_open() with no names lists every entry.',
      isError: true,
      code: 'NOT_FOUND',
    });
  });

  it("is an error when a name is invalid, in core's words as they are", async () => {
    const { memory, call } = await setup();
    const result = await call('memory_open', { names: ['people/allozaur', 'people/John Smith'] });
    const invalid = await expectEngramError(() => memory.open(CALLER, ['people/John Smith']), 'INVALID_NAME');
    expect(result).toEqual({ isError: true, code: 'INVALID_NAME', text: invalid.message });
  });
});

describe('memory_write', () => {
  it('returns the index line after the write', async () => {
    const { call } = await setup();
    expect(await call('memory_write', { name: 'areas/qwentts-cpp', new: 'License: MIT' })).toEqual({
      text: 'areas/qwentts-cpp (29 bytes): TTS in C++',
      isError: false,
    });
    expect(
      await call('memory_write', '{"name": "Topics/Prefs", "description": "How they work", "new": "Short é"}'),
    ).toEqual({ text: 'topics/prefs (9 bytes): How they work', isError: false });
  });

  it('a write that changes nothing still returns the line', async () => {
    const { memory, call } = await setup();
    const result = await callUnchanged(memory, () =>
      call('memory_write', { name: 'areas/qwentts-cpp', description: 'TTS in C++' }),
    );
    expect(result).toEqual({ text: 'areas/qwentts-cpp (16 bytes): TTS in C++', isError: false });
  });

  it.each<[string, unknown, string, string | RegExp]>([
    ['new a number', { name: 'areas/qwentts-cpp', new: 5 }, 'INVALID_ARGUMENT', /new must be a string/],
    ['unknown key', { name: 'areas/qwentts-cpp', append: 'x' }, 'INVALID_ARGUMENT', /does not take "append"/],
    ['invalid JSON', '{name:', 'INVALID_ARGUMENT', /not valid JSON/],
    ['old not found', { name: 'areas/qwentts-cpp', old: 'Target: 22 kHz.', new: 'x' }, 'NO_MATCH', /Closest line/],
    ['unwritable group', { name: 'notes/x', description: 'd', new: 'x' }, 'READ_ONLY_GROUP', /cannot be written/],
  ])('refuses %s with isError and changes nothing', async (_, args, code, message) => {
    const { memory, call } = await setup();
    const result = await callUnchanged(memory, () => call('memory_write', args));
    expect(result).toMatchObject({ isError: true, code, text: expect.stringMatching(message) });
  });

  it('refuses a read-only caller', async () => {
    const { memory, call } = await setup();
    const result = await callUnchanged(memory, () => call('memory_write', { name: 'areas/x', new: 'x' }, READ_ONLY));
    expect(result).toMatchObject({ isError: true, code: 'READ_ONLY_TOKEN' });
  });
});

describe('memory_drop', () => {
  it('returns one line naming what was dropped', async () => {
    const { call } = await setup();
    expect(await call('memory_drop', { name: 'Areas/QwenTTS-cpp' })).toEqual({
      text: 'Dropped areas/qwentts-cpp (16 bytes): TTS in C++',
      isError: false,
    });
    expect((await call('memory_open', {})).text).toBe('people/allozaur (37 bytes): llama.cpp WebUI maintainer');
  });

  it('refuses an unknown name with suggestions, and a missing name', async () => {
    const { memory, call } = await setup();
    const unknown = await expectEngramError(() => memory.drop(CALLER, 'areas/qwentts'), 'NOT_FOUND');
    expect(unknown.detail).toEqual({
      reason: 'drop-not-found',
      name: 'areas/qwentts',
      suggestions: ['areas/qwentts-cpp'],
    });
    expect(await callUnchanged(memory, () => call('memory_drop', { name: 'areas/qwentts' }))).toEqual({
      text: unknown.message,
      isError: true,
      code: 'NOT_FOUND',
    });
    expect(await callUnchanged(memory, () => call('memory_drop', {}))).toMatchObject({
      isError: true,
      code: 'INVALID_ARGUMENT',
    });
  });
});

describe('dispatch', () => {
  it('an unknown tool is a result naming the tools', async () => {
    const { memory, call } = await setup();
    expect(await callUnchanged(memory, () => call('memory_read', {}))).toEqual({
      text: 'Unknown tool "memory_read". The tools are memory_open, memory_write, memory_drop.',
      isError: true,
      code: 'UNKNOWN_TOOL',
    });
  });

  it('an unexpected failure is reported without its details, and passed to onUnexpectedError', async () => {
    const broken = newMemory();
    const secret = new Error('disk /secret/path is full');
    (broken as { store: Store }).store.index = () => Promise.reject(secret);
    const seen: unknown[] = [];
    const handler = createToolHandler(broken, { onUnexpectedError: (error) => seen.push(error) });
    expect(await handler(CALLER, 'memory_open', {})).toEqual({
      text: 'memory_open failed because of an internal error. Try again; if it fails again, tell the user.',
      isError: true,
      code: 'INTERNAL',
    });
    expect(seen).toEqual([secret]);
  });
});
