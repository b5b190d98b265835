/**
 * Possible duplicates (model/near-duplicates.ts): near names, descriptions and bodies are
 * found and unrelated entries are not; the similarity is symmetric, 1 for the same text,
 * near 0 for unrelated text; common words suggest nothing; the result does not depend on
 * the entries' order; and the work stays within its bounds on 10,000 entries however
 * alike they are — counted in candidates, visits and characters examined, not in time.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BODY_CLOSE,
  BODY_SAMPLE_CHARACTERS,
  compare,
  DESCRIPTION_CLOSE,
  DuplicateFinder,
  type EntryFeatures,
  entryFeatures,
  MAX_CANDIDATES,
  MAX_VISITS,
  NAME_CLOSE,
  nameWords,
  nearDuplicates,
  reasonsOf,
  scoreOf,
} from '../../../src/memory/model/near-duplicates.js';

const features = (name: string, description = 'x', body = '') => entryFeatures(name, description, body);

/** A text of `count` words drawn from a large vocabulary by a seeded generator: unrelated texts share few word pairs. */
function prose(seed: number, count: number): string {
  let state = seed >>> 0 || 1;
  const words: string[] = [];
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    words.push(`w${(state >>> 8) % 5_000}`);
  }
  return words.join(' ');
}

const word = fc.stringMatching(/^[a-z]{1,8}$/);
const text = fc.array(word, { minLength: 1, maxLength: 40 }).map((words) => words.join(' '));
const slug = fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/);
const entry = fc.record({
  group: fc.constantFrom('topics', 'people', 'projects'),
  slug,
  description: text,
  body: text,
});

