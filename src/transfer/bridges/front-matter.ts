/**
 * The front matter of a Markdown entry file: `---`, `description: "…"`, `---`, then the
 * body byte for byte. The description is written as a JSON string, which is also a YAML
 * double-quoted scalar, so any description (quotes, `#`, `---`, unicode) reads back the
 * same in Engram and in any other Markdown tool. Reading also takes the plain and
 * single-quoted scalars people write by hand.
 */

import { eachLine } from './lines.js';
import { runWhole, type Steps } from './steps.js';

const FENCE = '---\n';

/** An entry file's text: front matter holding the description, then the body as it is. */
export function withFrontMatter(description: string, body: string): string {
  // JSON leaves the line and paragraph separators raw; escaped, no reader can take them for line ends.
  const quoted = JSON.stringify(description).replaceAll('\u2028', '\\u2028').replaceAll('\u2029', '\\u2029');
  return `${FENCE}description: ${quoted}\n${FENCE}${body}`;
}

export interface FrontMatter {
  /** The `description:` value, or undefined when there is none. */
  readonly description: string | undefined;
  /** The `type:` value in lower case (Claude Code writes user, feedback, project, reference), if there is one. */
  readonly type: string | undefined;
  readonly body: string;
}
/** A YAML scalar as people write it: "double" (JSON escapes), 'single' ('' for '), or plain. */
function scalar(raw: string): string | undefined {
  const value = raw.trim();
  if (value.startsWith('"')) {
    try {
      const parsed: unknown = JSON.parse(value);
      return typeof parsed === 'string' ? parsed : undefined;
    } catch {
      return undefined;
    }
  }
  if (value.startsWith("'")) {
    return value.endsWith("'") && value.length >= 2 ? value.slice(1, -1).replaceAll("''", "'") : undefined;
  }
  // A comment starts at the first # after a space; found in one pass (\s+#.*$ would try each space of a long run again).
  const comment = /\s#/.exec(value);
  return comment ? value.slice(0, comment.index).trimEnd() : value;
}

/**
 * Splits `text` (with `\n` line ends) into its front matter's description and type, and
 * the body. Text without front matter is all body. Returns an error message for front
 * matter that is opened but never closed, or a description that cannot be read. Only the
 * front matter is read line by line (up to its closing `---`), a step every few thousand
 * lines: never split whole, however many lines it holds.
 */
export function* frontMatterSteps(text: string): Steps<FrontMatter | string> {
  if (!text.startsWith(FENCE)) return { description: undefined, type: undefined, body: text };
  const end = text.indexOf(`\n${FENCE}`, FENCE.length - 1);
  const close = end < 0 && text.endsWith('\n---') ? text.length - 4 : end;
  if (close < 0) return 'its front matter (the lines after the first ---) is never closed by a --- line';
  const body = text.slice(Math.min(text.length, close + 1 + FENCE.length));
  let description: string | undefined;
  let type: string | undefined;
  let unreadable: string | undefined;
  yield* eachLine(
    text,
    (line) => {
      type ??= /^type\s*:\s*["']?([\w-]+)/.exec(line)?.[1]?.toLowerCase();
      const match = /^description\s*:(.*)$/s.exec(line);
      if (!match) return true;
      description = scalar(match[1] ?? '');
      if (description === undefined) unreadable = `its description (${line.trim()}) is not a readable YAML string`;
      return description !== undefined;
    },
    { start: FENCE.length, end: close },
  );
  return unreadable ?? { description, type, body };
}

/** The same, in one stretch (a single file, and tests). */
export function readFrontMatter(text: string): FrontMatter | string {
  return runWhole(frontMatterSteps(text));
}
