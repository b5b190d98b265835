/**
 * The pure edit semantics of memory_write (DESIGN §2): every row of the write table,
 * every error with its exact message, the awkward bodies, and a property test against
 * a deliberately naive reference model.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  appendText,
  checkEntryCap,
  checkUserCap,
  cleanDescription,
  closestLine,
  type EditableEntry,
  findOccurrences,
  planEdit,
  removeUnique,
  replaceUnique,
  type WriteRequest,
} from '../../../src/memory/model/edit.js';
import type { EngramError } from '../../../src/memory/model/errors.js';
import { DEFAULT_POLICY } from '../../../src/memory/model/policy.js';
import { utf8Bytes } from '../../../src/memory/model/text.js';
import { expectEngramError, policyWith } from '../fixtures.js';

const NAME = 'areas/x';
const entry = (body: string, description = 'A project'): EditableEntry => ({ description, body });
const plan = (current: EditableEntry | undefined, request: Omit<WriteRequest, 'name'>, policy = DEFAULT_POLICY) =>
  planEdit(current, { name: NAME, ...request }, policy);

describe('planEdit: create (entry does not exist)', () => {
  it('creates with description and new, adding the final newline', () => {
    expect(plan(undefined, { description: 'A project', new: 'line one' })).toEqual({
      operation: 'create',
      description: 'A project',
      body: 'line one\n',
    });
  });

  it('keeps a final newline that is already there, and multi-line text as given', () => {
    expect(plan(undefined, { description: 'd', new: 'a\nb\n' }).body).toBe('a\nb\n');
  });

  it('creates an empty body from new = ""', () => {
    expect(plan(undefined, { description: 'd', new: '' }).body).toBe('');
  });

  it('requires a description', async () => {
    const message =
      'areas/x does not exist yet: to create it, pass description (one line on what it covers) together with new.';
    await expectEngramError(() => plan(undefined, { new: 'text' }), 'INVALID_ARGUMENT', message);
    await expectEngramError(() => plan(undefined, { new: 'text', description: ' \n\t ' }), 'INVALID_ARGUMENT', message);
  });

  it('refuses old on an entry that does not exist, saying how to create it', async () => {
    const message = 'areas/x not found. To create it, call memory_write with name, description and new (without old).';
    await expectEngramError(() => plan(undefined, { old: 'a', new: 'b' }), 'NOT_FOUND', message);
    await expectEngramError(() => plan(undefined, { old: 'a' }), 'NOT_FOUND', message);
    await expectEngramError(() => plan(undefined, { old: 'a', new: 'b', description: 'd' }), 'NOT_FOUND', message);
  });

  it('refuses a description alone on an entry that does not exist', async () => {
    await expectEngramError(() => plan(undefined, { description: 'd' }), 'NOT_FOUND', /To create it/);
  });
});

describe('planEdit: append (new alone)', () => {
  it.each([
    ['body with final newline', 'a\n', 'b', 'a\nb\n'],
    ['body without final newline', 'a', 'b', 'a\nb\n'],
    ['empty body', '', 'b', 'b\n'],
    ['new with its own final newline', 'a\n', 'b\n', 'a\nb\n'],
    ['several lines', 'a\n', 'b\nc', 'a\nb\nc\n'],
    ['blank lines in new are kept', 'a\n', '\nb', 'a\n\nb\n'],
  ])('%s', (_, body, text, expected) => {
    expect(plan(entry(body), { new: text })).toEqual({ operation: 'append', description: 'A project', body: expected });
  });

  it('appending nothing leaves the body as it is', () => {
    expect(plan(entry('a'), { new: '' }).body).toBe('a');
  });
});

describe('planEdit: replace (old and new)', () => {
  it('replaces the single occurrence', () => {
    expect(plan(entry('Target: 24 kHz.\nModel: small\n'), { old: '24 kHz', new: '48 kHz' })).toEqual({
      operation: 'replace',
      description: 'A project',
      body: 'Target: 48 kHz.\nModel: small\n',
    });
  });

  it.each([
    ['$&', 'x$&y'],
    ['$1', 'x$1y'],
    ['$$', 'x$$y'],
    ["$'", "x$'y"],
    ['$`', 'x$`y'],
    ['$<name>', 'x$<name>y'],
  ])('puts %s in literally', (_, replacement) => {
    expect(plan(entry('a b c\n'), { old: 'b', new: replacement }).body).toBe(`a ${replacement} c\n`);
  });

  it('replaces old at the very end of a body without final newline', () => {
    expect(plan(entry('one\ntwo'), { old: 'two', new: 'three' }).body).toBe('one\nthree');
  });

  it('replaces old that spans lines', () => {
    expect(plan(entry('a\nb\nc\nd\n'), { old: 'b\nc', new: 'B' }).body).toBe('a\nB\nd\n');
  });

  it('replaces by nothing when new is ""', () => {
    expect(plan(entry('keep drop keep\n'), { old: 'drop ', new: '' })).toMatchObject({
      operation: 'replace',
      body: 'keep keep\n',
    });
  });

  it('handles multi-byte characters on both sides', () => {
    expect(plan(entry('café 😀 naïve\n'), { old: '😀', new: 'é' }).body).toBe('café é naïve\n');
  });

  it('can replace the whole body, final newline included', () => {
    expect(plan(entry('all\n'), { old: 'all\n', new: 'new' }).body).toBe('new');
  });
});

describe('planEdit: remove (old alone)', () => {
  it('removes the text together with the newline right after it', () => {
    expect(plan(entry('a\nb\nc\n'), { old: 'b' })).toEqual({
      operation: 'remove',
      description: 'A project',
      body: 'a\nc\n',
    });
  });

  it('removes old at the very end of a body without final newline', () => {
    expect(plan(entry('a\nb'), { old: 'b' }).body).toBe('a\n');
  });

  it('removes the last line with its newline', () => {
    expect(plan(entry('a\nb\n'), { old: 'b' }).body).toBe('a\n');
  });

  it('removes old that spans lines, with the newline after it', () => {
    expect(plan(entry('a\nb\nc\nd\n'), { old: 'b\nc' }).body).toBe('a\nd\n');
  });

  it('removes only the text when no newline follows it directly', () => {
    expect(plan(entry('one two\n'), { old: 'one ' }).body).toBe('two\n');
  });

  it('takes the newline right after old even at the end of a line (the rule is literal)', () => {
    expect(plan(entry('keep this\nnext\n'), { old: ' this' }).body).toBe('keepnext\n');
  });

  it('removes just one newline after old', () => {
    expect(plan(entry('a\n\n\nb\n'), { old: 'a' }).body).toBe('\n\nb\n');
  });

  it('can empty the body', () => {
    expect(plan(entry('only\n'), { old: 'only' }).body).toBe('');
  });
});

describe('planEdit: description', () => {
  it('description alone updates it and keeps the body', () => {
    expect(plan(entry('body\n', 'old one'), { description: 'new one' })).toEqual({
      operation: 'describe',
      description: 'new one',
      body: 'body\n',
    });
  });

  it('replaces the old description on any write', () => {
    expect(plan(entry('a\n'), { new: 'b', description: 'd2' }).description).toBe('d2');
    expect(plan(entry('a\n'), { old: 'a', new: 'b', description: 'd2' }).description).toBe('d2');
    expect(plan(entry('a\n'), { old: 'a', description: 'd2' }).description).toBe('d2');
  });

  it('keeps the old description when none is given', () => {
    expect(plan(entry('a\n', 'kept'), { new: 'b' }).description).toBe('kept');
  });

  it('folds runs of white space, newlines included, to one space and trims', () => {
    expect(plan(undefined, { description: '  Two\r\n lines\tand   tabs \n', new: 'x' }).description).toBe(
      'Two lines and tabs',
    );
  });

  it('is refused with nothing else when there is nothing to do', async () => {
    const message =
      'Nothing to do: pass new to append, old and new to replace, old alone to remove, or description to update it.';
    await expectEngramError(() => plan(entry('a\n'), {}), 'NOTHING_TO_DO', message);
    await expectEngramError(() => plan(undefined, {}), 'NOTHING_TO_DO', message);
  });
});

describe('planEdit: old = "" is an error', () => {
  const message = 'old must not be empty: pass the exact text to replace or remove, or leave old out to append new.';
  it.each([
    ['with new', { old: '', new: 'x' }],
    ['alone', { old: '' }],
  ])('%s', async (_, request) => {
    await expectEngramError(() => plan(entry('a\n'), request), 'INVALID_ARGUMENT', message);
    await expectEngramError(() => plan(undefined, request), 'INVALID_ARGUMENT', message);
  });
});

describe('occurrences of old', () => {
  it('0 occurrences: quotes the closest line so the model can retry', async () => {
    const body = 'Name: QwenTTS\nTarget: 24 kHz.\nLicense: MIT\n';
    await expectEngramError(
      () => plan(entry(body), { old: 'Target: 22 kHz.', new: 'x' }),
      'NO_MATCH',
      'old text not found in areas/x. Closest line: "Target: 24 kHz." Copy the exact text from memory_open(["areas/x"]) and call again.',
    );
  });

  it('0 occurrences: cuts a long closest line at 200 characters, never inside a character', async () => {
    const error = await expectEngramError(() => plan(entry(`a${'😀'.repeat(300)}\n`), { old: '😀x' }), 'NO_MATCH');
    expect(error.message).toContain(`Closest line: "a${'😀'.repeat(199)}…" Copy`);
  });

  it('0 occurrences in an empty body: says how to add text', async () => {
    await expectEngramError(
      () => plan(entry(''), { old: 'x' }),
      'NO_MATCH',
      'old text not found in areas/x: its body is empty. To add text, call memory_write with name and new alone.',
    );
  });

  it('more than one: gives the count and the line numbers', async () => {
    const body = 'a\nTODO\nb\nc\nTODO\nd\ne\nf\nTODO\n';
    await expectEngramError(
      () => plan(entry(body), { old: 'TODO', new: 'done' }),
      'AMBIGUOUS',
      'old text occurs 3 times in areas/x (lines 2, 5, 9). Include more of the surrounding text so that it occurs exactly once.',
    );
  });

  it('counts overlapping occurrences ("aa" in "aaa" is 2)', async () => {
    expect(findOccurrences('aaa', 'aa')).toEqual([0, 1]);
    await expectEngramError(
      () => plan(entry('aaa'), { old: 'aa' }),
      'AMBIGUOUS',
      'old text occurs 2 times in areas/x (line 1). Include more of the surrounding text so that it occurs exactly once.',
    );
  });

  it('is case-sensitive and exact', async () => {
    await expectEngramError(() => plan(entry('Hello\n'), { old: 'hello', new: 'x' }), 'NO_MATCH');
  });
});

describe('findOccurrences', () => {
  it.each([
    ['abcabc', 'abc', [0, 3]],
    ['abc', 'd', []],
    ['abc', '', []],
    ['aaaa', 'aa', [0, 1, 2]],
    ['', 'a', []],
    ['é😀é', 'é', [0, 3]],
  ])('%j in %j', (haystack, needle, expected) => {
    expect(findOccurrences(haystack, needle)).toEqual(expected);
  });
});

describe('closestLine', () => {
  it('picks the most similar non-blank line', () => {
    expect(closestLine('alpha\n\nTarget: 24 kHz.\nbeta\n', 'Target: 22 kHz')).toBe('Target: 24 kHz.');
  });

  it('compares with the first non-blank line of a multi-line old', () => {
    expect(closestLine('one line\nsecond thing\n', '\nsecond thang\nwhatever')).toBe('second thing');
  });

  it('is undefined for a body without text', () => {
    expect(closestLine('', 'x')).toBeUndefined();
    expect(closestLine('\n  \n', 'x')).toBeUndefined();
  });
});

describe('appendText, replaceUnique, removeUnique', () => {
  it('appendText follows the append rule', () => {
    expect(appendText('', 'x')).toBe('x\n');
    expect(appendText('a', 'x')).toBe('a\nx\n');
    expect(appendText('a\n', 'x\n')).toBe('a\nx\n');
    expect(appendText('a', '')).toBe('a');
  });

  it('replaceUnique and removeUnique refuse 0 and many occurrences', async () => {
    await expectEngramError(() => replaceUnique(NAME, 'abc', 'z', 'y'), 'NO_MATCH');
    await expectEngramError(() => replaceUnique(NAME, 'abab', 'ab', 'y'), 'AMBIGUOUS');
    await expectEngramError(() => removeUnique(NAME, 'abc', 'z'), 'NO_MATCH');
    await expectEngramError(() => removeUnique(NAME, 'abab', 'ab'), 'AMBIGUOUS');
  });
});

describe('caps', () => {
  const capMessage = (size: string) =>
    `areas/x would be ${size} bytes; the cap is 16,384. ` +
    'Split the subject: move part of it to a new entry such as areas/x-more, then remove it here.';

  it('an entry may be exactly at the cap, in UTF-8 bytes', () => {
    expect(utf8Bytes('é')).toBe(2);
    expect(utf8Bytes('😀')).toBe(4);
    expect(plan(undefined, { description: 'd', new: `${'a'.repeat(16_383)}\n` }).body).toHaveLength(16_384);
    expect(() => checkEntryCap(NAME, 'é'.repeat(8_192), DEFAULT_POLICY)).not.toThrow();
  });

  it('refuses a body over the cap with its size, the cap and a split suggestion', async () => {
    await expectEngramError(
      () => checkEntryCap(NAME, 'x'.repeat(17_210), DEFAULT_POLICY),
      'TOO_LARGE',
      capMessage('17,210'),
    );
    await expectEngramError(
      () => checkEntryCap(NAME, 'é'.repeat(8_193), DEFAULT_POLICY),
      'TOO_LARGE',
      capMessage('16,386'),
    );
    await expectEngramError(
      () => checkEntryCap(NAME, '😀'.repeat(4_097), DEFAULT_POLICY),
      'TOO_LARGE',
      capMessage('16,388'),
    );
  });

  it('applies the cap to every kind of write, counting the added final newline', async () => {
    const full = `${'a'.repeat(16_383)}\n`;
    await expectEngramError(
      () => plan(undefined, { description: 'd', new: 'a'.repeat(16_384) }),
      'TOO_LARGE',
      capMessage('16,385'),
    );
    await expectEngramError(() => plan(entry(full), { new: 'b' }), 'TOO_LARGE', capMessage('16,386'));
    await expectEngramError(() => plan(entry(full), { old: 'a\n', new: 'éé' }), 'TOO_LARGE', capMessage('16,386'));
  });

  it('keeps the split suggestion a valid name for the longest slugs', () => {
    const name = `areas/${'s'.repeat(64)}`;
    const error = (() => {
      try {
        checkEntryCap(name, 'x'.repeat(20), policyWith({ entryCap: 10 }));
      } catch (caught) {
        return caught as EngramError;
      }
    })();
    expect(error?.message).toContain(`such as areas/${'s'.repeat(58)}-more,`);
  });

  it('refuses a user total over the per-user cap', async () => {
    await expectEngramError(
      () => checkUserCap(NAME, 4 * 1024 * 1024 + 1, DEFAULT_POLICY),
      'TOO_LARGE',
      'areas/x would bring this memory to 4,194,305 bytes (names, descriptions and bodies); the cap is 4,194,304. ' +
        'Make room first: shorten or drop entries that are no longer needed (memory_open() shows their sizes), then call again.',
    );
    expect(() => checkUserCap(NAME, 4 * 1024 * 1024, DEFAULT_POLICY)).not.toThrow();
  });

  it('caps the description at 200 characters, counted after folding, in characters', async () => {
    expect(cleanDescription(NAME, 'd'.repeat(200), DEFAULT_POLICY)).toHaveLength(200);
    expect(cleanDescription(NAME, `  ${'d'.repeat(100)}   \n\n ${'d'.repeat(99)}  `, DEFAULT_POLICY)).toHaveLength(200);
    expect(cleanDescription(NAME, '😀'.repeat(200), DEFAULT_POLICY)).toBe('😀'.repeat(200));
    await expectEngramError(
      () => plan(entry('a\n'), { description: 'é'.repeat(201) }),
      'TOO_LARGE',
      'description is 201 characters; the cap is 200. Shorten it to one line on what areas/x covers and call again.',
    );
  });
});

/** The simplest reading of DESIGN §2, written independently of the implementation. */
const reference = {
  count(body: string, old: string): number {
    let count = 0;
    for (let i = 0; i + old.length <= body.length; i++) if (body.startsWith(old, i)) count++;
    return count;
  },
  append(body: string, text: string): string {
    if (text === '') return body;
    const joined = body + (body !== '' && !body.endsWith('\n') ? '\n' : '') + text;
    return joined.endsWith('\n') ? joined : `${joined}\n`;
  },
  replace(body: string, old: string, text: string): string {
    return body.split(old).join(text);
  },
  remove(body: string, old: string): string {
    const [before = '', after = ''] = body.split(old);
    return before + (after.startsWith('\n') ? after.slice(1) : after);
  },
};

