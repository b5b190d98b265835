/**
 * A description for a file that has none of its own: its first Markdown heading, else its
 * first line that is not empty — what a person reading the file would call it. The text is
 * read a line at a time, never split whole (a file of millions of lines is not copied).
 */

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

export function firstHeadingOrLine(text: string): string | undefined {
  let firstLine: string | undefined;
  for (let start = 0; start < text.length; ) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const line = text.slice(start, end);
    start = end + 1;
    if (/^#{1,6}\s+\S/.test(line)) return withoutClosingHashes(line.replace(/^#{1,6}\s+/, ''));
    if (firstLine === undefined && line.trim() !== '') firstLine = line.trim();
  }
  return firstLine;
}
