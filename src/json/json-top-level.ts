/**
 * The top level of a JSON text as a streaming parser's tokens show it, for the readers
 * that never hold a document whole (the REST import, the llama.cpp WebUI export read in
 * slices): the root's kind, and each top-level member's kind (`{}`, `[]`, or the scalar
 * itself) for the members asked to be kept, how many those are, and the first of them met
 * twice. How deep the tokens are is tracked too, since the parser holds a frame per level.
 */

import { type ParsedTokenInfo, TokenType } from '@streamparser/json';

/** Deepest nesting of arrays and objects accepted by any door (an MCP request needs fewer than 10). */
export const MAX_JSON_DEPTH = 64;

/** The root before any token: the text held no value (yet). */
export const NO_ROOT = Symbol('no root');

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function standIn(token: TokenType, value: unknown): unknown {
  if (token === TokenType.LEFT_BRACE) return {};
  if (token === TokenType.LEFT_BRACKET) return [];
  return value;
}

export class TopLevel {
  root: unknown = NO_ROOT;
  /** How many arrays and objects the tokens so far are inside. */
  depth = 0;
  /** How many distinct members of the top-level object are kept so far. */
  members = 0;
  /**
   * The first kept member met a second time, if any. JSON.parse keeps the last value of a
   * repeated key, a reader of the stream would take both: a reader should refuse the text.
   */
  repeated: string | undefined;
  private key: string | undefined;
  private expectKey = false;

  /** `keep` says which members' kinds are kept in `root` (all by default). */
  constructor(private readonly keep: (key: string) => boolean = () => true) {}

  token({ token, value }: ParsedTokenInfo): void {
    if (this.depth === 0) this.root = standIn(token, value);
    else if (this.depth === 1 && isRecord(this.root)) {
      if (token === TokenType.COMMA) this.expectKey = true;
      else if (this.expectKey) {
        if (token === TokenType.STRING) {
          this.key = String(value);
          // Kept already: an earlier member had this key (a member's own value is kept after its key).
          if (this.keep(this.key) && Object.hasOwn(this.root, this.key)) this.repeated ??= this.key;
        }
        this.expectKey = false;
      } else if (token !== TokenType.COLON && token !== TokenType.RIGHT_BRACE && this.key !== undefined) {
        this.set(this.key, standIn(token, value));
      }
    }
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) {
      this.depth++;
      if (this.depth === 1) this.expectKey = token === TokenType.LEFT_BRACE;
    } else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) this.depth--;
  }

  /** Sets a member (defineProperty: a key such as `__proto__` stays a plain key, as JSON.parse keeps it). */
  set(key: string, value: unknown): void {
    if (!isRecord(this.root) || !this.keep(key)) return;
    if (!Object.hasOwn(this.root, key)) this.members++;
    Object.defineProperty(this.root, key, { value, enumerable: true, writable: true, configurable: true });
  }
}
