/**
 * The MCP memory server's JSONL (read from a file the real server wrote in
 * server-memory-written.test.ts): entities to groups by type (and --map), observations
 * and relations as lines; names made slugs, collisions and duplicates reported; every
 * malformed file refused with the line that is wrong, so nothing broken is imported.
 */

import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../../src/memory/model/policy.js';
import { planDocument } from '../../../src/transfer/bridges/plan.js';
import { parseServerMemory } from '../../../src/transfer/bridges/server-memory.js';
import { createTransfer } from '../../../src/transfer/transfer.js';
import { CALLER, newMemory, seed, snapshot } from '../../memory/fixtures.js';
import { BINARY, files } from './fixtures.js';

const line = (record: unknown) => `${JSON.stringify(record)}\n`;
const entity = (name: string, entityType: string, observations: string[]) =>
  line({ type: 'entity', name, entityType, observations });
const parse = (text: string | Uint8Array, map?: Record<string, string>) =>
  parseServerMemory(files({ 'memory.jsonl': text }), DEFAULT_POLICY, map ? { map } : {});

describe('parseServerMemory', () => {
  it('maps entity types to groups as --map says, over the defaults', () => {
    const plan = parse(`${entity('acme', 'Company', ['x'])}${entity('bob', 'person', ['y'])}`, {
      company: 'areas',
      person: 'topics',
    });
    expect(plan.entries.map((entry) => entry.name)).toEqual(['areas/acme', 'topics/bob']);
  });

  it('refuses a --map to a group the memory does not have', () => {
    expect(() => parse(entity('a', 'x', []), { x: 'nowhere' })).toThrow(
      '--map x=nowhere: "nowhere" is not a group of this memory (groups: areas, people, topics); nothing was imported.',
    );
  });

  it('renames a collision and leaves out an exact duplicate, saying which line holds the name', () => {
    const plan = parse(
      `${entity('Ada', 'person', ['a'])}${entity('ada', 'person', ['b'])}${entity('Ada', 'person', ['a'])}`,
    );
    expect(plan.entries.map((entry) => entry.name)).toEqual(['people/ada', 'people/ada-2']);
    expect(plan.items[1]?.notes).toContain('people/ada is taken by line 1: entity "Ada" (person): named people/ada-2');
    expect(plan.items[2]?.problem).toBe('duplicate');
  });

  it('reports a relation from an entity the file does not have', () => {
    const plan = parse(
      `${entity('a', 'x', [])}${line({ type: 'relation', from: 'ghost', to: 'a', relationType: 'knows' })}`,
    );
    expect(plan.items.at(-1)).toMatchObject({
      problem: 'not-an-entry',
      notes: ['the file has no entity named "ghost": left out'],
    });
  });

  it('reports an entity over the entry cap, or splits it with --split', () => {
    const big = entity(
      'big',
      'topic',
      Array.from({ length: 400 }, (_, i) => `observation ${i} ${'x'.repeat(40)}`),
    );
    expect(parse(big).items[0]?.problem).toBe('too-large');
    const split = parseServerMemory(files({ 'memory.jsonl': big }), DEFAULT_POLICY, { split: true });
    expect(split.entries.map((entry) => entry.name)).toEqual(['topics/big', 'topics/big-2']);
  });

  it('appends to an entry that exists, unless it holds the text already', async () => {
    const memory = newMemory();
    await seed(memory, { 'people/ada': ['Ada', 'Met in 2024.\n'] });
    const plan = parse(entity('ada', 'person', ['Likes tea']));
    const options = { mode: 'merge', append: true } as const;
    const first = await createTransfer(memory).import(CALLER, planDocument(plan), options);
    expect(first).toMatchObject({ created: [], appended: ['people/ada'], conflicts: [] });
    const again = await createTransfer(memory).import(CALLER, planDocument(plan), options);
    expect(again).toMatchObject({ appended: [], unchanged: ['people/ada'] });
    const { entries } = await snapshot(memory);
    expect(entries[0]).toMatchObject({ description: 'Ada', body: 'Met in 2024.\nLikes tea\n' });
  });

  it('imports nothing when the plan would take the memory past its entry cap', async () => {
    const memory = newMemory({ maxEntries: 2 });
    await seed(memory, { 'people/ada': ['Ada', 'Met in 2024.\n'] });
    const before = await snapshot(memory);
    const plan = parse(`${entity('b', 'x', ['1'])}${entity('c', 'x', ['2'])}`);
    await expect(
      createTransfer(memory).import(CALLER, planDocument(plan), { mode: 'merge', append: true }),
    ).rejects.toThrow(/would make 3 entries in this memory; the cap is 2/);
    expect(await snapshot(memory)).toEqual(before);
  });

  it.each([
    [
      'a truncated last line',
      `${entity('a', 'x', [])}{"type":"entity","name":"b`,
      /^memory.jsonl line 2 is not JSON \(.*\): the file may be cut short; nothing was imported.$/,
    ],
    ['a line that is not JSON', `not json\n${entity('a', 'x', [])}`, /^memory.jsonl line 1 is not JSON \(/],
    ['a line that is not an object', `[1,2]\n`, /^memory.jsonl line 1 is not a JSON object;/],
    [
      'an entity without observations',
      line({ type: 'entity', name: 'a', entityType: 'x' }),
      /line 1: an entity needs a name, an entityType and observations/,
    ],
    [
      'a relation without relationType',
      `${entity('a', 'x', [])}${line({ type: 'relation', from: 'a', to: 'b' })}`,
      /line 2: a relation needs from, to and relationType/,
    ],
    ['an unknown type', line({ type: 'note' }), /line 1: type "note" is neither "entity" nor "relation"/],
    ['no entity at all', '\n\n', /the file holds no entity/],
    ['a binary file', BINARY, /memory.jsonl is not UTF-8 text/],
  ])('refuses %s', (_, text, message) => {
    expect(() => parse(text)).toThrow(message);
  });
});
