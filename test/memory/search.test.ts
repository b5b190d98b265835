/**
 * The pure parts of search (memory/search.ts, memory/model/search-words.ts): what a word is and how
 * it folds, how a query becomes words and its bounds, how an entry ranks, and the
 * snippets — their window, cuts, one-line text and match places — whatever the store.
 */

import { describe, expect, it } from 'vitest';
import {
  distinctSearchText,
  foldWord,
  LONGEST_WORD,
  searchText,
  searchWords,
  wordsAt,
} from '../../src/memory/model/search-words.js';
import {
  parseSearch,
  SEARCH_DEFAULT_LIMIT,
  SEARCH_LIMIT_CAP,
  SNIPPET_LENGTH,
  searchHit,
  searchLimit,
  searchRank,
} from '../../src/memory/search.js';

const entry = (name: string, description: string, body: string) => ({ name, description, body, updated: 1 });

/** The first snippet of a hit on `body` for `terms`, and its first match. */
function firstOf(body: string, terms: string[]) {
  const [snippet] = searchHit(entry('a/b', 'x', body), terms).snippets;
  const [match] = snippet?.matches ?? [];
  if (!snippet || !match) throw new Error('no snippet with a match');
  return { text: snippet.text, start: match[0], end: match[1] };
}

/** A UTF-16 unit of a pair standing alone. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('search words', () => {
  it('are runs of letters and digits, folded to lower case, Latin letters without accents', () => {
    expect(searchWords('Été à Paris: CAFÉ-crème, naïve 42nd e\u0301te\u0301')).toEqual([
      'ete',
      'a',
      'paris',
      'cafe',
      'creme',
      'naive',
      '42nd',
      'ete',
    ]);
    expect(searchWords('example.com/docs a@b.org src/core_store.ts')).toEqual([
      'example',
      'com',
      'docs',
      'a',
      'b',
      'org',
      'src',
      'core',
      'store',
      'ts',
    ]);
    expect(searchWords('日本語 Ελληνικά Русский Ёлка')).toEqual(['日本語', 'ελληνικά', 'русский', 'ёлка']);
    expect(foldWord('İSTANBUL')).toBe('istanbul');
  });

  it('keep their places in the text as written', () => {
    expect(wordsAt('  Crème brûlée')).toEqual([
      { word: 'creme', start: 2, end: 7 },
      { word: 'brulee', start: 8, end: 14 },
    ]);
  });

  it('leave out words longer than LONGEST_WORD, and join for an index with spaces', () => {
    expect(searchWords(`a ${'x'.repeat(LONGEST_WORD + 1)} b ${'y'.repeat(LONGEST_WORD)}`)).toEqual([
      'a',
      'b',
      'y'.repeat(LONGEST_WORD),
    ]);
    expect(searchText('Hello, World!')).toBe('hello world');
  });

  it('are each written once for a PostgreSQL write, in the order they first appear', () => {
    expect(distinctSearchText('The cat, the CAT and the Café cafe.')).toBe('the cat and cafe');
    expect(distinctSearchText('')).toBe('');
  });
});

describe('parseSearch', () => {
  it('gives the distinct words of the query in order, keeping the last one last', () => {
    expect(parseSearch('Green TEA')).toEqual(['green', 'tea']);
    expect(parseSearch('tea green tea')).toEqual(['green', 'tea']);
    expect(parseSearch('a OR b" NEAR(')).toEqual(['a', 'or', 'b', 'near']);
  });

  it('refuses an empty query, one of more than 200 characters, one without words, one of more than 8 words', () => {
    expect(() => parseSearch('  ')).toThrow(/^the search is empty: give a word, or the start of one/);
    expect(() => parseSearch('x'.repeat(201))).toThrow(
      'the search is 201 characters long; at most 200 are searched: keep only the words you look for.',
    );
    expect(parseSearch('x'.repeat(200))).toEqual(['x'.repeat(200)]);
    expect(() => parseSearch('"*() -- !!')).toThrow(/^the search has no word to look for/);
    expect(() => parseSearch('a b c d e f g h i')).toThrow(
      'the search has 9 words; at most 8 are searched at once: keep the ones that matter.',
    );
    expect(parseSearch('a b c d e f g h a')).toHaveLength(8);
  });

  it('refuses with INVALID_ARGUMENT', () => {
    expect(() => parseSearch('')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});

describe('searchLimit', () => {
  it('is the default when not given, capped at 50, and refuses what is not a whole number from 1', () => {
    expect(searchLimit(undefined)).toBe(SEARCH_DEFAULT_LIMIT);
    expect(searchLimit(7)).toBe(7);
    expect(searchLimit(1_000)).toBe(SEARCH_LIMIT_CAP);
    for (const bad of [0, -3, 2.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => searchLimit(bad)).toThrow('the limit of a search is a whole number from 1 to 50.');
    }
  });
});

describe('searchRank', () => {
  it('is 0 with every word in the name, 1 in the description, 2 across fields, undefined otherwise', () => {
    const terms = parseSearch('green te');
    expect(searchRank(entry('topics/green-tea', 'x', 'y'), terms)).toBe(0);
    expect(searchRank(entry('topics/a', 'Green teas', 'y'), terms)).toBe(1);
    expect(searchRank(entry('topics/green', 'x', 'tea'), terms)).toBe(2);
    expect(searchRank(entry('topics/green', 'x', 'coffee'), terms)).toBeUndefined();
    expect(searchRank(entry('topics/te-green', 'x', 'y'), parseSearch('te green'))).toBe(0);
    expect(searchRank(entry('topics/tea-green', 'x', 'y'), parseSearch('te green'))).toBeUndefined();
  });
});

describe('searchHit', () => {
  it('has a snippet per field holding a word found, in field order, with the places of those words', () => {
    expect(searchHit(entry('topics/tea', 'About tea', 'No match here.\n'), ['tea'])).toEqual({
      name: 'topics/tea',
      description: 'About tea',
      updated: 1,
      snippets: [
        { field: 'name', text: 'topics/tea', matches: [[7, 10]] },
        { field: 'description', text: 'About tea', matches: [[6, 9]] },
      ],
    });
  });

  it('keeps a short body whole, as one line: control characters are spaces, in place, none at the ends', () => {
    const [snippet] = searchHit(entry('a/b', 'x', 'one\n\ttwo\r\nthree\u0000'), ['two']).snippets;
    expect(snippet).toEqual({ field: 'body', text: 'one  two  three', matches: [[5, 8]] });
  });

  it('cuts a long body around the first match, at spaces, marked with "…", within SNIPPET_LENGTH', () => {
    const { text, start, end } = firstOf(`${'word '.repeat(100)}target ${'more '.repeat(100)}`, ['target']);

    expect(text.length).toBeLessThanOrEqual(SNIPPET_LENGTH);
    expect(text).toMatch(/^…word word .* target more .* more…$/);
    expect(text.slice(start, end)).toBe('target');
    expect(start).toBeGreaterThanOrEqual(30);
    expect(start).toBeLessThanOrEqual(45);
  });

  it('keeps the end of a long body when the first match is near it, cut only at the start', () => {
    const { text } = firstOf(`${'word '.repeat(100)}target end`, ['target']);

    expect(text.startsWith('…')).toBe(true);
    expect(text.endsWith('target end')).toBe(true);
  });

  it('never splits a character of two UTF-16 units, and places matches after them right', () => {
    // Without spaces to cut at, both cuts would fall inside a pair (at units 163 and 320).
    const { text, start, end } = firstOf(`ab${'😀'.repeat(100)}!tea!${'😀'.repeat(100)}`, ['tea']);

    expect(text).not.toMatch(LONE_SURROGATE);
    expect(text.length).toBeLessThanOrEqual(SNIPPET_LENGTH);
    expect(text.slice(start, end)).toBe('tea');
  });

  it('lists every word found in the window, prefixes of the last term included, whole words of the others', () => {
    const [snippet] = searchHit(entry('a/b', 'x', 'Tea, teapot and steam; tea.'), parseSearch('and te')).snippets;
    const found = snippet?.matches.map(([start, end]) => snippet.text.slice(start, end));

    expect(found).toEqual(['Tea', 'teapot', 'and', 'tea']);
  });

  it('holds for any body: at most SNIPPET_LENGTH, whole characters, every range a word of the query', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pieces = [
      'tea',
      'Teapot',
      'TÉA',
      'green',
      ' ',
      '  ',
      '\n',
      '\t',
      '😀',
      'é',
      '-',
      '.',
      'x',
      'longerword',
      '日本',
    ];
    for (let round = 0; round < 300; round++) {
      const length = Math.floor(random() * 400);
      const body = Array.from({ length }, () => pieces[Math.floor(random() * pieces.length)]).join('');
      for (const snippet of searchHit(entry('a/b', 'x', body), parseSearch('green te')).snippets) {
        expect(snippet.text.length).toBeLessThanOrEqual(SNIPPET_LENGTH);
        expect(snippet.text).not.toMatch(LONE_SURROGATE);
        expect(snippet.text).not.toMatch(/\p{Cc}/u);
        for (const [start, end] of snippet.matches) {
          expect(['green', 'te'].some((term) => foldWord(snippet.text.slice(start, end)).startsWith(term))).toBe(true);
        }
      }
    }
  });
});
