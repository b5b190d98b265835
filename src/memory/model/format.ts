/**
 * How entries are shown: the index line `{name} ({size} bytes): {description}` (the
 * very line memory_write returns and the index lists), the index, and opened entries.
 */

import crypto, { createHash } from 'node:crypto';
import { indexLine, keptIndexText } from './index-lines.js';

export { indexLine };

export interface IndexRow {
  readonly name: string;
  readonly size: number;
  readonly description: string;
}

export interface OpenedEntry extends IndexRow {
  readonly body: string;
}

export interface MissingEntry {
  readonly name: string;
  readonly suggestions: readonly string[];
}

export const EMPTY_INDEX =
  'Memory is empty. Create the first entry with memory_write: name such as "topics/preferences", ' +
  'a one-line description, and new with the text to remember.';

/** The whole index: a kept index's text (index-lines.ts) when the rows are one's, else every line joined. */
export function formatIndex(rows: readonly IndexRow[]): string {
  if (rows.length === 0) return EMPTY_INDEX;
  return keptIndexText(rows) ?? rows.map(indexLine).join('\n');
}

/** ` Did you mean a, b?` to follow a "not found", or nothing when no name is close. */
export function didYouMean(suggestions: readonly string[]): string {
  return suggestions.length > 0 ? ` Did you mean ${suggestions.join(', ')}?` : '';
}

export function formatMissing(missing: MissingEntry): string {
  return `${missing.name} not found.${didYouMean(missing.suggestions)}`;
}

/** Node's one-shot hash (from 20.12), which spares a Hash object per answer; undefined on an older Node 20. */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string) => string }).hash;

function sha256(text: string): string {
  // package.json says Node 20, which has crypto.hash only from 20.12: createHash before.
  return oneShotHash === undefined ? createHash('sha256').update(text).digest('hex') : oneShotHash('sha256', text);
}

/**
 * The tag of an answer's entry boundaries: derived from what the answer holds (so the
 * same entries give the same text), and checked to occur in none of the bodies, so no
 * body can produce a boundary line. A body cannot carry the tag of an answer that
 * contains it without finding a SHA-256 fixed point.
 */
function boundaryTag(found: readonly OpenedEntry[]): string {
  let content = '';
  for (const entry of found) content += `${entry.name}\u0000${entry.description}\u0000${entry.body}\u0000`;
  // One hash in the common case; another only when a body holds the tag it gives.
  const digest = sha256(content);
  for (let attempt = 0; ; attempt++) {
    const tag = (attempt === 0 ? digest : sha256(`${digest}:${attempt}`)).slice(0, 12);
    if (!found.some((entry) => entry.body.includes(tag))) return tag;
  }
}

/**
 * `text` without the newlines it ends with. Not `replace(/\n+$/, '')`: on every opened
 * entry that regex tried a match at each newline of the body and went through V8's
 * runtime, ~11,000 instructions of a read's ~370,000 under load (callgrind), this loop a
 * few dozen.
 */
export function withoutTrailingNewlines(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 10) end--;
  return end === text.length ? text : text.slice(0, end);
}

/** The line that ends an opened entry: `=== end of {name} [{tag}] ===`. */
export function entryEnd(name: string, tag: string): string {
  return `=== end of ${name} [${tag}] ===`;
}

/**
 * Every opened entry as its index line, its body, then a line that ends it, carrying a
 * tag that no body contains; entries not found come last. A body that imitates an
 * entry or a boundary stays visibly inside its entry.
 */
export function formatOpened(found: readonly OpenedEntry[], missing: readonly MissingEntry[]): string {
  const tag = found.length > 0 ? boundaryTag(found) : '';
  const blocks = found.map((entry) =>
    withoutTrailingNewlines(`${indexLine(entry)}\n${entry.body}`).concat('\n', entryEnd(entry.name, tag)),
  );
  const notFound = missing.map(formatMissing);
  if (notFound.length > 0 && found.length === 0) {
    notFound.push('memory_open() with no names lists every entry.');
  }
  if (notFound.length > 0) blocks.push(notFound.join('\n'));
  return blocks.join('\n\n');
}

export function formatDropped(row: IndexRow): string {
  return `Dropped ${indexLine(row)}`;
}
