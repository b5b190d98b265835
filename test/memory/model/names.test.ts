/**
 * Entry names (DESIGN §2): normalisation, what is valid, the INVALID_NAME message the
 * model retries from, and READ_ONLY_GROUP for writes outside the configured groups.
 */

import { describe, expect, it } from 'vitest';
import { isValidName, normalizeName, parseName, parseWritableName } from '../../../src/memory/model/names.js';
import { DEFAULT_POLICY } from '../../../src/memory/model/policy.js';
import { expectEngramError, policyWith } from '../fixtures.js';

const slug64 = `a${'b'.repeat(62)}c`;

describe('normalizeName', () => {
  it('trims and lower-cases before anything else', () => {
    expect(normalizeName('  People/Allozaur \n')).toBe('people/allozaur');
    expect(parseName('People/Allozaur', DEFAULT_POLICY)).toBe('people/allozaur');
    expect(parseName('\tTOPICS/Preferences  ', DEFAULT_POLICY)).toBe('topics/preferences');
  });
});

describe('isValidName', () => {
  it.each([
    'people/allozaur',
    'areas/qwentts-cpp',
    'topics/a',
    'topics/0',
    'topics/v1.2_beta-3',
    'topics/a..b',
    `topics/${slug64}`,
    'notes/anything',
  ])('accepts %s', (name) => {
    expect(isValidName(name)).toBe(true);
  });

  it.each([
    ['no slash', 'allozaur'],
    ['two slashes', 'people/john/smith'],
    ['empty slug', 'people/'],
    ['empty group', '/john'],
    ['empty', ''],
    ['a space', 'people/john smith'],
    ['upper case (not normalised)', 'people/John'],
    ['a slug starting with -', 'people/-john'],
    ['a slug ending with .', 'people/john.'],
    ['a slug starting with _', 'people/_john'],
    ['a slug of 65 characters', `people/${slug64}x`],
    ['a non-ASCII letter', 'people/josé'],
    ['a group ending with -', 'people-/john'],
    ['other punctuation', 'people/john!'],
  ])('refuses %s', (_, name) => {
    expect(isValidName(name)).toBe(false);
  });
});

describe('parseName: INVALID_NAME', () => {
  it('says how a valid name looks, with an example built from the input', async () => {
    await expectEngramError(
      () => parseName('people/John Smith', DEFAULT_POLICY),
      'INVALID_NAME',
      '"people/John Smith" is not a valid name: use <group>/<slug>, the slug made of a-z 0-9 - . _ ' +
        '(for example people/john-smith). Groups you can write: areas, people, topics.',
    );
  });

  it.each([
    ['john', 'areas/john'],
    ['people/john/smith', 'people/john-smith'],
    ['people/-Jo!', 'people/jo'],
    ['nope/Jo Jo', 'areas/jo-jo'],
    ['', 'areas/example'],
    ['people/ü', 'people/example'],
  ])('%j suggests %s', async (raw, example) => {
    await expectEngramError(
      () => parseName(raw, DEFAULT_POLICY),
      'INVALID_NAME',
      new RegExp(`for example ${example}\\)`),
    );
  });

  it('keeps the example slug within 64 characters', async () => {
    const error = await expectEngramError(
      () => parseName(`topics/${'x'.repeat(70)} y`, DEFAULT_POLICY),
      'INVALID_NAME',
    );
    expect(error.message).toContain(`(for example topics/${'x'.repeat(64)})`);
  });

  it('lists the configured groups', async () => {
    const policy = policyWith({ groups: { work: 'the job', home: 'the house' } });
    await expectEngramError(
      () => parseName('x', policy),
      'INVALID_NAME',
      /\(for example work\/x\)\. Groups you can write: work, home\.$/,
    );
  });
});

describe('parseWritableName: READ_ONLY_GROUP', () => {
  it('allows the configured groups', () => {
    expect(parseWritableName('Areas/X', DEFAULT_POLICY)).toBe('areas/x');
  });

  it('refuses a write outside the configured groups, naming the ones that can be written', async () => {
    await expectEngramError(
      () => parseWritableName('Notes/Todo', DEFAULT_POLICY),
      'READ_ONLY_GROUP',
      'notes/todo is in group "notes", which cannot be written. Groups you can write: areas, people, topics ' +
        '(for example areas/todo).',
    );
  });

  it('does not take inherited object keys for groups', async () => {
    await expectEngramError(() => parseWritableName('constructor/x', DEFAULT_POLICY), 'READ_ONLY_GROUP');
    await expectEngramError(() => parseWritableName('tostring/x', DEFAULT_POLICY), 'READ_ONLY_GROUP');
  });

  it('follows configured groups, not the defaults', async () => {
    const policy = policyWith({ groups: { work: 'the job' } });
    expect(parseWritableName('work/x', policy)).toBe('work/x');
    await expectEngramError(
      () => parseWritableName('areas/x', policy),
      'READ_ONLY_GROUP',
      /Groups you can write: work /,
    );
  });

  it('other groups stay valid for reading and dropping', () => {
    expect(parseName('notes/todo', DEFAULT_POLICY)).toBe('notes/todo');
  });

  it('an invalid name is INVALID_NAME before any group check', async () => {
    await expectEngramError(() => parseWritableName('notes/a b', DEFAULT_POLICY), 'INVALID_NAME');
  });
});
