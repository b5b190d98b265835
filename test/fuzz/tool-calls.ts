/**
 * Random tool calls as a careless or adversarial model might make them: right and wrong
 * tool names, arguments as objects, JSON strings, broken JSON or not objects at all,
 * every argument of every type, made-up keys, unicode, and strings right at the caps.
 */

import fc from 'fast-check';
import { DEFAULT_POLICY } from '../../src/memory/model/policy.js';

export interface ToolCall {
  readonly tool: string;
  readonly args: unknown;
}

const ENTRY_CAP = DEFAULT_POLICY.entryCap;
const DESCRIPTION_CAP = DEFAULT_POLICY.descriptionCap;

const toolName = fc.oneof(
  { arbitrary: fc.constant('memory_write'), weight: 8 },
  { arbitrary: fc.constant('memory_open'), weight: 4 },
  { arbitrary: fc.constant('memory_drop'), weight: 2 },
  {
    arbitrary: fc.constantFrom('memory_read', 'MEMORY_OPEN', ' memory_open', '', 'memory_write\n', '__proto__'),
    weight: 1,
  },
  { arbitrary: fc.string({ maxLength: 12 }), weight: 1 },
);

/** Few names, so calls keep meeting the same entries. */
const validName = fc.constantFrom('topics/a', 'Topics/A', ' people/bob\n', 'areas/x.y_z', `areas/${'a'.repeat(64)}`);

/** Mostly valid names; some malformed, in a read-only group, or anything at all. */
const entryName = fc.oneof(
  { arbitrary: validName, weight: 8 },
  {
    arbitrary: fc.constantFrom(
      'topics/',
      'other/thing',
      'a/b/c',
      'people/John Smith',
      '/x',
      'topics/-a',
      `areas/${'a'.repeat(65)}`,
      'topics/ä',
      'topics/a\u0000',
    ),
    weight: 2,
  },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }), weight: 1 },
);

/** Pieces that make lines, needles and trouble: newlines of every kind, NUL, a lone surrogate. */
const piece = fc.constantFrom('alpha', 'beta', ' ', '\n', '\r\n', '\r', 'é', '😀', '\u0000', '\ud800', '$&', '"', '\\');

const text = fc.oneof(
  { arbitrary: fc.string({ unit: piece, maxLength: 12 }), weight: 8 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 30 }), weight: 1 },
  // Right at the entry cap: ASCII, and four bytes per character.
  { arbitrary: fc.integer({ min: -2, max: 2 }).map((d) => 'x'.repeat(ENTRY_CAP + d)), weight: 1 },
  { arbitrary: fc.integer({ min: -1, max: 1 }).map((d) => '😀'.repeat(ENTRY_CAP / 4 + d)), weight: 1 },
);

const descriptionText = fc.oneof(
  { arbitrary: fc.string({ unit: piece, maxLength: 12 }), weight: 6 },
  { arbitrary: fc.constantFrom('', ' ', '\n\t'), weight: 1 },
  { arbitrary: fc.integer({ min: -1, max: 1 }).map((d) => 'd'.repeat(DESCRIPTION_CAP + d)), weight: 1 },
  { arbitrary: fc.integer({ min: -1, max: 1 }).map((d) => `  ${'é'.repeat(DESCRIPTION_CAP + d)}\n`), weight: 1 },
);

/** Anything a JSON argument could be, and a few things it could not. */
const wrongType = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 }), { maxKeys: 2 }),
);

/** Mostly the right type, now and then any other. */
const argument = (right: fc.Arbitrary<unknown>) =>
  fc.oneof({ arbitrary: right, weight: 15 }, { arbitrary: wrongType, weight: 1 });

/** Left out one time in `1 / freq`. */
const optional = (arbitrary: fc.Arbitrary<unknown>, freq = 2) => fc.option(arbitrary, { nil: undefined, freq });

/** Now and then, keys the tool does not take (or takes, for another tool). */
const extraKeys = fc.oneof(
  { arbitrary: fc.constant({}), weight: 10 },
  {
    arbitrary: fc.dictionary(fc.constantFrom('names', 'name', 'text', 'append', 'constructor', 'toString'), wrongType, {
      minKeys: 1,
      maxKeys: 2,
    }),
    weight: 1,
  },
);

/** Writes that could well succeed: create, append, replace and remove of a common piece, describe. */
const commonPiece = fc.constantFrom('alpha', 'beta', 'é', '😀\n', 'alpha\r\nbeta');
const plausibleWrite = fc.oneof(
  { arbitrary: fc.record({ name: validName, description: descriptionText, new: text }), weight: 6 },
  { arbitrary: fc.record({ name: validName, new: text }), weight: 2 },
  { arbitrary: fc.record({ name: validName, old: commonPiece, new: text }), weight: 2 },
  { arbitrary: fc.record({ name: validName, old: commonPiece }), weight: 1 },
  { arbitrary: fc.record({ name: validName, description: descriptionText }), weight: 1 },
);

const writeArguments = fc.oneof(
  { arbitrary: plausibleWrite, weight: 2 },
  {
    arbitrary: fc.record({
      name: optional(argument(entryName), 12),
      description: optional(argument(descriptionText)),
      new: optional(argument(text)),
      old: optional(argument(text)),
    }),
    weight: 1,
  },
);

const openArguments = fc.record({
  names: optional(
    argument(
      fc.oneof(
        { arbitrary: fc.array(entryName, { maxLength: 4 }), weight: 8 },
        { arbitrary: fc.array(fc.constantFrom('topics/a', 'people/bob'), { minLength: 49, maxLength: 52 }), weight: 1 },
        { arbitrary: fc.array(fc.oneof(entryName, wrongType), { minLength: 1, maxLength: 3 }), weight: 1 },
      ),
    ),
    4,
  ),
});

const dropArguments = fc.record({ name: optional(argument(entryName), 12) });

/** An arguments object (with made-up keys now and then), sent as is or as JSON text, or broken. */
const argumentsFor = (shape: fc.Arbitrary<Record<string, unknown>>) =>
  fc.oneof(
    {
      arbitrary: fc.tuple(shape, extraKeys, fc.boolean()).map(([args, extra, asJson]) => {
        const merged = { ...args, ...extra };
        return asJson ? JSON.stringify(merged) : merged;
      }),
      weight: 12,
    },
    {
      arbitrary: fc.constantFrom<unknown>(
        undefined,
        null,
        '',
        '{',
        '[]',
        '"names"',
        '{"__proto__": {"name": "topics/a"}}',
        42,
        ['topics/a'],
      ),
      weight: 1,
    },
  );

const argumentsByTool = new Map<string, fc.Arbitrary<unknown>>([
  ['memory_open', argumentsFor(openArguments)],
  ['memory_write', argumentsFor(writeArguments)],
  ['memory_drop', argumentsFor(dropArguments)],
]);
const anyArguments = fc.oneof(...argumentsByTool.values());

export const toolCall: fc.Arbitrary<ToolCall> = toolName.chain((tool) =>
  (argumentsByTool.get(tool) ?? anyArguments).map((args) => ({ tool, args })),
);
