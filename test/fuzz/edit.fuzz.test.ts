/**
 * Fuzzing the pure edit semantics (src/memory/model/edit.ts) against a reference model: the
 * write table of DESIGN §2 read as literally and naively as possible, written without
 * looking at the implementation. Random bodies, needles cut from them, descriptions,
 * caps and unicode: planEdit must succeed with exactly the model's result, or refuse
 * with one of the errors the model says apply — and say why in its message.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  appendText,
  closestLine,
  type EditableEntry,
  findOccurrences,
  lineNumbersAt,
  planEdit,
  removeUnique,
  replaceUnique,
  type WriteRequest,
} from '../../src/memory/model/edit.js';
import { EngramError } from '../../src/memory/model/errors.js';
import { DEFAULT_POLICY, type Policy } from '../../src/memory/model/policy.js';

const NAME = 'areas/fuzz';
const RUNS = { numRuns: 1_000 };

// ---------------------------------------------------------------------------------------
// The reference model.

type Operation = 'create' | 'append' | 'replace' | 'remove' | 'describe';
type ModelOutcome =
  | { readonly ok: { operation: Operation; description: string; body: string } }
  | { readonly refused: ReadonlySet<string> };

const model = {
  /** Start offsets of every occurrence, overlapping ones included, by trying each offset. */
  occurrences(body: string, old: string): number[] {
    const found: number[] = [];
    for (let i = 0; i + old.length <= body.length; i++) if (body.slice(i, i + old.length) === old) found.push(i);
    return found;
  },
  line(body: string, offset: number): number {
    return body.slice(0, offset).split('\n').length;
  },
  withFinalNewline(text: string): string {
    return text === '' || text[text.length - 1] === '\n' ? text : `${text}\n`;
  },
  append(body: string, text: string): string {
    if (text === '') return body;
    const separator = body !== '' && body[body.length - 1] !== '\n' ? '\n' : '';
    return model.withFinalNewline(body + separator + text);
  },
  /** One line: every white-space character becomes a space, runs fold to one, ends trimmed. */
  fold(raw: string): string {
    const spaced = [...raw].map((ch) => (/\s/u.test(ch) ? ' ' : ch)).join('');
    let folded = '';
    for (const ch of spaced) if (!(ch === ' ' && folded.endsWith(' '))) folded += ch;
    return folded.replace(/^ /, '').replace(/ $/, '');
  },
  bytes(text: string): number {
    return Buffer.byteLength(text, 'utf8');
  },

  write(current: EditableEntry | undefined, request: Omit<WriteRequest, 'name'>, policy: Policy): ModelOutcome {
    const refused = new Set<string>();
    const { old, new: text } = request;
    const description = request.description === undefined ? undefined : model.fold(request.description);
    if (old === '') refused.add('INVALID_ARGUMENT');
    if (description !== undefined && [...description].length > policy.descriptionCap) refused.add('TOO_LARGE');
    if (old === undefined && text === undefined && description === undefined) refused.add('NOTHING_TO_DO');

    let operation: Operation;
    let body: string;
    if (current === undefined) {
      operation = 'create';
      body = model.withFinalNewline(text ?? '');
      if (old !== undefined || text === undefined) refused.add('NOT_FOUND');
      else if (!description) refused.add('INVALID_ARGUMENT');
    } else if (description === '') {
      // A description that folds to nothing would leave the entry as it was while claiming success.
      operation = 'describe';
      body = current.body;
      refused.add('INVALID_ARGUMENT');
    } else if (old === undefined) {
      operation = text === undefined ? 'describe' : 'append';
      body = text === undefined ? current.body : model.append(current.body, text);
    } else {
      operation = text === undefined ? 'remove' : 'replace';
      body = current.body;
      const found = old === '' ? [] : model.occurrences(current.body, old);
      if (old !== '' && found.length === 0) refused.add('NO_MATCH');
      if (found.length > 1) refused.add('AMBIGUOUS');
      if (found.length === 1) {
        const at = found[0]!;
        const after = current.body.slice(at + old.length);
        const rest = text === undefined && after.startsWith('\n') ? after.slice(1) : after;
        body = current.body.slice(0, at) + (text ?? '') + rest;
      }
    }
    if (refused.size === 0 && model.bytes(body) > policy.entryCap) refused.add('TOO_LARGE');
    if (refused.size > 0) return { refused };
    return { ok: { operation, body, description: description || current?.description || '' } };
  },
};

// ---------------------------------------------------------------------------------------
// What to fuzz with: small alphabets, so needles often occur once, twice or not at all.

const piece = fc.constantFrom('a', 'b', 'ab', ' ', '\n', '\t', '\u00a0', '\u2028', 'é', '😀', '$&', '$1', '\\');
const text = fc.string({ unit: piece, maxLength: 14 });
const needle = fc.string({ unit: piece, minLength: 1, maxLength: 3 });

/** A body and an `old` that is often cut out of it (whole code points), sometimes made up. */
const bodyAndNeedle = fc
  .tuple(text, needle, fc.nat(), fc.nat(), fc.boolean())
  .map(([body, made, from, length, cut]) => {
    const points = [...body];
    const start = points.length === 0 ? 0 : from % points.length;
    const old = cut ? points.slice(start, start + 1 + (length % 6)).join('') : made;
    return { body, old: old === '' ? made : old };
  });

const description = fc.string({ unit: fc.constantFrom('x', 'é', ' ', '\n', '\t', '\u3000', '😀'), maxLength: 14 });

const policy = fc.oneof(
  fc.constant(DEFAULT_POLICY),
  fc
    .record({ entryCap: fc.integer({ min: 0, max: 40 }), descriptionCap: fc.integer({ min: 0, max: 8 }) })
    .map((caps): Policy => ({ ...DEFAULT_POLICY, ...caps })),
);

