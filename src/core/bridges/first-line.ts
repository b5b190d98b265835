/**
 * A description for a file that has none of its own: its first Markdown heading, else its
 * first line that is not empty — what a person reading the file would call it.
 */

export function firstHeadingOrLine(text: string): string | undefined {
  const lines = text.split('\n');
  const heading = lines.find((line) => /^#{1,6}\s+\S/.test(line));
  if (heading) return heading.replace(/^#{1,6}\s+/, '').replace(/\s+#+\s*$/, '');
  return lines.find((line) => line.trim() !== '')?.trim();
}
