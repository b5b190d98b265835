/**
 * The edit semantics of memory_write (DESIGN §2), as pure functions of the current
 * entry and the request: create, append, replace, remove, describe. No I/O here, so
 * every case is testable directly and every store applies exactly the same rules.
 */

import type { Usage } from '../port.js';
import { bodyOverCap, descriptionOverCap } from './caps.js';
import { EngramError, type TextField } from './errors.js';
import { didYouMean } from './format.js';
import type { Policy } from './policy.js';
import { similarity } from './similarity.js';
import { foldDescription, formatCount, withFinalNewline } from './text.js';
import { entryBytes } from './usage.js';

export type EditOperation = 'create' | 'append' | 'replace' | 'remove' | 'describe';

/**
 * A memory_write as asked, the one shape every door parses its input into (the tool's
 * arguments, the CLI's flags, the REST body): the Memory service parses the name and
 * normalises line endings before planEdit sees it.
 */
export interface WriteRequest {
  readonly name: string;
  readonly description?: string | undefined;
  readonly new?: string | undefined;
  readonly old?: string | undefined;
}

export interface EditableEntry {
  readonly description: string;
  readonly body: string;
}

export interface EditResult {
  readonly operation: EditOperation;
  readonly description: string;
  readonly body: string;
}

/**
 * Characters compared at most while counting occurrences: an `old` text of n characters
 * is counted up to this / n times, so even one that overlaps itself thousands of times
 * costs little; past it, a message says "at least".
 */
const OCCURRENCE_BUDGET = 4_000_000;
/** Line numbers an ambiguity error lists at most; the rest are counted. */
const LINES_LISTED = 10;

/** How many occurrences of `needle` are counted at most. */
export function occurrenceLimit(needle: string): number {
  return Math.max(2, Math.floor(OCCURRENCE_BUDGET / Math.max(needle.length, 1)));
}

/** Start offsets of the occurrences of `needle`, overlapping ones included, at most `limit` of them. */
export function findOccurrences(haystack: string, needle: string, limit = occurrenceLimit(needle)): number[] {
  const found: number[] = [];
  if (needle === '') return found;
  let at = haystack.indexOf(needle);
  while (at >= 0 && found.length < limit) {
    found.push(at);
    at = haystack.indexOf(needle, at + 1);
  }
  return found;
}

/** 1-based line numbers of ascending character offsets, in one pass over the text. */
export function lineNumbersAt(text: string, offsets: readonly number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let nextBreak = text.indexOf('\n');
  for (const offset of offsets) {
    while (nextBreak >= 0 && nextBreak < offset) {
      line++;
      nextBreak = text.indexOf('\n', nextBreak + 1);
    }
    lines.push(line);
  }
  return lines;
}

/** The body line that most resembles `old`, for an error the model can retry from. */
export function closestLine(body: string, old: string): string | undefined {
  const probe = old.split('\n').find((line) => line.trim() !== '') ?? old;
  let best: { line: string; score: number } | undefined;
  for (const line of body.split('\n')) {
    if (line.trim() === '') continue;
    const score = similarity(probe.trim(), line.trim());
    if (!best || score > best.score) best = { line, score };
  }
  return best?.line;
}

/** body := body + (`\n` if body is non-empty and lacks one) + text (+ final `\n`). */
export function appendText(body: string, text: string): string {
  if (text === '') return body;
  return withFinalNewline(body) + withFinalNewline(text);
}

