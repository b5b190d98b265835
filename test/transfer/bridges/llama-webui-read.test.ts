/**
 * The llama.cpp WebUI export read a slice at a time (readLlamaWebui, what REST uses so that
 * a large file never holds the event loop) plans and refuses exactly as the whole-file parse
 * (parseLlamaWebui, what the CLI uses): same entries, same notes, same refusals, same words;
 * it pauses between slices, and a file of more entries than the cap is refused at the first
 * one over it, the rest never read.
 */

import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../../src/memory/model/policy.js';
import { parseLlamaWebui, readLlamaWebui } from '../../../src/transfer/bridges/llama-webui.js';
import type { ImportFile, ImportPlan } from '../../../src/transfer/bridges/plan.js';
import { webuiMemoryExport } from '../../helpers/llama-webui.js';
import { BINARY } from './fixtures.js';

const PATH = 'llama_memory_2026-12-03.json';
const stored = (name: string, description: string, body: string) => ({ body, description, name, updated: 1 });
const exportOf = (...entries: unknown[]) => JSON.stringify({ entries }, null, 2);
const fileOf = (text: string | Uint8Array): ImportFile =>
  typeof text === 'string' ? { path: PATH, text } : { path: PATH, bytes: text };

type Outcome = { plan: ImportPlan } | { error: { code: unknown; message: unknown; detail: unknown } };

const outcomeOf = (error: unknown): Outcome => {
  const { code, message, detail } = error as { code: unknown; message: unknown; detail: unknown };
  return { error: { code, message, detail } };
};

function whole(text: string | Uint8Array, split = false): Outcome {
  try {
    return { plan: parseLlamaWebui([fileOf(text)], DEFAULT_POLICY, { split }) };
  } catch (error) {
    return outcomeOf(error);
  }
}

async function sliced(text: string | Uint8Array, split = false): Promise<Outcome & { pauses: number }> {
  let pauses = 0;
  const pause = async () => {
    pauses++;
  };
  try {
    return { plan: await readLlamaWebui([fileOf(text)], DEFAULT_POLICY, { split }, pause), pauses };
  } catch (error) {
    return { ...outcomeOf(error), pauses };
  }
}

const GOOD = webuiMemoryExport([
  { name: 'people/ada', description: 'Ada Lovelace,\n  mathematician', new_str: 'Wrote the first program.' },
  { name: 'areas/engram', description: 'The memory server', new_str: 'TypeScript, Node 20.\nThree tools.' },
  { name: 'Odd Group/Odd Slug!', description: 'Odd', new_str: 'Made valid.' },
  { name: 'people/ada', new_str: 'Born 1815.' },
  { name: 'topics/unicode', description: 'Ünïcödé 🙂 notes', new_str: '日本語 — naïve café 👩‍👩‍👧' },
  { name: 'secret/x', description: 'A group of its own', new_str: 'x' },
]);

/** An export long enough for many slices: 400 entries of about 1 KB, collisions and duplicates among them. */
const LONG = exportOf(
  ...Array.from({ length: 400 }, (_, i) =>
    stored(`topics/n${i % 350}`, `Entry ${i % 380}`, `${'text 🙂 '.repeat(120)}${i % 380}\n`),
  ),
);

