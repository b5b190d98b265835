/**
 * The lines of a source text, handed over one at a time with a step (a yield) every
 * STEP_UNITS lines or STEP_LINE_CHARS characters, whichever comes first. A text is never
 * split whole first (a file of 32 million short lines would be as many strings at once),
 * each line end is found by one scan of the text (`\r` ends are looked for as they are
 * reached, not searched for again from each line), and a few thousand long lines are not
 * one step either.
 */

import { STEP_UNITS, type Steps } from './steps.js';

/** Characters of lines read between two yields: a fraction of a millisecond of work on them. */
export const STEP_LINE_CHARS = 256 * 1024;

export interface LineRange {
  /** Where the first line starts (default 0). */
  readonly start?: number;
  /** Where the last line ends, not taken (default: the end of the text). */
  readonly end?: number;
  /** `\r` and `\r\n` end lines too, not only `\n` (a paste from another system). */
  readonly carriageReturns?: boolean;
}

/**
 * Calls `each` with every line of `text` within the range, numbered from 1, and where the
 * line after it starts; `each` returning false stops the reading. As split('\n') would, a
 * text ending in a line end has an empty last line.
 */
export function* eachLine(
  text: string,
  each: (line: string, number: number, next: number) => boolean | undefined,
  range: LineRange = {},
): Steps<void> {
  const last = Math.min(range.end ?? text.length, text.length);
  /** The next position of `char` from `from`, or `last` when there is none before it. */
  const next = (char: string, from: number) => {
    const at = text.indexOf(char, from);
    return at === -1 || at > last ? last : at;
  };
  // The next `\n` and `\r` found so far: searched for again only once the reading has passed them.
  let newline = -1;
  let carriage = range.carriageReturns ? -1 : last;
  let number = 0;
  let lines = 0;
  let chars = 0;
  for (let start = range.start ?? 0; start <= last; ) {
    if (newline < start) newline = next('\n', start);
    if (carriage < start) carriage = next('\r', start);
    const end = Math.min(newline, carriage);
    const crlf = end === carriage && end < last && text.charCodeAt(end + 1) === 10;
    const line = text.slice(start, end);
    start = end + (crlf ? 2 : 1);
    if (each(line, ++number, start) === false) return;
    chars += line.length;
    if (++lines >= STEP_UNITS || chars >= STEP_LINE_CHARS) {
      lines = 0;
      chars = 0;
      yield;
    }
  }
}
