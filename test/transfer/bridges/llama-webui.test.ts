/**
 * The llama.cpp WebUI's memory export, as the WebUI writes it (format from ggml-org/llama.cpp,
 * commit 22249cf997b78f8e30257efe8bd3b367ea3bf69e, tools/ui/src/lib/services/memory.service.ts
 * and the settings' Export memory; see test/helpers/llama-webui.ts): each entry kept with
 * its name, description and body; odd names made slugs and reported, collisions renamed,
 * duplicates left out, entries over the cap refused or split; and every file that is not
 * such an export (cut short, another version, another shape) refused whole, saying where.
 */

import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../../src/memory/model/policy.js';
import { parseLlamaWebui } from '../../../src/transfer/bridges/llama-webui.js';
import { planDocument } from '../../../src/transfer/bridges/plan.js';
import { createTransfer } from '../../../src/transfer/transfer.js';
import { webuiMemoryExport } from '../../helpers/llama-webui.js';
import { CALLER, newMemory, seed, snapshot } from '../../memory/fixtures.js';
import { BINARY, files } from './fixtures.js';

const FILE = 'llama_memory_2026-12-03.json';
const parse = (text: string | Uint8Array, split = false) =>
  parseLlamaWebui(files({ [FILE]: text }), DEFAULT_POLICY, { split });

/** One entry as the WebUI stores and exports it. */
const stored = (name: string, description: string, body: string) => ({ body, description, name, updated: 1 });
const exportOf = (...entries: unknown[]) => JSON.stringify({ entries }, null, 2);

describe('parseLlamaWebui on an export made as the WebUI makes it', () => {
  it('keeps each entry: its name, its description, its body', () => {
    const text = webuiMemoryExport([
      { name: 'people/ada', description: 'Ada Lovelace,\n  mathematician', new_str: 'Wrote the first program.' },
      { name: 'areas/engram', description: 'The memory server', new_str: 'TypeScript, Node 20.\nThree tools.' },
      { name: 'people/ada', new_str: 'Born 1815.' },
      { name: 'topics/empty', description: 'Nothing yet' },
    ]);
    // What the WebUI saves: two-space JSON, entries in name order, {body, description, name, updated}.
    expect(text.split('\n').slice(0, 8)).toEqual([
      '{',
      '  "entries": [',
      '    {',
      '      "body": "TypeScript, Node 20.\\nThree tools.\\n",',
      '      "description": "The memory server",',
      '      "name": "areas/engram",',
      `      "updated": ${Date.UTC(2026, 11, 1) + 1}`,
      '    },',
    ]);
    const plan = parse(text);
    expect(plan.kind).toBe('llama-webui');
    expect(plan.entries).toEqual([
      { name: 'areas/engram', description: 'The memory server', body: 'TypeScript, Node 20.\nThree tools.\n' },
      {
        name: 'people/ada',
        description: 'Ada Lovelace, mathematician',
        body: 'Wrote the first program.\nBorn 1815.\n',
      },
      { name: 'topics/empty', description: 'Nothing yet', body: '' },
    ]);
    expect(plan.items).toEqual([
      { source: 'entry 1: "areas/engram"', names: ['areas/engram'], notes: [] },
      { source: 'entry 2: "people/ada"', names: ['people/ada'], notes: [] },
      { source: 'entry 3: "topics/empty"', names: ['topics/empty'], notes: [] },
    ]);
  });

  it('keeps a group of its own, for the import to skip unless --all-groups', async () => {
    const plan = parse(webuiMemoryExport([{ name: 'recipes/bread', description: 'Bread', new_str: 'Flour.' }]));
    expect(plan.entries.map((entry) => entry.name)).toEqual(['recipes/bread']);
    const memory = newMemory();
    const report = await createTransfer(memory).import(CALLER, planDocument(plan), { mode: 'merge', append: true });
    expect(report.created).toEqual([]);
    expect((await snapshot(memory)).entries).toEqual([]);
  });
});

