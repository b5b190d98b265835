/**
 * Small text rules shared by every write: line endings, UTF-8 sizes, one-line
 * descriptions, and how numbers are shown to the reader.
 */

/**
 * Byte length of a string once encoded as UTF-8: the size Engram reports and caps.
 * Counted without encoding (a lone surrogate counts as the 3 bytes of U+FFFD, as encoding would).
 */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * Lone UTF-16 surrogates (JSON can carry them, UTF-8 cannot) become U+FFFD, as UTF-8
 * encoding would turn them; otherwise a store would keep other bytes than the size counts.
 */
function wellFormed(text: string): string {
  return text.replace(/\p{Surrogate}/gu, '\uFFFD');
}

/**
 * A file's text without the byte order mark (U+FEFF) some editors put at the start of a
 * UTF-8 file (Windows Notepad did, before 2019): it is not part of the document, and
 * JSON.parse refuses it.
 */
export function withoutByteOrderMark(text: string): string {
  return text.startsWith('\uFEFF') ? text.slice(1) : text;
}

/** Everything written is stored well-formed with `\n` line endings, whatever the client sent. */
export function normalizeNewlines(text: string): string {
  return wellFormed(text).replace(/\r\n?/g, '\n');
}

/**
 * White space, and every character that is not printable text: controls (NEL, ESC, BEL…),
 * format characters (bidi overrides, zero-width ones), line and paragraph separators.
 */
const NOT_PRINTABLE_RUN = /[\s\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu;

/**
 * Descriptions are one well-formed line of printable text: runs of white space and of
 * characters that are not printable fold to one space, so a description can neither
 * break its index line nor hide or reorder text around it.
 */
export function foldDescription(text: string): string {
  return wellFormed(text).replace(NOT_PRINTABLE_RUN, ' ').trim();
}

/** Length in characters (code points), as a person counts them. */
export function charLength(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** Appends a final newline to non-empty text that lacks one. */
export function withFinalNewline(text: string): string {
  return text === '' || text.endsWith('\n') ? text : `${text}\n`;
}

/** A whole number's digits, a comma before each group of three from the right. */
const THOUSANDS = /\B(?=(\d{3})+$)/g;

/**
 * 17210 -> "17,210": sizes in messages are read by people and models alike. A whole
 * number is grouped here, as toLocaleString('en-US') groups it: its first call in a
 * process loads ICU's number formats, some 20 ms, which `engram stdio` paid before its
 * first answer (a config file's size limit, worded in advance). Anything else is Intl's.
 */
export function formatCount(value: number): string {
  if (!Number.isSafeInteger(value)) return value.toLocaleString('en-US');
  const digits = String(Math.abs(value)).replace(THOUSANDS, ',');
  return value < 0 || Object.is(value, -0) ? `-${digits}` : digits;
}

/** (1, 'entry', 'entries') -> "1 entry"; (2, 'token') -> "2 tokens". */
export function countOf(count: number, one: string, many = `${one}s`): string {
  return `${formatCount(count)} ${count === 1 ? one : many}`;
}

/**
 * Text ended as a sentence: a full stop added unless it ends with one already (. ! ? …),
 * so that a message quoted into another (a server's, a driver's) never reads "..".
 */
export function asSentence(text: string): string {
  const trimmed = text.trimEnd();
  return /[.!?…]$/u.test(trimmed) ? trimmed : `${trimmed}.`;
}
