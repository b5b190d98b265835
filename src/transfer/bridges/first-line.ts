/**
 * A description for a file that has none of its own: its first Markdown heading, else its
 * first line that is not empty — what a person reading the file would call it. The text is
 * read a line at a time, never split whole (a file of millions of lines is not copied), and
 * a step at a time (a file of millions of lines and no heading is not read in one stretch).
 */

import { eachLine } from './lines.js';
import { runWhole, type Steps } from './steps.js';

/**
 * A heading without its closing `#`s (`Title ##` → `Title`), found from the end in one pass
 * (a pattern such as \s+#+\s*$ would try each space of a long line again).
 */
function withoutClosingHashes(heading: string): string {
  const trimmed = heading.trimEnd();
  let end = trimmed.length;
  while (end > 0 && trimmed[end - 1] === '#') end--;
  return end < trimmed.length && /\s/.test(trimmed[end - 1] ?? '') ? trimmed.slice(0, end).trimEnd() : heading;
}

/** The first heading's text, else the first line not empty, else undefined: line by line, a step every few thousand. */
export function* firstHeadingOrLineSteps(text: string): Steps<string | undefined> {
  let firstLine: string | undefined;
  let heading: string | undefined;
  yield* eachLine(text, (line) => {
    if (/^#{1,6}\s+\S/.test(line)) {
      heading = withoutClosingHashes(line.replace(/^#{1,6}\s+/, ''));
      return false;
    }
    if (firstLine === undefined && line.trim() !== '') firstLine = line.trim();
    return true;
  });
  return heading ?? firstLine;
}

/** The same, in one stretch (tests). */
export function firstHeadingOrLine(text: string): string | undefined {
  return runWhole(firstHeadingOrLineSteps(text));
}