/** The single occurrence of `old` in `body`, or the error that explains why not. */
function uniqueOccurrence(name: string, body: string, old: string): number {
  const found = findOccurrences(body, old);
  if (found.length === 1) return found[0] as number;
  if (found.length === 0) {
    const line = closestLine(body, old);
    if (line === undefined) {
      throw new EngramError(
        'NO_MATCH',
        `old text not found in ${name}: its body is empty. To add text, call memory_write with name and new alone.`,
        { reason: 'old-in-empty-body', name },
      );
    }
    const characters = [...line];
    const quoted = characters.length > 200 ? `${characters.slice(0, 200).join('')}…` : line;
    throw new EngramError(
      'NO_MATCH',
      `old text not found in ${name}. Closest line: ${JSON.stringify(quoted)} ` +
        `Copy the exact text from memory_open(["${name}"]) and call again.`,
      { reason: 'old-not-found', name, closestLine: quoted },
    );
  }
  const capped = found.length === occurrenceLimit(old);
  const lines = [...new Set(lineNumbersAt(body, found))];
  const unlisted = lines.length - LINES_LISTED;
  let where = lines.length === 1 ? `line ${lines[0]}` : `lines ${lines.slice(0, LINES_LISTED).join(', ')}`;
  if (unlisted > 0 || (capped && lines.length > 1))
    where += capped ? ' and more' : ` and ${formatCount(unlisted)} more`;
  const times = capped ? `at least ${formatCount(found.length)}` : formatCount(found.length);
  throw new EngramError(
    'AMBIGUOUS',
    `old text occurs ${times} times in ${name} (${where}). ` +
      'Include more of the surrounding text so that it occurs exactly once.',
  );
}

/** Replaces the one occurrence of `old` with `replacement`, literally. */
export function replaceUnique(name: string, body: string, old: string, replacement: string): string {
  const at = uniqueOccurrence(name, body, old);
  return body.slice(0, at) + replacement + body.slice(at + old.length);
}

/** Removes the one occurrence of `old`, with the `\n` right after it if there is one. */
export function removeUnique(name: string, body: string, old: string): string {
  const at = uniqueOccurrence(name, body, old);
  let end = at + old.length;
  if (body[end] === '\n') end++;
  return body.slice(0, at) + body.slice(end);
}

/**
 * Text holds no NUL character (U+0000): PostgreSQL cannot store one, so no backend
 * accepts it, and the same call behaves the same on every store.
 */
export function assertNoNul(fields: Readonly<Partial<Record<TextField, string>>>): void {
  for (const [field, value] of Object.entries(fields) as [TextField, string | undefined][]) {
    if (value?.includes('\u0000')) {
      throw new EngramError(
        'INVALID_ARGUMENT',
        `${field} contains a NUL character (\\u0000), which memory cannot hold. Remove it and call again.`,
        { reason: 'nul-character', field },
      );
    }
  }
}

/** A description as stored: one line, within the cap. */
export function cleanDescription(name: string, raw: string, policy: Policy): string {
  const description = foldDescription(raw);
  const over = descriptionOverCap(description, policy);
  if (over !== undefined) {
    throw new EngramError(
      'TOO_LARGE',
      `description is ${formatCount(over.size)} characters; the cap is ${formatCount(over.cap)}. ` +
        `Shorten it to one line on what ${name} covers and call again.`,
      { reason: 'description-over-cap', name, ...over },
    );
  }
  return description;
}

function splitExample(name: string): string {
  const slash = name.indexOf('/');
  return `${name.slice(0, slash + 1)}${name.slice(slash + 1, slash + 1 + 58)}-more`;
}

/** Refuses a body over the entry cap, saying how to split the subject. */
export function checkEntryCap(name: string, body: string, policy: Policy): void {
  const over = bodyOverCap(body, policy);
  if (over !== undefined) {
    throw new EngramError(
      'TOO_LARGE',
      `${name} would be ${formatCount(over.size)} bytes; the cap is ${formatCount(over.cap)}. ` +
        `Split the subject: move part of it to a new entry such as ${splitExample(name)}, then remove it here.`,
    );
  }
}

/** Refuses a write that would take the user's total (names, descriptions, bodies) past the per-user cap. */
export function checkUserCap(name: string, totalAfter: number, policy: Policy): void {
  if (totalAfter > policy.userCap) {
    throw new EngramError(
      'TOO_LARGE',
      `${name} would bring this memory to ${formatCount(totalAfter)} bytes (names, descriptions and bodies); ` +
        `the cap is ${formatCount(policy.userCap)}. ` +
        'Make room first: shorten or drop entries that are no longer needed (memory_open() shows their sizes), then call again.',
      { reason: 'user-cap', name, totalAfter, cap: policy.userCap },
    );
  }
}

