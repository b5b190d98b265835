/**
 * The plan every bridge produces: names made valid slugs and reported, collisions renamed
 * and reported, duplicates left out, descriptions folded and shortened, bodies over the
 * entry cap refused or split at line ends, and the plan applied by the import in one go.
 */

import { describe, expect, it } from 'vitest';
import { isValidSegment } from '../../../src/memory/model/names.js';
import { DEFAULT_POLICY } from '../../../src/memory/model/policy.js';
import { buildPlan, type Draft, planDocument, slugify, splitBody, textOf } from '../../../src/transfer/bridges/plan.js';
import { runWhole } from '../../../src/transfer/bridges/steps.js';
import { BINARY } from './fixtures.js';

const draft = (slug: string, body = 'text\n', extra: Partial<Draft> = {}): Draft => ({
  source: `source ${slug}`,
  group: 'topics',
  slug,
  description: `about ${slug}`,
  body,
  ...extra,
});

describe('slugify', () => {
  it.each([
    ['John Smith!', 'john-smith'],
    ['José Müller', 'jose-muller'],
    ['--weird__', 'weird'],
    ['日本語', 'entry'],
    ['a'.repeat(80), 'a'.repeat(64)],
    ['ok.name_1', 'ok.name_1'],
  ])('%s -> %s', (raw, slug) => {
    expect(slugify(raw)).toBe(slug);
    expect(isValidSegment(slugify(raw))).toBe(true);
  });
});

describe('buildPlan', () => {
  it('keeps valid names as they are, with no notes', () => {
    const plan = buildPlan('test', [draft('ada')], DEFAULT_POLICY);
    expect(plan.entries).toEqual([{ name: 'topics/ada', description: 'about ada', body: 'text\n' }]);
    expect(plan.items).toEqual([{ source: 'source ada', names: ['topics/ada'], notes: [] }]);
  });

  it('makes names valid slugs and says so', () => {
    const plan = buildPlan('test', [draft('John Smith', 'x', { group: 'People' })], DEFAULT_POLICY);
    expect(plan.entries[0]?.name).toBe('people/john-smith');
    expect(plan.items[0]?.notes).toEqual(['"John Smith" is not a valid slug: made john-smith']);
  });

  it('renames a collision with -2 and reports who holds the name', () => {
    const plan = buildPlan('test', [draft('Ada', 'one\n'), draft('ada', 'two\n')], DEFAULT_POLICY);
    expect(plan.entries.map((entry) => entry.name)).toEqual(['topics/ada', 'topics/ada-2']);
    expect(plan.items[1]?.notes).toContain('topics/ada is taken by source Ada: named topics/ada-2');
  });

  it('leaves out an exact duplicate and says of what', () => {
    const plan = buildPlan('test', [draft('ada'), { ...draft('ada'), source: 'line 9' }], DEFAULT_POLICY);
    expect(plan.entries).toHaveLength(1);
    expect(plan.items[1]).toEqual({
      source: 'line 9',
      names: [],
      notes: ['duplicate of source ada: left out'],
      problem: 'duplicate',
    });
  });

  it('folds a description to one line and shortens one over the cap', () => {
    const plan = buildPlan(
      'test',
      [draft('a', 'x', { description: 'two\nlines' }), draft('b', 'x', { description: 'd'.repeat(300) })],
      DEFAULT_POLICY,
    );
    expect(plan.entries[0]?.description).toBe('two lines');
    expect([...(plan.entries[1]?.description ?? '')]).toHaveLength(200);
    expect(plan.entries[1]?.description.endsWith('…')).toBe(true);
    expect(plan.items[1]?.notes).toContain('description shortened to 200 characters');
  });

  it('describes an item by its slug when its description folds to nothing', () => {
    const plan = buildPlan('test', [draft('ada', 'x', { description: ' \n\u0007 ' })], DEFAULT_POLICY);
    expect(plan.entries[0]?.description).toBe('ada');
  });

  it('refuses a body over the entry cap without --split, and splits it at line ends with it', () => {
    const policy = { ...DEFAULT_POLICY, entryCap: 11 };
    const body = 'line one\nline two\nline three\n';
    const refused = buildPlan('test', [draft('big', body)], policy);
    expect(refused.entries).toEqual([]);
    expect(refused.items[0]?.problem).toBe('too-large');
    expect(refused.items[0]?.notes[0]).toBe('29 bytes is over the entry cap of 11 bytes');

    const split = buildPlan('test', [draft('big', body)], policy, { split: true });
    expect(split.entries).toEqual([
      { name: 'topics/big', description: 'about big (part 1 of 3)', body: 'line one\n' },
      { name: 'topics/big-2', description: 'about big (part 2 of 3)', body: 'line two\n' },
      { name: 'topics/big-3', description: 'about big (part 3 of 3)', body: 'line three\n' },
    ]);
    expect(split.items[0]?.notes).toEqual(['over the entry cap of 11 bytes: split in 3']);
  });

  it('gives the plan to the import as an export document', () => {
    const plan = buildPlan('test', [draft('ada')], DEFAULT_POLICY);
    expect(planDocument(plan)).toEqual({
      format: 'engram-export',
      version: 1,
      entries: [{ name: 'topics/ada', description: 'about ada', body: 'text\n' }],
    });
  });
});

describe('splitBody', () => {
  it('keeps every byte, each piece within the cap, cutting long lines between characters', () => {
    const body = `short\n${'é'.repeat(30)}\nend`;
    const pieces = runWhole(splitBody(body, 16));
    expect(pieces.join('')).toBe(body);
    for (const piece of pieces) expect(Buffer.byteLength(piece)).toBeLessThanOrEqual(16);
  });
});

describe('textOf', () => {
  it('refuses bytes that are not UTF-8 text', () => {
    expect(() => textOf({ path: 'photo.png', bytes: BINARY })).toThrow(
      'photo.png is not UTF-8 text (a binary file?); nothing was imported.',
    );
  });

  it('refuses text holding NUL, and drops a byte order mark', () => {
    expect(() => textOf({ path: 'a', bytes: new TextEncoder().encode('a\u0000b') })).toThrow(/not UTF-8 text/);
    expect(textOf({ path: 'a', bytes: new TextEncoder().encode('\uFEFFhello') })).toBe('hello');
  });
});
