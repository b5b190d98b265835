/**
 * The body of `POST /api/import` read as it arrives, never held whole (issue #9, class 11):
 * a streaming JSON parser hands over each element of the top-level arrays that hold a
 * document's items (`entries`, `trash`; `files` with `?from=`) and drops it; every other
 * top-level value is kept only as its kind (`[]`, `{}`, or the number or string itself),
 * unless asked for whole. The event loop gets a turn between slices of the body, so no
 * import holds it for long whatever its size; reading stops at the byte cap, past
 * MAX_JSON_DEPTH levels of nesting (the parser holds a frame per level), at a top-level
 * member met twice, or at the first refusal of an item, leaving the rest of the body unread.
 */

import type { IncomingMessage } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { JSONParser } from '@streamparser/json';
import { MAX_JSON_DEPTH, NO_ROOT, TopLevel } from '../../json/json-top-level.js';
import { EngramError } from '../../memory/model/errors.js';
import { formatCount } from '../../memory/model/text.js';
import { declaredTooLarge } from '../limits.js';
import { retryAfterHeaders, STATUS_BY_CODE } from './errors.js';
import type { ApiResult } from './route.js';
import { apiMessage } from './wording.js';

/** Bytes parsed between two turns of the event loop: a millisecond or two of parsing and checking (some 60 entries). */
const SLICE_BYTES = 16 * 1024;

/** Most members a body's top-level object may have: an export has six at most, a `?from` body two. */
const MAX_TOP_LEVEL_MEMBERS = 32;

/** How much of a long string the parser gathers before joining it to the rest. */
const STRING_BUFFER_BYTES = 64 * 1024;

/** A body not yet read, and how many bytes it may have. */
export interface BodySource {
  readonly req: IncomingMessage;
  readonly maxBytes: number;
}

export type StreamedJson =
  /** `top`: the document, its items taken out (an array of them is `[]`). */
  | { readonly kind: 'read'; readonly top: unknown }
  | { readonly kind: 'too-large' }
  /** Not JSON: `reason` says how, as JSON.parse would. */
  | { readonly kind: 'invalid'; readonly reason: string };

export interface StreamedItems {
  /**
   * The arrays whose elements go to `item`, one at a time, by their path: a top-level key
   * (`entries`), or inside each element of one (`entries.*.revisions`, before the element itself).
   */
  readonly arrays: readonly string[];
  /** The top-level values wanted whole (small ones, as the options of an import). */
  readonly whole?: readonly string[];
  /** Takes one element of `array` (throw to refuse the body: reading stops there). */
  item(array: string, value: unknown, index: number): void;
}

/**
 * Reads `source` through the parser, handing items to `items` as they complete. A refusal
 * thrown by `items.item` ends the reading and is thrown on.
 */
export async function readJsonStream(source: BodySource, items: StreamedItems): Promise<StreamedJson> {
  const { req, maxBytes } = source;
  if (declaredTooLarge(req, maxBytes)) return { kind: 'too-large' };
  const paths = [...items.arrays.map((key) => `$.${key}.*`), ...(items.whole ?? []).map((key) => `$.${key}`)];
  // Long strings (a file's text) are gathered 64 KB at a time, not a piece per escaped character.
  const parser = new JSONParser({ paths, keepStack: false, stringBufferSize: STRING_BUFFER_BYTES });
  const top = new TopLevel();
  let refusal: unknown;
  parser.onToken = (token) => {
    top.token(token);
    // The parser holds a frame of some 250 bytes per level: a body of `[` would hold 250 times its size.
    if (top.depth > MAX_JSON_DEPTH) {
      refusal = new EngramError(
        'INVALID_ARGUMENT',
        `the request body is JSON nested more than ${MAX_JSON_DEPTH} levels deep; nothing was imported.`,
      );
      throw refusal;
    }
    // Read as a stream, a repeated `entries` would import both arrays' elements, where the
    // document (as JSON.parse reads it, and the CLI does) holds only the last.
    if (top.repeated !== undefined) {
      refusal = new EngramError(
        'INVALID_ARGUMENT',
        `the request body has the top-level member ${JSON.stringify(top.repeated)} twice, which no import document ` +
          'has; nothing was imported.',
      );
      throw refusal;
    }
    // Each member is kept (as its kind) until the document's checks: a body of a million keys would be held whole.
    if (top.members > MAX_TOP_LEVEL_MEMBERS) {
      refusal = new EngramError(
        'INVALID_ARGUMENT',
        `the request body has more than ${MAX_TOP_LEVEL_MEMBERS} top-level members, which no import document has; ` +
          'nothing was imported.',
      );
      throw refusal;
    }
  };
  parser.onValue = ({ value, key, parent, stack }) => {
    if (stack.length === 1 && typeof key === 'string') top.set(key, value);
    // The array's path, its indices as `*`; members of an object where an array belongs are left to the checks.
    const array = stack
      .slice(1)
      .map((level) => (typeof level.key === 'number' ? '*' : level.key))
      .join('.');
    if (typeof key !== 'number' || !items.arrays.includes(array)) return;
    try {
      items.item(array, value, key);
    } catch (error) {
      refusal = error;
      throw error;
    }
    // The parser drops a top-level array's elements itself; a nested one's (inside an element still being read) is dropped here.
    if (stack.length > 2 && Array.isArray(parent)) parent.length = 0;
  };
  /** Feeds the parser (or ends it): the reason the body is not JSON, if it is not. */
  const parse = (bytes?: Buffer): string | undefined => {
    try {
      if (bytes) parser.write(bytes);
      else if (!parser.isEnded) parser.end();
      return undefined;
    } catch (error) {
      if (refusal !== undefined) throw refusal;
      const message = error instanceof Error ? error.message : String(error);
      return /ended in (mid-parsing|the middle)/.test(message) ? 'Unexpected end of JSON input' : message;
    }
  };
  let received = 0;
  for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    received += chunk.byteLength;
    if (received > maxBytes) {
      req.pause();
      return { kind: 'too-large' };
    }
    for (let start = 0; start < chunk.byteLength; start += SLICE_BYTES) {
      const reason = parse(chunk.subarray(start, start + SLICE_BYTES));
      if (reason !== undefined) return { kind: 'invalid', reason };
      await nextTurn();
    }
  }
  const reason = parse();
  if (reason !== undefined) return { kind: 'invalid', reason };
  if (top.root === NO_ROOT) return { kind: 'invalid', reason: 'Unexpected end of JSON input' };
  return { kind: 'read', top: top.root };
}

/** The refusal of a body over the import cap (the rest of it is never read). */
export function bodyTooLarge(maxBytes: number): ApiResult {
  const message = `Request body too large: /api/import takes at most ${formatCount(maxBytes)} bytes; nothing was imported.`;
  return { status: 413, headers: { Connection: 'close' }, body: { error: { code: 'TOO_LARGE', message } } };
}

/**
 * A refusal made while the body was read, as the router would send it, closing the
 * connection when the rest of the body was left unread.
 */
export function refusedWhileReading(error: EngramError, source: BodySource): ApiResult {
  return {
    status: STATUS_BY_CODE[error.code],
    headers: {
      ...retryAfterHeaders(error.code, error.detail),
      ...(source.req.complete ? {} : { Connection: 'close' }),
    },
    body: { error: { code: error.code, message: apiMessage(error) } },
  };
}
