/**
 * The edit semantics of memory_write (DESIGN §2), as pure functions of the current
 * entry and the request: create, append, replace, remove, describe. No I/O here, so
 * every case is testable directly and every store applies exactly the same rules.
 */

import { EngramError } from './errors.js';
import { didYouMean } from './format.js';
import type { Policy } from './policy.js';
import { similarity } from './similarity.js';
import { charLength, foldDescription, formatCount, utf8Bytes, withFinalNewline } from './text.js';

export type EditOperation = 'create' | 'append' | 'replace' | 'remove' | 'describe';

/** A write as the caller asked it, line endings already normalised. */
export interface EditRequest {
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

/** Start offsets of every occurrence of `needle`, overlapping ones included. */
export function findOccurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  if (needle === '') return found;
  let at = haystack.indexOf(needle);
  while (at >= 0) {
    found.push(at);
    at = haystack.indexOf(needle, at + 1);
  }
  return found;
}

/** 1-based line number of a character offset. */
export function lineNumberAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
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
      );
    }
    const characters = [...line];
    const quoted = characters.length > 200 ? `${characters.slice(0, 200).join('')}…` : line;
    throw new EngramError(
      'NO_MATCH',
      `old text not found in ${name}. Closest line: ${JSON.stringify(quoted)} ` +
        `Copy the exact text from memory_open(["${name}"]) and call again.`,
    );
  }
  const lines = [...new Set(found.map((offset) => lineNumberAt(body, offset)))];
  const where = lines.length === 1 ? `line ${lines[0]}` : `lines ${lines.join(', ')}`;
  throw new EngramError(
    'AMBIGUOUS',
    `old text occurs ${found.length} times in ${name} (${where}). ` +
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
export function assertNoNul(fields: Readonly<Record<string, string | undefined>>): void {
  for (const [field, value] of Object.entries(fields)) {
    if (value?.includes('\u0000')) {
      throw new EngramError(
        'INVALID_ARGUMENT',
        `${field} contains a NUL character (\\u0000), which memory cannot hold. Remove it and call again.`,
      );
    }
  }
}

/** A description as stored: one line, within the cap. */
export function cleanDescription(name: string, raw: string, policy: Policy): string {
  const description = foldDescription(raw);
  const length = charLength(description);
  if (length > policy.descriptionCap) {
    throw new EngramError(
      'TOO_LARGE',
      `description is ${formatCount(length)} characters; the cap is ${formatCount(policy.descriptionCap)}. ` +
        `Shorten it to one line on what ${name} covers and call again.`,
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
  const size = utf8Bytes(body);
  if (size > policy.entryCap) {
    throw new EngramError(
      'TOO_LARGE',
      `${name} would be ${formatCount(size)} bytes; the cap is ${formatCount(policy.entryCap)}. ` +
        `Split the subject: move part of it to a new entry such as ${splitExample(name)}, then remove it here.`,
    );
  }
}

/** Refuses a write that would take the user's total past the per-user cap. */
export function checkUserCap(name: string, totalAfter: number, policy: Policy): void {
  if (totalAfter > policy.userCap) {
    throw new EngramError(
      'TOO_LARGE',
      `${name} would bring this memory to ${formatCount(totalAfter)} bytes; the cap is ${formatCount(policy.userCap)}. ` +
        'Make room first: shorten or drop entries that are no longer needed (memory_open() shows their sizes), then call again.',
    );
  }
}

/** memory_write on a name that does not exist, in a way that cannot create it. */
export function writeNotFound(name: string, suggestions: readonly string[]): EngramError {
  return new EngramError(
    'NOT_FOUND',
    `${name} not found.${didYouMean(suggestions)} To create it, call memory_write with name, description and new (without old).`,
  );
}

function nothingToDo(): EngramError {
  return new EngramError(
    'NOTHING_TO_DO',
    'Nothing to do: pass new to append, old and new to replace, old alone to remove, or description to update it.',
  );
}

/**
 * Applies one memory_write to the entry as it is now (undefined: it does not exist).
 * Throws an EngramError for every refusal; the caller changes nothing then.
 */
export function planEdit(
  name: string,
  current: EditableEntry | undefined,
  request: EditRequest,
  policy: Policy,
): EditResult {
  const { old, new: text } = request;
  assertNoNul({ description: request.description, new: text, old });
  if (old === '') {
    throw new EngramError(
      'INVALID_ARGUMENT',
      'old must not be empty: pass the exact text to replace or remove, or leave old out to append new.',
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
      );
    }
    const body = withFinalNewline(text);
    checkEntryCap(name, body, policy);
    return { operation: 'create', description, body };
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
  return { operation, description: description || current.description, body };
}
