/**
 * What the CLI prints may reach a terminal, and entries are written by models: a name,
 * description, body, actor or token label may hold escape sequences (ESC, CSI, OSC, BEL),
 * other C0/C1 control characters or bidi overrides, which would let a memory clear the
 * screen, set the window title, hide or reorder text, or plant a hyperlink.
 *
 * The rule, applied by output.ts to everything it writes so no command can forget it:
 * - Text for people (results on stdout, errors and log lines on stderr, commander's help
 *   and messages) shows each such character as a visible escape: `\x1b`, `\x9b`, `\u202e`.
 *   Tab and newline stay, since bodies are multi-line (a description holds neither:
 *   every write folds it to one line). Backslashes are not doubled, so the text reads as
 *   written; the exact bytes are in --json.
 * - This holds whether or not stdout is a terminal (`engram open x | less -R` is as safe),
 *   and loses nothing a program needs: no human output is a raw body (open and show print
 *   an index line above it); a program that needs a body's exact bytes uses --json.
 * - --json stays standard JSON whose strings parse back to the exact stored text; the
 *   characters JSON.stringify leaves raw (DEL, C1, bidi overrides) are written as \uXXXX.
 * - The one escape sequence Engram writes itself is its highlight of search matches
 *   (`highlighted`), and only when stdout is a terminal; the text inside is made safe first.
 * - Bytes pass unchanged where they are data: `engram export` to stdout or a file, and the
 *   new text `engram write` reads from stdin or a file.
 */

/** Control characters (C0, DEL, C1) and the bidi embeddings, overrides and isolates. */
const UNSAFE = /[\p{Cc}\u202A-\u202E\u2066-\u2069]/gu;
/** Those JSON.stringify does not escape itself (it escapes C0). */
const UNSAFE_IN_JSON = /[\u007F-\u009F\u202A-\u202E\u2066-\u2069]/gu;

function hex(char: string, digits: number): string {
  return char.charCodeAt(0).toString(16).padStart(digits, '0');
}

/** Anything but printable ASCII, tab and newline: text without it has nothing to escape. */
const NOT_PLAIN = /[^\x20-\x7e\t\n]/;

/** Text for people, safe to print: every unsafe character but tab and newline shown escaped. */
export function forTerminal(text: string): string {
  // A server's log line per request is plain ASCII: a quick test spares it the Unicode scan.
  if (!NOT_PLAIN.test(text)) return text;
  return text.replace(UNSAFE, (char) => {
    if (char === '\n' || char === '\t') return char;
    return char < '\u0100' ? `\\x${hex(char, 2)}` : `\\u${hex(char, 4)}`;
  });
}

/** JSON of `data` that parses back to it exactly and holds no character a terminal acts on. */
export function jsonForTerminal(
  data: unknown,
  indent?: number,
  replacer?: (key: string, value: unknown) => unknown,
): string {
  return JSON.stringify(data, replacer, indent).replace(UNSAFE_IN_JSON, (char) => `\\u${hex(char, 4)}`);
}

/** Bold red on, and every attribute off: how matches are highlighted (as grep does). */
const HIGHLIGHT_ON = '\x1b[1;31m';
const HIGHLIGHT_OFF = '\x1b[0m';

/** Text for people, safe to print, highlighted: for a terminal only. */
export function highlighted(text: string): string {
  return `${HIGHLIGHT_ON}${forTerminal(text)}${HIGHLIGHT_OFF}`;
}