const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 2 });

/** Where a request's `old` comes from: left out, empty, cut from the body, or made up. */
const oldSource = fc.oneof(
  { arbitrary: fc.constant('none' as const), weight: 3 },
  { arbitrary: fc.constant('empty' as const), weight: 1 },
  { arbitrary: fc.constant('cut' as const), weight: 5 },
  { arbitrary: fc.constant('made' as const), weight: 2 },
);

const scenario = fc.record({
  exists: fc.oneof({ arbitrary: fc.constant(true), weight: 3 }, { arbitrary: fc.constant(false), weight: 1 }),
  current: bodyAndNeedle,
  currentDescription: fc.constantFrom('A project', 'x'),
  description: optional(description),
  new: optional(text),
  old: oldSource,
  madeOld: needle,
  policy,
});

/** Runs planEdit, returning its result or the EngramError it threw (anything else fails the test). */
function attempt(current: EditableEntry | undefined, request: Omit<WriteRequest, 'name'>, rules: Policy) {
  try {
    return { ok: planEdit(current, { name: NAME, ...request }, rules) };
  } catch (error) {
    if (!(error instanceof EngramError)) throw error;
    return { error };
  }
}

describe('planEdit against the reference model', () => {
  it('succeeds with exactly the model result, or refuses with an error the model expects', () => {
    fc.assert(
      fc.property(scenario, ({ exists, current, currentDescription, old, madeOld, policy: rules, ...request }) => {
        const entry = exists ? { description: currentDescription, body: current.body } : undefined;
        const olds = { none: undefined, empty: '', cut: current.old, made: madeOld };
        const edit: Omit<WriteRequest, 'name'> = { description: request.description, new: request.new, old: olds[old] };
        const expected = model.write(entry, edit, rules);
        const actual = attempt(entry, edit, rules);
        if ('ok' in expected) {
          expect(actual).toEqual({ ok: expected.ok });
        } else {
          expect(actual.error, `expected a refusal among ${[...expected.refused]}`).toBeDefined();
          expect([...expected.refused]).toContain(actual.error!.code);
          expect(actual.error!.message.length).toBeGreaterThan(20);
        }
      }),
      RUNS,
    );
  });

  it('a refused replace or remove explains itself: the count and lines, or the closest line', () => {
    fc.assert(
      fc.property(bodyAndNeedle, optional(text), ({ body, old }, replacement) => {
        const found = model.occurrences(body, old);
        const result = attempt({ description: 'd', body }, { old, new: replacement }, DEFAULT_POLICY);
        if (found.length === 1) return;
        expect(result.error).toBeDefined();
        const { code, message } = result.error!;
        if (found.length > 1) {
          const lines = [...new Set(found.map((offset) => model.line(body, offset)))];
          const where = lines.length === 1 ? `line ${lines[0]}` : `lines ${lines.join(', ')}`;
          expect(code).toBe('AMBIGUOUS');
          expect(message).toContain(`occurs ${found.length} times in ${NAME} (${where})`);
        } else if (body.split('\n').every((line) => line.trim() === '')) {
          expect(code).toBe('NO_MATCH');
          expect(message).toContain('its body is empty');
        } else {
          expect(code).toBe('NO_MATCH');
          const quoted = /Closest line: ("(?:[^"\\]|\\.)*")/.exec(message);
          expect(quoted, message).not.toBeNull();
          const line = JSON.parse(quoted![1]!) as string;
          const candidates = body.split('\n').filter((candidate) => candidate.trim() !== '');
          const shortened = candidates.map((candidate) =>
            [...candidate].length > 200 ? `${[...candidate].slice(0, 200).join('')}…` : candidate,
          );
          expect(shortened).toContain(line);
        }
      }),
      RUNS,
    );
  });
});

describe('the edit helpers against the reference model', () => {
  it('findOccurrences finds every overlapping occurrence, and lineNumbersAt their lines', () => {
    fc.assert(
      fc.property(bodyAndNeedle, ({ body, old }) => {
        const found = findOccurrences(body, old);
        expect(found).toEqual(model.occurrences(body, old));
        expect(lineNumbersAt(body, found)).toEqual(found.map((offset) => model.line(body, offset)));
      }),
      RUNS,
    );
  });

  it('appendText, replaceUnique and removeUnique match the model whenever old occurs once', () => {
    fc.assert(
      fc.property(bodyAndNeedle, text, ({ body, old }, added) => {
        expect(appendText(body, added)).toBe(model.append(body, added));
        const outcome = model.write({ description: 'd', body }, { old, new: added }, DEFAULT_POLICY);
        if ('ok' in outcome) expect(replaceUnique(NAME, body, old, added)).toBe(outcome.ok.body);
        else expect(() => replaceUnique(NAME, body, old, added)).toThrow(EngramError);
        const removal = model.write({ description: 'd', body }, { old }, DEFAULT_POLICY);
        if ('ok' in removal) expect(removeUnique(NAME, body, old)).toBe(removal.ok.body);
        else expect(() => removeUnique(NAME, body, old)).toThrow(EngramError);
      }),
      RUNS,
    );
  });

  it('closestLine quotes a non-blank line of the body, or nothing when there is none', () => {
    fc.assert(
      fc.property(bodyAndNeedle, ({ body, old }) => {
        const candidates = body.split('\n').filter((line) => line.trim() !== '');
        const line = closestLine(body, old);
        if (candidates.length === 0) expect(line).toBeUndefined();
        else expect(candidates).toContain(line);
      }),
      RUNS,
    );
  });
});