describe('property: planEdit agrees with the reference model', () => {
  const piece = fc.constantFrom('a', 'b', ' ', '\n', 'é', '😀', '$&', '$1');
  const text = fc.string({ unit: piece, maxLength: 12 });
  const needle = fc.string({ unit: piece, minLength: 1, maxLength: 3 });
  const params = { numRuns: 500 };

  it('append', () => {
    fc.assert(
      fc.property(text, text, (body, added) => {
        expect(plan(entry(body), { new: added }).body).toBe(reference.append(body, added));
      }),
      params,
    );
  });

  it('replace and remove succeed exactly when old occurs once, and then match the model', () => {
    fc.assert(
      fc.property(text, needle, text, fc.boolean(), (body, old, added, removing) => {
        const request = removing ? { old } : { old, new: added };
        const count = reference.count(body, old);
        if (count !== 1) {
          expect(() => plan(entry(body), request)).toThrow(count === 0 ? /not found/ : `occurs ${count} times`);
          return;
        }
        const expected = removing ? reference.remove(body, old) : reference.replace(body, old, added);
        expect(plan(entry(body), request).body).toBe(expected);
      }),
      params,
    );
  });
});

describe('NUL characters', () => {
  it.each(['new', 'old', 'description'] as const)('are refused in %s, on every backend alike', (field) => {
    const request = { name: 'topics/x', new: 'x', [field]: 'a\u0000b' };
    expect(() => planEdit({ description: 'd', body: 'a\u0000b\n' }, request, DEFAULT_POLICY)).toThrow(
      `${field} contains a NUL character (\\u0000), which memory cannot hold. Remove it and call again.`,
    );
  });
});