/** Refuses a change that would leave the user with more live entries than the per-user entry cap. */
export function checkEntryCount(name: string, entriesAfter: number, policy: Policy): void {
  if (entriesAfter > policy.maxEntries) {
    throw new EngramError(
      'TOO_MANY_ENTRIES',
      `${name} would make ${formatCount(entriesAfter)} entries in this memory; the cap is ${formatCount(policy.maxEntries)}. ` +
        'Make room first: merge related entries into one, or drop entries that are no longer needed ' +
        '(memory_open() lists them), then call again.',
      { reason: 'entry-cap', name, entriesAfter, cap: policy.maxEntries },
    );
  }
}

/**
 * Refuses a change of one entry from `before` to `after` that would take the user past
 * the byte cap or the entry cap; a change that makes nothing bigger always passes, so a
 * memory over a lowered cap can still shrink.
 */
export function checkCaps(
  name: string,
  before: { readonly description: string; readonly size: number } | undefined,
  after: { readonly description: string; readonly size: number },
  usage: Usage,
  policy: Policy,
): void {
  if (!before) checkEntryCount(name, usage.entries + 1, policy);
  const bytesBefore = before ? entryBytes(name, before.description, before.size) : 0;
  const bytesAfter = entryBytes(name, after.description, after.size);
  if (bytesAfter > bytesBefore) checkUserCap(name, usage.totalBytes - bytesBefore + bytesAfter, policy);
}

/** memory_write on a name that does not exist, in a way that cannot create it. */
export function writeNotFound(name: string, suggestions: readonly string[]): EngramError {
  return new EngramError(
    'NOT_FOUND',
    `${name} not found.${didYouMean(suggestions)} To create it, call memory_write with name, description and new (without old).`,
    { reason: 'write-not-found', name, suggestions },
  );
}

function nothingToDo(): EngramError {
  return new EngramError(
    'NOTHING_TO_DO',
    'Nothing to do: pass new to append, old and new to replace, old alone to remove, or description to update it.',
    { reason: 'nothing-to-do' },
  );
}

/**
 * Applies one memory_write to the entry as it is now (undefined: it does not exist): the
 * request's name already parsed, its line endings normalised. Throws an EngramError for
 * every refusal; the caller changes nothing then.
 */
export function planEdit(current: EditableEntry | undefined, request: WriteRequest, policy: Policy): EditResult {
  const { name, old, new: text } = request;
  assertNoNul({ description: request.description, new: text, old });
  if (old === '') {
    throw new EngramError(
      'INVALID_ARGUMENT',
      'old must not be empty: pass the exact text to replace or remove, or leave old out to append new.',
      { reason: 'empty-old' },
    );
  }
  const description =
    request.description === undefined ? undefined : cleanDescription(name, request.description, policy);

  if (old === undefined && text === undefined && description === undefined) throw nothingToDo();

  if (!current) {
    if (old !== undefined || text === undefined) throw writeNotFound(name, []);
    if (!description) {
      throw new EngramError(
        'INVALID_ARGUMENT',
        `${name} does not exist yet: to create it, pass description (one line on what it covers) together with new.`,
        { reason: 'create-without-description', name },
      );
    }
    const body = withFinalNewline(text);
    checkEntryCap(name, body, policy);
    return { operation: 'create', description, body };
  }

  if (description === '') {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `description is empty once white space is folded: pass one line on what ${name} covers, ` +
        'or leave description out to keep the current one.',
      { reason: 'empty-description', name },
    );
  }
  let operation: EditOperation;
  let body: string;
  if (old === undefined && text === undefined) {
    operation = 'describe';
    body = current.body;
  } else if (old === undefined) {
    operation = 'append';
    body = appendText(current.body, text as string);
  } else if (text === undefined) {
    operation = 'remove';
    body = removeUnique(name, current.body, old);
  } else {
    operation = 'replace';
    body = replaceUnique(name, current.body, old, text);
  }
  checkEntryCap(name, body, policy);
  return { operation, description: description ?? current.description, body };
}
