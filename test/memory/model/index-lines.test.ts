/**
 * A kept index is patched chunk by chunk rather than rebuilt: whatever changes it takes
 * (rows replaced, inserted, removed, enough of them in one place to cut a chunk in two or
 * empty one), its rows and its text must be exactly those of an index built afresh.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatIndex, type IndexRow, indexLine } from '../../../src/memory/model/format.js';
import { type IndexChange, KeptIndex } from '../../../src/memory/model/index-lines.js';

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const nameOf = (n: number) => `topics/${String(n).padStart(5, '0')}`;
const rowOf = (n: number, size: number): IndexRow => ({ name: nameOf(n), size, description: `about ${n}` });

describe('KeptIndex', () => {
  it('patched, has the rows and text of the same index built afresh', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 700 }),
        // Names over a narrow range, so that inserts pile up in one chunk and removals empty one.
        fc.array(fc.array(fc.tuple(fc.integer({ min: 0, max: 1_400 }), fc.nat(3)), { maxLength: 300 }), {
          maxLength: 4,
        }),
        (seeded, patches) => {
          const live = new Map<string, IndexRow>();
          for (let n = 0; n < seeded; n++) live.set(nameOf(2 * n), rowOf(2 * n, n));
          const sorted = () => [...live.values()].sort((a, b) => compare(a.name, b.name));
          let index = KeptIndex.of(sorted());
          index.text();
          for (const patch of patches) {
            const changes: IndexChange[] = [];
            for (const [n, size] of patch) {
              // Size 0 removes the entry; any other puts it with that size.
              const row = size === 0 ? undefined : rowOf(n, size);
              if (row) live.set(row.name, row);
              else live.delete(nameOf(n));
              changes.push({ name: nameOf(n), row });
            }
            index = index.patched(changes, compare);
            expect(index.rows).toEqual(sorted());
            expect(Object.isFrozen(index.rows)).toBe(true);
            expect(formatIndex(index.rows)).toBe(
              index.rows.length === 0 ? formatIndex([]) : sorted().map(indexLine).join('\n'),
            );
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('stays right as one stretch grows past two chunks and is then emptied, one change at a time', () => {
    const seeded = Array.from({ length: 600 }, (_, n) => rowOf(4 * n, 1));
    const live = new Map(seeded.map((row) => [row.name, row]));
    let index = KeptIndex.of(seeded);
    const check = () => {
      const rows = [...live.values()].sort((a, b) => compare(a.name, b.name));
      expect(index.rows).toEqual(rows);
      expect(formatIndex(index.rows)).toBe(rows.length === 0 ? formatIndex([]) : rows.map(indexLine).join('\n'));
    };
    // Inserts into the first chunk's stretch, until it was cut in two more than once.
    for (let n = 1; n < 1_200; n++) {
      if (n % 4 === 0) continue;
      live.set(nameOf(n), rowOf(n, 2));
      index = index.patched([{ name: nameOf(n), row: rowOf(n, 2) }], compare);
      if (n % 97 === 0) check();
    }
    check();
    // Then every row of that stretch goes, so that chunks are emptied and let go.
    for (let n = 0; n < 1_400; n++) {
      live.delete(nameOf(n));
      index = index.patched([{ name: nameOf(n), row: undefined }], compare);
      if (n % 89 === 0) check();
    }
    check();
  });

  it('leaves the index it was patched from as it was', () => {
    const before = KeptIndex.of([rowOf(1, 1), rowOf(3, 3)]);
    const text = before.text();
    const after = before.patched([{ name: nameOf(2), row: rowOf(2, 2) }], compare);
    expect(before.rows.map((row) => row.name)).toEqual([nameOf(1), nameOf(3)]);
    expect(formatIndex(before.rows)).toBe(text);
    expect(formatIndex(after.rows)).toBe([1, 2, 3].map((n) => indexLine(rowOf(n, n))).join('\n'));
  });
});
