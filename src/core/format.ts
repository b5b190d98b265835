/**
 * How entries are shown: the index line `{name} ({size} bytes): {description}` (the
 * very line memory_write returns and the index lists), the index, and opened entries.
 */

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

export function indexLine(row: IndexRow): string {
  return `${row.name} (${row.size} bytes): ${row.description}`;
}

/** Texts of frozen index arrays: a store that hands out the same frozen rows again gets the same text back. */
const formattedIndexes = new WeakMap<readonly IndexRow[], string>();

export function formatIndex(rows: readonly IndexRow[]): string {
  let text = formattedIndexes.get(rows);
  if (text === undefined) {
    text = rows.length === 0 ? EMPTY_INDEX : rows.map(indexLine).join('\n');
    if (Object.isFrozen(rows)) formattedIndexes.set(rows, text);
  }
  return text;
}

/** ` Did you mean a, b?` to follow a "not found", or nothing when no name is close. */
export function didYouMean(suggestions: readonly string[]): string {
  return suggestions.length > 0 ? ` Did you mean ${suggestions.join(', ')}?` : '';
}

export function formatMissing(missing: MissingEntry): string {
  return `${missing.name} not found.${didYouMean(missing.suggestions)}`;
}

const SEPARATOR = '\n---\n\n';

/** Every opened entry as its index line then its body; entries not found come last. */
export function formatOpened(found: readonly OpenedEntry[], missing: readonly MissingEntry[]): string {
  const blocks = found.map((entry) => `${indexLine(entry)}\n${entry.body}`.replace(/\n+$/, ''));
  const notFound = missing.map(formatMissing);
  if (notFound.length > 0 && found.length === 0) {
    notFound.push('memory_open() with no names lists every entry.');
  }
  if (notFound.length > 0) blocks.push(notFound.join('\n'));
  return blocks.join(SEPARATOR);
}

export function formatDropped(row: IndexRow): string {
  return `Dropped ${indexLine(row)}`;
}