describe('near duplicates: the similarity of two entries', () => {
  it('finds project/alpha and projects/alpha close by name, topics/a and topics/b not', () => {
    const near = compare(features('project/alpha'), features('projects/alpha'));
    expect(near.name).toBeGreaterThanOrEqual(NAME_CLOSE);
    expect(reasonsOf(near)).toContain('name');
    expect(compare(features('topics/a'), features('topics/b')).name).toBeLessThan(0.5);
    expect(compare(features('notes/helix-editor'), features('notes/helixEditor')).name).toBe(1);
    expect(compare(features('people/ana'), features('work/budget-2027')).name).toBeLessThan(0.2);
    expect(compare(features('notes/meeting-01'), features('notes/meeting-02')).name).toBeLessThan(NAME_CLOSE);
    expect(compare(features('notes/n22'), features('notes/n222')).name).toBeLessThan(NAME_CLOSE);
    expect(compare(features('notes/alpha'), features('notes/alpha-2')).name).toBeGreaterThanOrEqual(NAME_CLOSE);
  });

  it('splits names at / - _ . and where lower case turns upper', () => {
    expect(nameWords('projects/alpha-beta_gamma.delta')).toEqual(['projects', 'alpha', 'beta', 'gamma', 'delta']);
    expect(nameWords('helixEditor2')).toEqual(['helix', 'editor2']);
  });

  it('finds descriptions close in spite of a plural or a small word, not those sharing only common words', () => {
    const plural = compare(features('a/x', 'Coffee preferences'), features('b/y', 'Coffee preference'));
    expect(plural.description).toBeGreaterThanOrEqual(DESCRIPTION_CLOSE);
    const added = compare(features('a/x', 'Uses Helix editor'), features('b/y', 'Uses the Helix editor'));
    expect(added.description).toBeGreaterThanOrEqual(DESCRIPTION_CLOSE);
    const different = compare(features('a/x', 'Notes about the garden'), features('b/y', 'Notes about the budget'));
    expect(different.description).toBeLessThan(DESCRIPTION_CLOSE);
    expect(
      compare(
        features('a/x', 'Notes about the garden'),
        features('b/y', 'Notes about the budget'),
        new Set(['notes', 'about', 'the']),
      ).description,
    ).toBeLessThan(0.3);
  });

  it('finds a body close to itself with a few words changed, and unrelated bodies far apart', () => {
    const body = prose(7, 300);
    const edited = body
      .replace('w', 'changed ')
      .replace(/w(\d+) w/, 'x$1 w')
      .concat(' and a closing line');
    const near = compare(features('a/x', 'one', body), features('b/y', 'two', edited));
    expect(near.body).toBeGreaterThanOrEqual(BODY_CLOSE);
    expect(reasonsOf(near)).toEqual(['body']);
    expect(compare(features('a/x', 'one', prose(1, 300)), features('b/y', 'two', prose(2, 300))).body).toBeLessThan(
      0.1,
    );
  });

  it('reads only the first BODY_SAMPLE_CHARACTERS of a body', () => {
    const long = prose(3, 5_000);
    expect(long.length).toBeGreaterThan(BODY_SAMPLE_CHARACTERS);
    expect(features('a/x', 'd', long).examined).toBe(BODY_SAMPLE_CHARACTERS);
    expect(compare(features('a/x', 'd', long), features('b/y', 'e', `${long} more`)).body).toBe(1);
  });

  it('compares empty bodies and descriptions of only common words as nothing alike', () => {
    expect(compare(features('a/x', 'd', ''), features('b/y', 'e', '')).body).toBe(0);
    expect(compare(features('a/x', 'the'), features('b/y', 'the'), new Set(['the'])).description).toBe(0);
  });

  it('is symmetric, within 0 and 1, and 1 for the same description and body', () => {
    fc.assert(
      fc.property(entry, entry, (x, y) => {
        const a = features(`${x.group}/${x.slug}`, x.description, x.body);
        const b = features(`${y.group}/${y.slug}`, y.description, y.body);
        const forth = compare(a, b);
        expect(compare(b, a)).toEqual(forth);
        for (const value of [...Object.values(forth), scoreOf(forth)]) {
          expect(value).toBeGreaterThanOrEqual(0);
          expect(value).toBeLessThanOrEqual(1);
        }
        const twin = compare(a, features(`other/${x.slug}x`, x.description, x.body));
        expect(twin.description).toBe(1);
        expect(twin.body).toBe(1);
      }),
      { numRuns: 300 },
    );
  });

  it('finds nothing alike in entries whose words share no letter', () => {
    const words = (letters: RegExp) =>
      fc.array(fc.stringMatching(letters), { minLength: 1, maxLength: 30 }).map((list) => list.join(' '));
    const early = words(/^[a-m]{1,8}$/);
    const late = words(/^[n-z]{1,8}$/);
    fc.assert(
      fc.property(early, early, late, late, (name, text, otherName, otherText) => {
        const a = features(`abc/${name.replaceAll(' ', '-').slice(0, 60)}`, text, text);
        const b = features(`xyz/${otherName.replaceAll(' ', '-').slice(0, 60)}`, otherText, otherText);
        expect(compare(a, b)).toEqual({ name: 0, description: 0, body: 0 });
        expect(scoreOf(compare(a, b))).toBe(0);
      }),
      { numRuns: 200 },
    );
  });

  it('scores mostly by the closest field', () => {
    expect(scoreOf({ name: 1, description: 1, body: 1 })).toBe(1);
    expect(scoreOf({ name: 0, description: 0, body: 0 })).toBe(0);
    expect(scoreOf({ name: 0, description: 0, body: 0.9 })).toBeCloseTo(0.7);
  });
});