describe('parseLlamaWebui', () => {
  it('makes names that are not slugs valid, and says so', () => {
    const plan = parse(
      exportOf(
        stored('People/Ada Lovelace', 'Ada', 'a\n'),
        stored('topics/-dash-', 'Dashes', 'b\n'),
        stored('topics/', 'No slug', 'c\n'),
        stored('areas/!!!', 'Nothing usable', 'd\n'),
      ),
    );
    expect(plan.entries.map((entry) => entry.name)).toEqual([
      'people/ada-lovelace',
      'topics/dash',
      'topics/entry',
      'areas/entry',
    ]);
    expect(plan.items.map((item) => item.notes)).toEqual([
      ['"Ada Lovelace" is not a valid slug: made ada-lovelace'],
      ['"-dash-" is not a valid slug: made dash'],
      ['"" is not a valid slug: made entry'],
      ['"!!!" is not a valid slug: made entry'],
    ]);
  });

  it('renames a collision and leaves out an exact duplicate, saying which entry holds the name', () => {
    const plan = parse(
      exportOf(
        stored('people/ada', 'Ada', 'a\n'),
        stored('people/ADA', 'Another Ada', 'b\n'),
        stored('people/ada', 'Ada', 'a\n'),
      ),
    );
    expect(plan.entries.map((entry) => entry.name)).toEqual(['people/ada', 'people/ada-2']);
    expect(plan.items[1]?.notes).toContain('people/ada is taken by entry 1: "people/ada": named people/ada-2');
    expect(plan.items[2]).toMatchObject({ problem: 'duplicate', names: [] });
  });

  it('describes an entry without a description by its name, and shortens a long one', () => {
    const plan = parse(exportOf(stored('topics/x', '   ', 'a\n'), stored('topics/y', 'y'.repeat(300), 'b\n')));
    expect(plan.entries.map((entry) => entry.description)).toEqual(['x', `${'y'.repeat(199)}…`]);
    expect(plan.items[0]?.notes).toEqual(['no description: described by its name']);
    expect(plan.items[1]?.notes).toEqual(['description shortened to 200 characters']);
  });

  it('refuses an entry over the entry cap (the WebUI allows 49,152 bytes), or splits it with --split', () => {
    const body = Array.from({ length: 600 }, (_, i) => `fact ${i} ${'x'.repeat(40)}\n`).join('');
    const text = webuiMemoryExport([{ name: 'topics/big', description: 'Big', new_str: body.trimEnd() }]);
    const refused = parse(text);
    expect(refused.entries).toEqual([]);
    expect(refused.items[0]).toMatchObject({ problem: 'too-large', names: ['topics/big'] });
    expect(refused.items[0]?.notes[0]).toMatch(/^29,\d{3} bytes is over the entry cap of 16,384 bytes/);
    const split = parse(text, true);
    expect(split.entries.map((entry) => [entry.name, entry.description])).toEqual([
      ['topics/big', 'Big (part 1 of 2)'],
      ['topics/big-2', 'Big (part 2 of 2)'],
    ]);
    expect(split.entries.map((entry) => entry.body).join('')).toBe(body);
  });

  it('appends to an entry that exists, unless it holds the text already', async () => {
    const memory = newMemory();
    await seed(memory, { 'people/ada': ['Ada', 'Met in 2024.\n'] });
    const plan = parse(webuiMemoryExport([{ name: 'people/ada', description: 'Ada L.', new_str: 'Likes tea' }]));
    const options = { mode: 'merge', append: true } as const;
    expect(await createTransfer(memory).import(CALLER, planDocument(plan), options)).toMatchObject({
      created: [],
      appended: ['people/ada'],
    });
    expect(await createTransfer(memory).import(CALLER, planDocument(plan), options)).toMatchObject({
      appended: [],
      unchanged: ['people/ada'],
    });
    expect((await snapshot(memory)).entries[0]).toMatchObject({
      description: 'Ada',
      body: 'Met in 2024.\nLikes tea\n',
    });
  });

  const GOOD = webuiMemoryExport([
    { name: 'people/ada', description: 'Ada', new_str: 'Wrote the first program.' },
    { name: 'topics/tea', description: 'Tea', new_str: 'Earl Grey.' },
  ]);

  it('refuses the file cut short at any point, saying so', () => {
    for (let length = 1; length < GOOD.length; length++) {
      expect(() => parse(GOOD.slice(0, length))).toThrow(
        /^llama_memory_2026-12-03\.json is not JSON \(.*\): the file may be cut short; nothing was imported\.$/,
      );
    }
  });

  it.each([
    ['a file that is not JSON', 'entries: []', /^llama_memory_2026-12-03\.json is not JSON \((?!.*cut short)/],
    ['a binary file', BINARY, /llama_memory_2026-12-03\.json is not UTF-8 text/],
    [
      'a list instead of an object',
      '[]',
      /is not a llama\.cpp WebUI memory export \(a JSON object with "entries"\); nothing was imported\.$/,
    ],
    [
      'a version this importer does not know',
      JSON.stringify({ version: 2, entries: [stored('people/ada', 'Ada', 'a\n')] }),
      /has "version": 2, which no llama\.cpp WebUI memory export known here has \(its export carries no version\); nothing was imported\.$/,
    ],
    [
      "Engram's own export",
      JSON.stringify({ format: 'engram-export', version: 1, entries: [] }),
      /is an Engram export: import it as one, not as another memory system's file; nothing was imported\.$/,
    ],
    [
      "the WebUI's settings export",
      JSON.stringify({ config: { memoryGroups: 'areas, people, topics' } }),
      /has no "entries" list: not a llama\.cpp WebUI memory export; nothing was imported\.$/,
    ],
    ['an empty export', exportOf(), /the file holds no entry \("entries" is empty\); nothing was imported\.$/],
    ['an entry that is not an object', exportOf('people/ada'), /json entry 1 is not a JSON object;/],
    [
      'an entry without a body',
      exportOf(stored('people/ada', 'Ada', 'a\n'), { name: 'topics/tea', description: 'Tea', updated: 1 }),
      /json entry 2: an entry needs a name, a description and a body \(strings\) and updated \(a time in milliseconds\);/,
    ],
    [
      'an entry without its time',
      exportOf({ name: 'topics/tea', description: 'Tea', body: 'x\n' }),
      /json entry 1: an entry needs a name, a description and a body/,
    ],
    [
      'a name without a group',
      exportOf(stored('Ada Lovelace', 'Ada', 'a\n')),
      /json entry 1: the name "Ada Lovelace" is not <group>\/<slug>; nothing was imported\.$/,
    ],
    [
      'a name with two slashes',
      exportOf(stored('areas/../evil', 'Evil', 'a\n')),
      /json entry 1: the name "areas\/\.\.\/evil" is not <group>\/<slug>;/,
    ],
  ])('refuses %s, importing nothing', (_, text, message) => {
    expect(() => parse(text)).toThrow(message);
  });
});
