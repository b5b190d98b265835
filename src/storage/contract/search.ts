/**
 * The search part of the Store contract (SearchStore, and the Memory service's search
 * over it), run against every backend by `describeStoreContract`: what is found and in
 * what order, that the index follows every write path in the same transaction (edit,
 * drop, undrop, purge, wipe, import, load), that no query can break it, and the exact
 * shape of a hit. Every backend folds case, and the accents of Latin letters (é is e).
 * Nothing here may know which backend it is testing.
 */

import { beforeEach, describe, expect, it } from 'vitest';
import { createMemory, type Memory } from '../../memory/memory.js';
import type { Caller } from '../../memory/model/caller.js';
import { EngramError } from '../../memory/model/errors.js';
import { foldWord } from '../../memory/model/search-words.js';
import type { Store } from '../../memory/port.js';
import { parseSearch, type SearchHit } from '../../memory/search.js';
import { createTransfer } from '../../transfer/transfer.js';
import { append, drop, type OpenStore, put, storesPerTest } from './setup.js';

const alice: Caller = { user: 'alice', label: 'search-test' };
const bob: Caller = { user: 'bob', label: 'search-test' };

export function describeSearchContract(label: string, open: OpenStore): void {
  describe(`Store search contract: ${label}`, () => {
    const { clock, rules, keep } = storesPerTest();
    let store: Store;
    let memory: Memory;

    beforeEach(async () => {
      store = await keep(open());
      memory = createMemory({ store, now: clock.now });
    });

    /** Writes the entry at the next millisecond, so that later writes are more recent. */
    async function write(name: string, description: string, body: string, caller = alice): Promise<void> {
      clock.time += 1;
      await store.mutate(caller, name, put(body, description), rules);
    }

    async function names(query: string, caller = alice): Promise<string[]> {
      return (await memory.search(caller, query)).map((hit) => hit.name);
    }

    /** Each matched range of each snippet, as the text it covers. */
    function matchedTexts(hits: readonly SearchHit[]): string[] {
      return hits.flatMap((hit) =>
        hit.snippets.flatMap((snippet) => snippet.matches.map(([start, end]) => snippet.text.slice(start, end))),
      );
    }

    describe('finds', () => {
      it('by a word of the name, the description or the body, as a hit of that exact shape', async () => {
        await write('projects/engram', 'A memory for assistants', 'Written in TypeScript.\n');
        await write('people/ada', 'Ada, who likes tea', 'She prefers green tea.\n');
        const updated = clock.time;

        expect(await memory.search(alice, 'green')).toEqual([
          {
            name: 'people/ada',
            description: 'Ada, who likes tea',
            updated,
            snippets: [{ field: 'body', text: 'She prefers green tea.', matches: [[12, 17]] }],
          },
        ]);
        expect(await names('engram')).toEqual(['projects/engram']);
        expect(await names('assistants')).toEqual(['projects/engram']);
        expect(await names('typescript')).toEqual(['projects/engram']);
        expect(await names('coffee')).toEqual([]);
      });

      it('an entry only when it holds every word, the words in any field', async () => {
        await write('people/ada', 'Ada', 'likes tea\n');
        await write('people/bob', 'Bob', 'likes coffee\n');

        expect(await names('ada tea')).toEqual(['people/ada']);
        expect(await names('tea likes')).toEqual(['people/ada']);
        expect(await names('ada coffee')).toEqual([]);
      });

      it('the last word as the start of a word, as one types, the others whole', async () => {
        await write('projects/engram', 'Memory', 'search as you type\n');

        for (const typed of ['e', 'en', 'eng', 'engr', 'engram'])
          expect(await names(typed)).toEqual(['projects/engram']);
        expect(await names('search ty')).toEqual(['projects/engram']);
        expect(await names('sea type')).toEqual([]);
        expect(await names('engrams')).toEqual([]);
      });

      it('whatever the case and the accents, of the text or of the query', async () => {
        await write('topics/paris', 'Été à Paris', 'Un CAFÉ crème, déjà.\n');

        for (const query of ['ete', 'ÉTÉ', 'Ete a paris', 'cafe', 'café', 'CAFE CREME', 'deja', 'DÉJÀ']) {
          expect(await names(query), query).toEqual(['topics/paris']);
        }
      });

      it('whatever the case of Cyrillic and Greek words, whose accents count', async () => {
        await write('topics/words', 'Русский ЯЗЫК', 'Ёлка, Άλφα\n');

        for (const query of ['русский', 'язык', 'ёлка', 'ЁЛКА', 'άλφα']) {
          expect(await names(query), query).toEqual(['topics/words']);
        }
        expect(await names('елка')).toEqual([]);
      });

      it('words split at punctuation: parts of names, addresses, paths and hyphenated words', async () => {
        await write('projects/engram-notes', 'See example.com/docs', 'mail ada@example.org, path src/core/store.ts\n');

        for (const query of ['engram', 'notes', 'projects', 'example', 'docs', 'ada', 'org', 'core', 'store ts']) {
          expect(await names(query), query).toEqual(['projects/engram-notes']);
        }
      });

      it("only the caller's own entries", async () => {
        await write('topics/tea', 'Tea', 'green\n', alice);
        await write('topics/tea', 'Tea', 'black\n', bob);

        expect(await names('tea', alice)).toHaveLength(1);
        expect(await names('green', bob)).toEqual([]);
        expect(await names('black', bob)).toEqual(['topics/tea']);
      });

      it('at most `limit` hits', async () => {
        for (let n = 0; n < 7; n++) await write(`topics/t${n}`, 'Tea', `tea ${n}\n`);

        expect(await memory.search(alice, 'tea', { limit: 3 })).toHaveLength(3);
        expect(await memory.search(alice, 'tea')).toHaveLength(7);
        expect(await store.search('alice', ['tea'], { limit: 5 })).toHaveLength(5);
      });
    });

    describe('ranks', () => {
      it('every word in the name first, then in the description, then the rest; each the latest first', async () => {
        await write('topics/body-old', 'Other', 'about tea\n');
        await write('topics/tea-old', 'Other', 'nothing\n');
        await write('topics/desc', 'All about tea', 'nothing\n');
        await write('topics/body-new', 'Other', 'more tea\n');
        await write('topics/tea-new', 'Other', 'nothing\n');

        expect(await names('tea')).toEqual([
          'topics/tea-new',
          'topics/tea-old',
          'topics/desc',
          'topics/body-new',
          'topics/body-old',
        ]);
      });

      it('by name in code-point order among entries updated at the same moment', async () => {
        for (const name of ['topics/b', 'topics/a', 'topics/c']) await store.mutate(alice, name, put('tea\n'), rules);

        expect(await names('tea')).toEqual(['topics/a', 'topics/b', 'topics/c']);
      });

      it('a name holding only some of the words as the rest', async () => {
        await write('topics/tea', 'Drinks', 'green\n');
        await write('topics/green-tea', 'Drinks', 'nothing\n');

        expect(await names('green tea')).toEqual(['topics/green-tea', 'topics/tea']);
      });
    });

    describe('follows every write in its transaction', () => {
      it('an edit: the old words no longer match, the new ones do', async () => {
        await write('topics/drink', 'Drink', 'coffee\n');
        await store.mutate(alice, 'topics/drink', put('tea\n', 'Beverage'), rules);

        expect(await names('coffee')).toEqual([]);
        expect(await names('drink')).toEqual(['topics/drink']);
        expect(await names('beverage tea')).toEqual(['topics/drink']);
        const [hit] = await memory.search(alice, 'tea');
        expect(hit?.description).toBe('Beverage');
      });

      it('an append: its words are found with the old ones, and a word already in the description still ranks there', async () => {
        await write('topics/tea', 'Green tea', 'sencha\n');
        await write('topics/other', 'Other', 'nothing\n');
        for (const line of ['matcha and green', 'gyokuro', 'sencha again']) {
          clock.time += 1;
          await store.mutate(alice, 'topics/other', append(line), rules);
        }

        expect(await names('matcha')).toEqual(['topics/other']);
        expect(await names('gyokuro')).toEqual(['topics/other']);
        expect(await names('sencha')).toEqual(['topics/other', 'topics/tea']);
        expect(await names('nothing')).toEqual(['topics/other']);
        // topics/tea holds "green" in its description, topics/other only in its body: the description ranks first.
        expect(await names('green')).toEqual(['topics/tea', 'topics/other']);
        expect(await names('other')).toEqual(['topics/other']);
      });

      it('an append to a body whose last line has no line break: no word runs on across the join', async () => {
        await store.mutate(alice, 'topics/drink', put('green', 'Drink'), rules);
        clock.time += 1;
        await store.mutate(alice, 'topics/drink', append('leaf'), rules);

        expect(await names('green')).toEqual(['topics/drink']);
        expect(await names('leaf')).toEqual(['topics/drink']);
        expect(await names('greenleaf')).toEqual([]);
      });

      it('after appends, an edit that removes a word or changes the description leaves the old words unfound', async () => {
        await write('topics/tea', 'Green tea', 'sencha\n');
        clock.time += 1;
        await store.mutate(alice, 'topics/tea', append('matcha'), rules);
        clock.time += 1;
        await store.mutate(alice, 'topics/tea', put('sencha\n', 'Green tea'), rules);

        expect(await names('matcha')).toEqual([]);
        expect(await names('sencha')).toEqual(['topics/tea']);

        clock.time += 1;
        await store.mutate(alice, 'topics/tea', append('hojicha', 'Roasted tea'), rules);
        expect(await names('green')).toEqual([]);
        expect(await names('roasted hojicha sencha')).toEqual(['topics/tea']);
      });

      it('a drop hides the entry, an undrop brings it back', async () => {
        await write('topics/tea', 'Tea', 'green\n');
        await store.mutate(alice, 'topics/tea', drop, rules);

        expect(await names('green')).toEqual([]);

        await store.undrop(alice, 'topics/tea', rules);
        expect(await names('green')).toEqual(['topics/tea']);
      });

      it('a new entry of a dropped name shows only its own words', async () => {
        await write('topics/tea', 'Tea', 'green\n');
        await store.mutate(alice, 'topics/tea', drop, rules);
        await write('topics/tea', 'Tea', 'black\n');

        expect(await names('green')).toEqual([]);
        expect(await names('black')).toEqual(['topics/tea']);
        expect(await names('tea')).toEqual(['topics/tea']);
      });

      it('a purge, of the trash or of a live entry, leaves nothing to find', async () => {
        await write('topics/dropped', 'Dropped', 'green\n');
        await write('topics/live', 'Live', 'green\n');
        await store.mutate(alice, 'topics/dropped', drop, rules);

        await store.purge('alice', 'topics/dropped', { includeLive: false });
        await store.purge('alice', 'topics/live', { includeLive: true });
        await store.purgeTrash(clock.time);

        expect(await names('green')).toEqual([]);
        await write('topics/again', 'Again', 'green\n');
        expect(await names('green')).toEqual(['topics/again']);
      });

      it('a wipe and an import (every entry at once)', async () => {
        await write('topics/a', 'A', 'green\n');
        await write('topics/b', 'B', 'green\n');

        await createTransfer(memory).wipe(alice);
        expect(await names('green')).toEqual([]);

        await store.mutateAll(
          alice,
          () => [{ name: 'topics/c', change: { kind: 'put', operation: 'import', description: 'C', body: 'green\n' } }],
          rules,
        );
        expect(await names('green')).toEqual(['topics/c']);
      });

      it('a load: what the store held before is gone, what was loaded is found', async () => {
        const source = await keep(open());
        await source.mutate(alice, 'topics/loaded', put('green tea\n', 'Loaded'), rules);
        await source.mutate(alice, 'topics/dropped', put('green tea\n', 'Dropped'), rules);
        await source.mutate(alice, 'topics/dropped', drop, rules);
        await write('topics/before', 'Before', 'green coffee\n');

        await store.load(await source.dump(), { replace: true });

        expect(await names('green')).toEqual(['topics/loaded']);
        expect(await names('coffee')).toEqual([]);
        await store.undrop(alice, 'topics/dropped', rules);
        expect(await names('green')).toEqual(['topics/dropped', 'topics/loaded']);
      });

      it('a refused write changes nothing', async () => {
        await write('topics/tea', 'Tea', 'green\n');
        const refuse = () => {
          throw new EngramError('TOO_LARGE', 'refused');
        };
        await expect(store.mutate(alice, 'topics/tea', refuse, rules)).rejects.toThrow('refused');

        expect(await names('green')).toEqual(['topics/tea']);
      });
    });

    describe('snippets', () => {
      it('point at the words of the query, in every field that holds one', async () => {
        await write('projects/tea-notes', 'Tea notes and TEA times', 'Green tea, black tea; teapots.\nMore Tea.\n');

        const hits = await memory.search(alice, 'tea');

        expect(hits[0]?.snippets.map((snippet) => snippet.field)).toEqual(['name', 'description', 'body']);
        expect(matchedTexts(hits)).toEqual(['tea', 'Tea', 'TEA', 'tea', 'tea', 'teapots', 'Tea']);
      });

      it('hold at most 160 characters of a long body, around the first match, cut at spaces with "…"', async () => {
        const before = 'lorem ipsum '.repeat(40);
        const after = ' dolor sit amet'.repeat(40);
        await write('topics/long', 'Long', `${before}needle${after}\nneedle again\n`);

        const [hit] = await memory.search(alice, 'needle');
        const body = hit?.snippets.find((snippet) => snippet.field === 'body');

        expect(body?.text.length).toBeLessThanOrEqual(160);
        expect(body?.text.startsWith('…')).toBe(true);
        expect(body?.text.endsWith('…')).toBe(true);
        expect(body?.text).toContain('ipsum needle dolor');
        expect(matchedTexts(hit ? [hit] : [])).toEqual(['needle']);
      });

      it('are one line of plain text: markup stays as written, new lines and tabs are spaces, none at the ends', async () => {
        await write('topics/html', 'Markup', '<b>bold</b>\n\t<script>alert(1)</script>\n');

        const [hit] = await memory.search(alice, 'script');

        expect(hit?.snippets).toEqual([
          {
            field: 'body',
            text: '<b>bold</b>  <script>alert(1)</script>',
            matches: [
              [14, 20],
              [31, 37],
            ],
          },
        ]);
      });

      it('match each range to a word of the query, folded', async () => {
        await write('topics/mix', 'Crème brûlée', 'CRÈME, creme and crémeux\n');

        const hits = await memory.search(alice, 'brulee cre');

        expect(hits).toHaveLength(1);
        const texts = matchedTexts(hits);
        expect(texts.map(foldWord)).toEqual(['creme', 'brulee', 'creme', 'creme', 'cremeux']);
      });
    });

    describe('refuses or answers every query, never breaks', () => {
      const hostile = [
        'a OR b"',
        'NEAR(',
        'NEAR(a b, 2)',
        '"',
        '""',
        "'",
        '*',
        'a*',
        '(a',
        'a)',
        'name:a',
        '{name}: a',
        '-a',
        '^a',
        'a AND NOT b',
        'a & b | !c',
        "a:* & 'b",
        '\\',
        '%_',
        'NOT',
        'a\u0000b',
        '\u{1F600} tea',
        'ø ß æ',
        'x'.repeat(200),
      ];

      it.each(hostile)('%j', async (query) => {
        await write('topics/a', 'A and b', 'a b c NEAR OR NOT name\n');
        try {
          const hits = await memory.search(alice, query);
          expect(Array.isArray(hits)).toBe(true);
        } catch (error) {
          expect(error).toBeInstanceOf(EngramError);
          expect((error as EngramError).code).toBe('INVALID_ARGUMENT');
        }
      });

      it('finds the words of FTS syntax as words', async () => {
        await write('topics/syntax', 'Operators', 'this OR that, NEAR the AND gate\n');

        for (const query of ['OR', 'near', 'and gate', 'NEAR(', 'that"', '(this OR that)', 'gate*']) {
          expect(await names(query), query).toEqual(['topics/syntax']);
        }
      });

      it('refuses an empty query, one without letters or digits, one of 10 KB, and too many words', async () => {
        for (const query of ['', '   ', '"*()', 'x'.repeat(10_240), 'a b c d e f g h i']) {
          await expect(memory.search(alice, query), JSON.stringify(query.slice(0, 20))).rejects.toMatchObject({
            code: 'INVALID_ARGUMENT',
          });
        }
      });

      it('refuses a limit that is not a whole number from 1, and reads a larger one as 50', async () => {
        for (let n = 0; n < 55; n++) await store.mutate(alice, `topics/t${n}`, put('tea\n'), rules);

        for (const limit of [0, -1, 1.5, Number.NaN]) {
          await expect(memory.search(alice, 'tea', { limit })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        }
        expect(await memory.search(alice, 'tea', { limit: 1000 })).toHaveLength(50);
      });

      it('takes terms with quotes and backslashes at the port without breaking', async () => {
        await write('topics/a', 'A', 'a\n');
        for (const terms of [['a"b'], ["a'b"], ['a\\'], ['"'], ['a', '*'], ...['NEAR(', 'a OR b"'].map(parseSearch)]) {
          expect(Array.isArray(await store.search('alice', terms, { limit: 5 }))).toBe(true);
        }
      });
    });
  });
}
