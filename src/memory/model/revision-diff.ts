/**
 * The unified diff between two texts, at a bounded cost. Myers' algorithm (the `diff`
 * package) costs about D × (D + lines) for D lines added or removed: two 8,000-line
 * revisions that share nothing held the event loop 9 to 24 s, and a read-only token could
 * ask again and again. So the edit length the diff may explore is capped by the texts'
 * line counts, keeping that product under a fixed amount of work (some 30 ms on a busy
 * 2-core machine), with a time limit as a net for the shapes a line count does not see
 * (very long lines alike, under a raised entry cap); and texts too large to even split
 * into lines quickly (only a raised entry cap allows them) are not diffed at all. Past
 * any of these, there is no patch: the texts are "too different to show line by line",
 * and each door offers both texts instead.
 */

import { createTwoFilesPatch } from 'diff';

/**
 * Work one diff may do, in steps of the edit graph: some 100 ns each, measured on the
 * 2-core machine while other tests ran (`D` steps for each of the first `D` edit lengths).
 */
const DIFF_WORK = 300_000;

/** Lines followed along a run of equal lines for the price of one step (measured: about 16). */
const LINES_PER_STEP = 16;

/** The net: a diff still running after this long stops (checked between edit lengths). */
const DIFF_TIMEOUT_MS = 100;

/**
 * Lines in both texts past which they are not diffed: splitting them alone would hold the
 * loop (some 100 ms for 128,000 lines). Two texts at the default entry cap (16 KiB) have
 * 32,768 lines at most.
 */
const DIFF_MAX_LINES = 40_000;

/** Characters in both texts past which they are not diffed (two lines of 1 Mi characters cost some 30 ms). */
const DIFF_MAX_CHARACTERS = 2 * 1024 * 1024;

/** Lines of a text as a reader counts them: none for '', and a last line without its newline counts. */
export function lineCount(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return text === '' || text.endsWith('\n') ? count : count + 1;
}

/**
 * The most lines added plus removed a diff may find between texts of `lines` lines in
 * all: the largest D with D × (D + lines / LINES_PER_STEP) ≤ DIFF_WORK (some 550 for
 * short texts, 240 for two of 8,000 lines, some 110 at DIFF_MAX_LINES).
 */
export function maxEditLength(lines: number): number {
  const snakes = lines / LINES_PER_STEP;
  return Math.max(0, Math.floor((Math.sqrt(snakes * snakes + 4 * DIFF_WORK) - snakes) / 2));
}

/** One side of a diff: its header name (`people/ada@3`), the description beside it, and the text. */
export interface DiffSide {
  readonly label: string;
  readonly description: string;
  readonly text: string;
}

/**
 * The unified diff from `left` to `right`; null when the texts are too large to diff
 * (DIFF_MAX_LINES, DIFF_MAX_CHARACTERS) or too different (DIFF_WORK, DIFF_TIMEOUT_MS),
 * unless they are alike.
 */
export function boundedPatch(left: DiffSide, right: DiffSide): string | null {
  // Two texts alike differ in nothing, however large: the patch is its headers alone.
  const alike = left.text === right.text;
  if (!alike && left.text.length + right.text.length > DIFF_MAX_CHARACTERS) return null;
  const lines = alike ? 0 : lineCount(left.text) + lineCount(right.text);
  if (lines > DIFF_MAX_LINES) return null;
  const patch = createTwoFilesPatch(
    left.label,
    right.label,
    alike ? '' : left.text,
    alike ? '' : right.text,
    left.description,
    right.description,
    {
      maxEditLength: maxEditLength(lines),
      timeout: DIFF_TIMEOUT_MS,
    },
  );
  return patch === undefined ? null : patch.replace(/^=+\n/, '');
}
