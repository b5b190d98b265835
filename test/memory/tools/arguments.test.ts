/**
 * Tool arguments as models really send them: objects, JSON strings, nothing at all,
 * and the wrong types — each mistake an INVALID_ARGUMENT that says how to call again.
 */

import { describe, expect, it } from 'vitest';
import { parseDropArguments, parseOpenArguments, parseWriteArguments } from '../../../src/memory/tools/arguments.js';
import { expectEngramError } from '../fixtures.js';

const OPEN_EXAMPLE = 'For example {"names": ["areas/qwentts-cpp", "people/allozaur"]}, or {} for the index.';
const WRITE_EXAMPLE =
  'For example {"name": "topics/preferences", "description": "How the user likes to work", "new": "Prefers short answers."}.';

describe('accepted forms', () => {
  it.each([undefined, null, '', '  ', {}, '{}'])('memory_open with %j is the index', (raw) => {
    expect(parseOpenArguments(raw)).toEqual({ names: [] });
  });

  it('takes an object or a JSON string of one', () => {
    expect(parseOpenArguments({ names: ['a/b'] })).toEqual({ names: ['a/b'] });
    expect(parseOpenArguments('{"names": ["a/b"]}')).toEqual({ names: ['a/b'] });
    expect(parseOpenArguments({ names: null })).toEqual({ names: [] });
    expect(parseDropArguments('{"name": "a/b"}')).toEqual({ name: 'a/b' });
  });

  it('takes names given as one string as one name, and a JSON-encoded array string as that array', () => {
    expect(parseOpenArguments({ names: 'areas/x' })).toEqual({ names: ['areas/x'] });
    expect(parseOpenArguments({ names: '["a/b","c/d"]' })).toEqual({ names: ['a/b', 'c/d'] });
    expect(parseOpenArguments({ names: ' [ "a/b" ] ' })).toEqual({ names: ['a/b'] });
    expect(parseOpenArguments('{"names": "a/b"}')).toEqual({ names: ['a/b'] });
    // Not JSON after all: one name, which the Memory service then refuses as invalid.
    expect(parseOpenArguments({ names: '[a/b' })).toEqual({ names: ['[a/b'] });
  });

  it('keeps exactly the write arguments given, null counting as absent', () => {
    expect(parseWriteArguments({ name: 'a/b', new: 'x' })).toEqual({ name: 'a/b', new: 'x' });
    expect(parseWriteArguments({ name: 'a/b', old: 'x', new: '', description: 'd' })).toEqual({
      name: 'a/b',
      old: 'x',
      new: '',
      description: 'd',
    });
    expect(parseWriteArguments({ name: 'a/b', old: null, new: 'x', description: null })).toEqual({
      name: 'a/b',
      new: 'x',
    });
  });
});

describe('refused arguments', () => {
  it.each<[string, () => unknown, string]>([
    [
      'names not an array',
      () => parseOpenArguments({ names: 7 }),
      `memory_open: names must be an array of strings, not a number. ${OPEN_EXAMPLE}`,
    ],
    [
      'names a JSON string of an array with non-strings',
      () => parseOpenArguments({ names: '["areas/x", 3]' }),
      `memory_open: names must be an array of strings, not an array with non-strings. ${OPEN_EXAMPLE}`,
    ],
    [
      'names with a non-string',
      () => parseOpenArguments({ names: ['areas/x', 3] }),
      `memory_open: names must be an array of strings, not an array with non-strings. ${OPEN_EXAMPLE}`,
    ],
    [
      'new a number',
      () => parseWriteArguments({ name: 'areas/x', new: 42 }),
      `memory_write: new must be a string (the replacement text, or the lines to append), not a number. ${WRITE_EXAMPLE}`,
    ],
    [
      'old an array',
      () => parseWriteArguments({ name: 'areas/x', old: ['a'] }),
      `memory_write: old must be a string (the exact text to replace or remove), not an array. ${WRITE_EXAMPLE}`,
    ],
    [
      'description an object',
      () => parseWriteArguments({ name: 'areas/x', description: { text: 'd' } }),
      `memory_write: description must be a string (one line on what the entry covers), not an object. ${WRITE_EXAMPLE}`,
    ],
    [
      'name missing',
      () => parseWriteArguments({ new: 'x' }),
      `memory_write needs name, the entry name as <group>/<slug>. ${WRITE_EXAMPLE}`,
    ],
    [
      'name a boolean',
      () => parseDropArguments({ name: true }),
      'memory_drop: name must be a string (the entry name, <group>/<slug>), not a boolean. For example {"name": "areas/old-project"}.',
    ],
    [
      'drop without name',
      () => parseDropArguments(undefined),
      'memory_drop needs name, the entry name as <group>/<slug>. For example {"name": "areas/old-project"}.',
    ],
    [
      'an unknown key',
      () => parseWriteArguments({ name: 'areas/x', text: 'x', mode: 'append' }),
      'memory_write does not take "text", "mode". Its arguments are name, description, new, old; ' +
        'for example {"name": "topics/preferences", "description": "How the user likes to work", "new": "Prefers short answers."}.',
    ],
    [
      'invalid JSON',
      () => parseOpenArguments('{"names": ['),
      'memory_open arguments are not valid JSON. Send an object such as {"names": ["areas/qwentts-cpp", "people/allozaur"]}, or {} for the index.',
    ],
    [
      'a JSON string of an array',
      () => parseDropArguments('["areas/x"]'),
      'memory_drop arguments must be an object, not an array. For example {"name": "areas/old-project"}.',
    ],
    ['a number', () => parseOpenArguments(7), `memory_open arguments must be an object, not a number. ${OPEN_EXAMPLE}`],
    [
      'a JSON string with wrong types inside',
      () => parseWriteArguments('{"name": "areas/x", "new": 1}'),
      `memory_write: new must be a string (the replacement text, or the lines to append), not a number. ${WRITE_EXAMPLE}`,
    ],
  ])('%s', async (_, parse, message) => {
    await expectEngramError(parse, 'INVALID_ARGUMENT', message);
  });
});