describe('near duplicates: the pairs listed', () => {
  it('never lists an entry as a pair of itself, even when two of its features share a slot', () => {
    // 8 and 9 are two features one slot apart (a slot is a feature without its two low bits).
    const crafted = (name: string): EntryFeatures => ({
      ...entryFeatures(name, 'Notes', 'Some text.'),
      sketch: Uint32Array.from([8, 9, 1_000_000, 2_000_000]),
    });
    const found = nearDuplicates([crafted('topics/a'), crafted('topics/b')], 10);
    expect(found.pairs.every((pair) => pair.a !== pair.b)).toBe(true);
    expect(found.pairs.map((pair) => [pair.a, pair.b])).toEqual([['topics/a', 'topics/b']]);
  });

  const memory: EntryFeatures[] = [
    features('projects/alpha', 'The alpha project', prose(11, 120)),
    features('project/alpha', 'Alpha: goals and people', prose(12, 120)),
    features('topics/coffee', 'Coffee preferences', 'Flat white, no sugar.'),
    features('people/barista', 'Coffee preference', 'Ask for oat milk.'),
    features('notes/editor', 'Editor settings', prose(13, 200)),
    features('notes/setup', 'Machine setup', `${prose(13, 200)} and one more line`),
    features('areas/garden', 'Garden', prose(14, 80)),
  ];

  it('lists the close pairs with their reasons, highest score first, unrelated entries left out', () => {
    const { pairs, truncated } = nearDuplicates(memory, 50);
    expect(truncated).toBe(false);
    expect(pairs.map((pair) => [pair.a, pair.b, pair.reasons])).toEqual([
      ['notes/editor', 'notes/setup', ['body']],
      ['project/alpha', 'projects/alpha', ['name']],
      ['people/barista', 'topics/coffee', ['description']],
    ]);
    const scores = pairs.map((pair) => pair.score);
    expect([...scores].sort((x, y) => y - x)).toEqual(scores);
  });

  it('lists at most `limit`, saying more were found', () => {
    const { pairs, truncated } = nearDuplicates(memory, 2);
    expect(pairs).toHaveLength(2);
    expect(truncated).toBe(true);
  });

  it('gives the same pairs whatever the entries’ order', () => {
    fc.assert(
      fc.property(fc.shuffledSubarray(memory, { minLength: memory.length }), (shuffled) => {
        expect(nearDuplicates(shuffled, 50)).toEqual(nearDuplicates(memory, 50));
      }),
      { numRuns: 50 },
    );
  });

  it('ignores words shared by many entries: 300 entries whose descriptions say "Notes about the …" are not pairs', () => {
    const many = Array.from({ length: 300 }, (_, i) =>
      features(`notes/n${i}`, `Notes about the ${prose(i + 1, 1)}`, prose(i + 1_000, 30)),
    );
    expect(nearDuplicates(many, 200).pairs).toEqual([]);
    const shared = many.map((item, i) => ({ ...item, name: `notes/${String.fromCharCode(97 + (i % 26))}${i}` }));
    expect(nearDuplicates(shared, 200).pairs).toEqual([]);
  });
});

describe('near duplicates: bounded on 10,000 entries', () => {
  /** Entries as alike as they come: one group, one template body, descriptions of the same few words. */
  function alike(count: number): EntryFeatures[] {
    const template = prose(99, 400);
    return Array.from({ length: count }, (_, i) =>
      features(
        `notes/meeting-${String(i).padStart(5, '0')}`,
        `Meeting notes ${i % 50}`,
        `${template}\n${prose(i + 1, 40)}`,
      ),
    );
  }

  it('keeps candidates, visits and characters examined within their bounds, and says the listing is cut', () => {
    const entries = alike(10_000);
    const examined = entries.reduce((sum, item) => sum + item.examined, 0);
    expect(examined).toBeLessThanOrEqual(10_000 * BODY_SAMPLE_CHARACTERS);
    const finder = new DuplicateFinder();
    for (const entry of entries) finder.add(entry);
    const steps = finder.search(200);
    let yields = 0;
    let step = steps.next();
    while (!step.done) {
      yields++;
      step = steps.next();
    }
    const { pairs, work, truncated } = step.value;
    expect(work.candidates).toBeLessThanOrEqual(MAX_CANDIDATES);
    expect(work.visits).toBeLessThanOrEqual(MAX_VISITS);
    expect(pairs.length).toBeLessThanOrEqual(200);
    expect(truncated).toBe(true);
    // The search stops at least once per 5,000 pairs visited and once per 5,000 scored, so a caller can let others run.
    expect(yields).toBeGreaterThanOrEqual(Math.floor(work.visits / 5_000) + Math.floor(work.candidates / 5_000));
    expect(step.value).toEqual(nearDuplicates(entries, 200));
  });

  it('refuses entries added out of name order (the order of a store’s index)', () => {
    const finder = new DuplicateFinder();
    finder.add(features('topics/b'));
    expect(() => finder.add(features('topics/a'))).toThrow('entries must be added by name');
  });

  it('finds the copy among 10,000 numbered entries: the rarest features are followed first', () => {
    const entries = Array.from({ length: 10_000 }, (_, i) =>
      features(`notes/entry-${i}`, `About ${prose(i + 7, 6)}`, prose(i + 20_000, 60)),
    );
    entries.push(features('notes/copy-of-42', 'A copy', prose(42 + 20_000, 60)));
    const { pairs, work } = nearDuplicates(entries, 50);
    expect(pairs[0]).toMatchObject({ a: 'notes/copy-of-42', b: 'notes/entry-42', reasons: ['body'] });
    expect(pairs[0]?.similarity.body).toBe(1);
    expect(work.candidates).toBeLessThanOrEqual(MAX_CANDIDATES);
    expect(work.visits).toBeLessThanOrEqual(MAX_VISITS);
  });
});
