/**
 * The diff between two revisions at a bounded cost (issue #25): for every shape of text —
 * many lines, long lines, one huge line, lines that all look alike, lines in the reverse
 * order — the diff holds the event loop and the heap briefly, and past its bound answers
 * "too different" (null) rather than working on. Before, two 8,000-line texts that share
 * nothing held the loop 9 to 24 s. Measured as event-loop delay and heap, never wall time.
 */

import { describe, expect, it } from 'vitest';
import { boundedPatch, lineCount, maxEditLength } from '../../../src/memory/model/revision-diff.js';
import { HELD_LOOP_MS, withEventLoopDelay } from '../../helpers/event-loop.js';
import { withHeapPeak } from '../../helpers/heap.js';

/** What one diff may hold over its two texts: its answer, and the paths of the bounded search. */
const HELD_HEAP_BYTES = 16 * 1024 * 1024;

const lines = (count: number, line: (index: number) => string) =>
  Array.from({ length: count }, (_, index) => `${line(index)}\n`).join('');

const side = (label: string, text: string) => ({ label, description: label, text });

/** Lets the heap sampler of withHeapPeak run: it cannot while a synchronous diff holds the loop. */
const sampled = () => new Promise((resolve) => setTimeout(resolve, 20));

/**
 * Diffs `left` to `right`, checking the loop and heap it held (the heap as left by the
 * diff, before any full collection: what it kept and what it made on the way to its
 * answer), and returns the patch (or null).
 */
async function measuredPatch(left: string, right: string): Promise<string | null> {
  // The heap measure starts with a full collection, outside the loop's: a collection of
  // this worker's whole heap is not the diff holding the loop.
  const { result, peakBytes } = await withHeapPeak(() =>
    withEventLoopDelay(async () => {
      const patch = boundedPatch(side('a', left), side('b', right));
      await sampled();
      return patch;
    }),
  );
  expect(result.maxDelayMs).toBeLessThan(HELD_LOOP_MS);
  expect(peakBytes).toBeLessThan(HELD_HEAP_BYTES);
  return result.result;
}

describe('a diff past its bound', () => {
  it.each([
    ['two 8,000-line texts that share nothing', 'a\n'.repeat(8_000), 'b\n'.repeat(8_000)],
    ['8,000 distinct lines and the same in reverse', lines(8_000, String), lines(8_000, (i) => String(8_000 - i))],
    [
      'one line repeated, and the same with another every 10th line',
      'a\n'.repeat(8_000),
      lines(8_000, (i) => (i % 10 ? 'a' : 'b')),
    ],
    [
      '20,001 short lines on each side, all alike but the last (a raised entry cap)',
      lines(20_001, (i) => `l${i}`),
      lines(20_001, (i) => (i === 20_000 ? 'changed' : `l${i}`)),
    ],
    [
      '200,000 short lines on each side (a raised entry cap)',
      lines(200_000, (i) => `l${i}`),
      lines(200_000, (i) => `r${i}`),
    ],
    ['one line of 1 Mi characters on each side, and one more', 'x'.repeat(1024 * 1024), `${'x'.repeat(1024 * 1024)}y`],
    [
      'long lines alike but for their last character (a raised entry cap)',
      lines(300, (i) => `${'x'.repeat(3_000)}a${i}`),
      lines(300, (i) => `${'x'.repeat(3_000)}b${i}`),
    ],
  ])('is "too different" for %s, holding the loop and heap briefly', async (_, left, right) => {
    expect(await measuredPatch(left, right)).toBeNull();
  });
});

describe('a diff within its bound', () => {
  // 100 lines added and removed: D × (D + 16,000 / 16) = 110,000 steps, far from the
  // bound, so a busy machine cannot bring it to the time limit.
  it('still shows 50 lines changed among 8,000', async () => {
    const before = lines(8_000, (i) => `line ${i}`);
    const after = lines(8_000, (i) => (i % 160 === 0 ? `changed ${i}` : `line ${i}`));
    const patch = await measuredPatch(before, after);
    expect(patch?.match(/^-line /gm)).toHaveLength(50);
    expect(patch?.match(/^\+changed /gm)).toHaveLength(50);
  });

  it('shows one huge line changed (1 Mi characters, a raised entry cap) as that line removed and added', async () => {
    const huge = 'x'.repeat(1024 * 1024 - 1);
    const patch = await measuredPatch(`${huge}a`, `${huge}b`);
    expect(patch?.split('\n').map((line) => line.slice(0, 3))).toEqual([
      '---',
      '+++',
      '@@ ',
      '-xx',
      '\\ N',
      '+xx',
      '\\ N',
      '',
    ]);
  });

  it('is a plain unified diff, headed by the labels and descriptions', () => {
    expect(boundedPatch(side('x@1', 'one\ntwo\n'), side('x@2', 'one\n2\n'))).toBe(
      '--- x@1\tx@1\n+++ x@2\tx@2\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n',
    );
  });
});

describe('the bound', () => {
  it('allows fewer lines added and removed as the texts grow: D × (D + lines / 16) ≤ 300,000', () => {
    expect([0, 1_000, 16_000, 40_000].map(maxEditLength)).toEqual([547, 517, 241, 114]);
  });

  it('diffs texts up to 40,000 lines and 2 Mi characters together', () => {
    // A text and the same with one more character at its end (a last line, or a longer one).
    const grown = (text: string) => boundedPatch(side('a', text), side('b', `${text}z`));
    expect(grown('\n'.repeat(19_999))).toMatch(/^\+z$/m);
    expect(grown('\n'.repeat(20_000))).toBeNull();
    expect(grown('x'.repeat(1024 * 1024 - 1))).toMatch(/^\+x+z$/m);
    expect(grown('x'.repeat(1024 * 1024))).toBeNull();
  });

  it('shows two texts alike as alike, however large', () => {
    const same = (text: string) => boundedPatch(side('a', text), side('b', text));
    expect(same('\n'.repeat(100_000))).toBe('--- a\ta\n+++ b\tb\n');
    expect(same('x'.repeat(4 * 1024 * 1024))).toBe('--- a\ta\n+++ b\tb\n');
  });

  it('counts lines as a reader does', () => {
    expect(['', 'a', 'a\n', 'a\nb', 'a\nb\n', '\n\n'].map(lineCount)).toEqual([0, 1, 1, 2, 2, 2]);
  });
});
