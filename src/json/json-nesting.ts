/**
 * How deep a JSON text nests, checked before it is parsed. JSON.parse copes with any
 * depth, but slowly and at a great cost (a line of 25 million `[` held the server 15 s and
 * took 1.2 GB), and what walks the value afterwards (the MCP SDK's validation,
 * JSON.stringify) recurses and overflows the stack: a client's mistake would be answered
 * as a server failure. Every door that reads a JSON request (stdio, /mcp, /api), and every
 * importer reading a file of JSON, refuses one nested deeper than MAX_JSON_DEPTH; the scan
 * stops as soon as the limit is passed, so a hostile text costs no more than its first levels.
 */

import { MAX_JSON_DEPTH } from './json-top-level.js';

export { MAX_JSON_DEPTH };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** The index of the quote that closes the string opened at `start`, or -1 (the text is not JSON). */
function endOfString(text: string, start: number): number {
  let at = start;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at === -1) return -1;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/** True when arrays and objects nest deeper than `limit` in `text` (exact for valid JSON). */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      i = endOfString(text, i);
      if (i === -1) return false;
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      depth++;
      if (depth > limit) return true;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}