describe('readLlamaWebui, a slice at a time, as parseLlamaWebui whole', () => {
  it.each([
    ['an export as the WebUI makes it', GOOD],
    ['an export of many slices', LONG],
    ['an export with a byte order mark', `\uFEFF${GOOD}`],
    ['members after the entries', JSON.stringify({ entries: [stored('people/ada', 'Ada', 'a\n')], extra: [1] })],
    ['an entry over the entry cap', exportOf(stored('topics/big', 'Big', `${'x'.repeat(20_000)}\n`))],
  ])('plans %s the same', async (_, text) => {
    const expected = whole(text);
    expect('plan' in expected).toBe(true);
    const { pauses, ...outcome } = await sliced(text);
    expect(outcome).toEqual(expected);
    expect(pauses).toBe(Math.max(1, Math.ceil(text.length / (16 * 1024))));
  });

  it('splits as the whole-file parse splits', async () => {
    const text = exportOf(stored('topics/big', 'Big', `${'line\n'.repeat(8_000)}`));
    const { pauses: _, ...outcome } = await sliced(text, true);
    expect(outcome).toEqual(whole(text, true));
  });

  it('refuses the file cut short at any point, in the same words', async () => {
    for (let length = 1; length < GOOD.length; length += 7) {
      const { pauses: _, ...outcome } = await sliced(GOOD.slice(0, length));
      expect(outcome).toEqual(whole(GOOD.slice(0, length)));
    }
  });

  it.each([
    ['a file that is not JSON', 'entries: []'],
    ['a control character in a string', '{"entries": [{"name": "a/b\tc"}]}'],
    ['a file wrong after many slices', `${LONG.slice(0, -3)}x]}`],
    ['a binary file', BINARY],
    ['a NUL character after many slices', `${LONG.slice(0, -2)}\u0000}`],
    ['a list instead of an object', '[]'],
    ['a string', '"entries"'],
    ['a version', JSON.stringify({ version: { major: 2 }, entries: [stored('people/ada', 'Ada', 'a\n')] })],
    ['a version after the entries', JSON.stringify({ entries: [stored('people/ada', 'Ada', 'a\n')], version: 2 })],
    ["Engram's own export", JSON.stringify({ format: 'engram-export', version: 1, entries: [] })],
    [
      "Engram's own export with entries",
      JSON.stringify({ format: 'engram-export', version: 1, entries: [{ name: 'a/b', description: 'B', body: '' }] }),
    ],
    ["the WebUI's settings export", JSON.stringify({ config: { memoryGroups: 'areas, people, topics' } })],
    ['entries that are an object', JSON.stringify({ entries: { a: stored('people/ada', 'Ada', 'a\n') } })],
    ['an empty export', exportOf()],
    ['an entry that is not an object', exportOf('people/ada')],
    ['an entry without a body', exportOf(stored('people/ada', 'Ada', 'a\n'), { name: 'topics/tea', updated: 1 })],
    ['an entry without its time', exportOf({ name: 'topics/tea', description: 'Tea', body: 'x\n' })],
    ['an infinite time', '{"entries": [{"name": "a/b", "description": "", "body": "", "updated": 1e999}]}'],
    ['a name without a group', exportOf(stored('Ada Lovelace', 'Ada', 'a\n'))],
    [
      'more entries than the cap',
      exportOf(...Array.from({ length: 1_200 }, (_, i) => stored(`topics/n${i}`, 'N', 'n\n'))),
    ],
  ])('refuses %s in the same words', async (_, text) => {
    const expected = whole(text);
    expect('error' in expected).toBe(true);
    const { pauses: _pauses, ...outcome } = await sliced(text);
    expect(outcome).toEqual(expected);
  });

  it('refuses a file with "entries" twice as it reads it, rather than plan both arrays', async () => {
    const text = `{"entries": [${JSON.stringify(stored('people/ada', 'Ada', 'a\n'))}], "entries": [${JSON.stringify(stored('topics/tea', 'Tea', 't\n'))}]}`;
    const { pauses: _pauses, ...outcome } = await sliced(text);
    expect(outcome).toMatchObject({
      error: {
        code: 'INVALID_ARGUMENT',
        message: `${PATH} has "entries" twice, which no llama.cpp WebUI memory export has; nothing was imported.`,
      },
    });
  });

  it('refuses a file nested more than 64 levels deep as it reads it, holding no frame per level', async () => {
    const text = `{"entries": [${'['.repeat(1_000_000)}`;
    const before = process.memoryUsage().heapUsed;
    const outcome = await sliced(text);
    expect(outcome).toMatchObject({
      error: {
        code: 'INVALID_ARGUMENT',
        message: `${PATH} is JSON nested more than 64 levels deep, which no llama.cpp WebUI memory export is; nothing was imported.`,
      },
    });
    // A frame of some 250 bytes per level would be 250 MB here; refused at level 65, it is nothing.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(64 * 1024 * 1024);
    expect(outcome.pauses).toBeLessThan(3);
  });

  it('refuses a file over 1 MB that is not JSON without parsing it whole again: the streaming parser says why', async () => {
    // Valid until its last characters: JSON.parse of it all would hold the event loop as long as the slices avoid.
    const entries = Array.from({ length: 900 }, (_, i) => stored(`topics/n${i}`, 'N', `${'n'.repeat(1_200)}\n`));
    const text = `${exportOf(...entries).slice(0, -3)}x]}`;
    expect(text.length).toBeGreaterThan(1024 * 1024);
    const outcome = await sliced(text);
    expect(outcome).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } });
    expect('error' in outcome && outcome.error.message).toMatch(new RegExp(`^${PATH} is not JSON \\(.+\\)`));
    expect(whole(text)).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } });
    const cut = await sliced(text.slice(0, 1_100_000));
    expect('error' in cut && cut.error.message).toMatch(/is not JSON \(.+\): the file may be cut short/);
  });

  it('refuses a file of more entries than the cap at the first one over it, the rest never read', async () => {
    const entries = Array.from({ length: 20_000 }, (_, i) => stored(`topics/n${i}`, 'N', 'n\n'));
    const text = exportOf(...entries);
    const { pauses, ...outcome } = await sliced(text);
    expect(outcome).toEqual(whole(text));
    // 1,001 entries of some 100 bytes: a few slices, not the file's 140.
    expect(pauses).toBeLessThan(text.length / (16 * 1024) / 10);
  });
});
