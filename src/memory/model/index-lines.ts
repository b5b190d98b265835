/**
 * The index line `{name} ({size} bytes): {description}`, and an index kept in chunks of
 * rows, each chunk's text joined once. A store that keeps its index between reads and
 * changes a few entries at a time (the SQLite store) makes a new KeptIndex that shares
 * every untouched chunk with the old one: right after a write only the chunk holding the
 * written row is joined again, and the index text is the chunks' texts concatenated (a
 * rope V8 flattens once, when the answer is written out), where joining every line again
 * was most of what memory_open() cost right after a write.
 */

import type { IndexRow } from './format.js';

export function indexLine(row: IndexRow): string {
  return `${row.name} (${row.size} bytes): ${row.description}`;
}

/**
 * Rows per chunk as an index is cut: a change joins again about this many lines (each
 * line a rope V8 flattens as it joins them), and the text is entries / CHUNK_ROWS chunks.
 * Right after a write at 10,000 entries, 64 measured 0.80x of 256.
 */
const CHUNK_ROWS = 64;

interface Chunk {
  readonly rows: readonly IndexRow[];
  /** Its lines joined, once asked for (a function of `rows` only, so shared chunks share it). */
  text?: string;
}

/** A change to a kept index: the live row now named `name`, or undefined when none is. */
export interface IndexChange {
  readonly name: string;
  readonly row: IndexRow | undefined;
}

/** The kept index of each frozen rows array a KeptIndex handed out. */
const keptIndexes = new WeakMap<readonly IndexRow[], KeptIndex>();

/** The text of `rows` when they are a KeptIndex's rows (joined at most once per chunk), else undefined. */
export function keptIndexText(rows: readonly IndexRow[]): string | undefined {
  return keptIndexes.get(rows)?.text();
}

export class KeptIndex {
  /** Every row in order, frozen: what the store hands out. */
  readonly rows: readonly IndexRow[];
  private joined: string | undefined;

  private constructor(
    private readonly chunks: readonly Chunk[],
    rows: IndexRow[],
  ) {
    this.rows = Object.freeze(rows);
    keptIndexes.set(this.rows, this);
  }

  /** `rows` (in the store's order; kept and frozen, so not to be changed after) cut into chunks. */
  static of(rows: IndexRow[]): KeptIndex {
    const chunks: Chunk[] = [];
    for (let at = 0; at < rows.length; at += CHUNK_ROWS) chunks.push({ rows: rows.slice(at, at + CHUNK_ROWS) });
    return new KeptIndex(chunks, rows);
  }

  /**
   * This index with each change applied in turn (a row replaced, inserted where `compare`
   * puts its name, or removed), sharing every chunk no change touched.
   */
  patched(changes: Iterable<IndexChange>, compare: (a: string, b: string) => number): KeptIndex {
    // Not this.rows.slice(): V8 slices a frozen array on a slow path (~1 ms at 10,000 rows, 50x Array.from).
    const rows = Array.from(this.rows);
    const chunks = this.chunks.slice();
    for (const { name, row } of changes) {
      const at = position(rows, name, compare);
      const found = at < rows.length && rows[at]!.name === name;
      if (!row && !found) continue;
      if (row && found) rows[at] = row;
      else if (row) rows.splice(at, 0, row);
      else rows.splice(at, 1);
      changeChunk(chunks, at, found, row);
    }
    return new KeptIndex(chunks, rows);
  }

  /** The index text: every line, in order, one per row. */
  text(): string {
    if (this.joined === undefined) {
      let text = '';
      for (const chunk of this.chunks) {
        chunk.text ??= chunk.rows.map(indexLine).join('\n');
        text = text === '' ? chunk.text : `${text}\n${chunk.text}`;
      }
      this.joined = text;
    }
    return this.joined;
  }
}

/** Where `name` is in `rows` (sorted by `compare`), or where it would go. */
function position(rows: readonly IndexRow[], name: string, compare: (a: string, b: string) => number): number {
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compare(rows[middle]!.name, name) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * Replaces the chunk holding position `at` by a copy with its row there replaced (`found`
 * and `row`), removed (`found`, no row) or `row` inserted (not `found`): a chunk left empty
 * goes, one grown to twice CHUNK_ROWS is cut in two.
 */
function changeChunk(chunks: Chunk[], at: number, found: boolean, row: IndexRow | undefined): void {
  let index = 0;
  let start = 0;
  // An insertion past the last row goes into the last chunk.
  while (index < chunks.length - 1 && at >= start + chunks[index]!.rows.length) start += chunks[index++]!.rows.length;
  const rows = chunks[index]?.rows.slice() ?? [];
  if (row && found) rows[at - start] = row;
  else if (row) rows.splice(at - start, 0, row);
  else rows.splice(at - start, 1);
  if (rows.length === 0) chunks.splice(index, 1);
  else if (rows.length >= 2 * CHUNK_ROWS)
    chunks.splice(index, 1, { rows: rows.slice(0, CHUNK_ROWS) }, { rows: rows.slice(CHUNK_ROWS) });
  else chunks[index] = { rows };
}
