/**
 * What counts towards a user's caps. An entry takes the bytes of its name, its
 * description and its body: the index the model reads grows with the first two, so a
 * memory of empty bodies with long descriptions is bounded like any other.
 */

import { utf8Bytes } from './text.js';

/** UTF-8 bytes an entry takes against the user cap: name + description + body (its size). */
export function entryBytes(name: string, description: string, size: number): number {
  return utf8Bytes(name) + utf8Bytes(description) + size;
}

/** UTF-8 bytes a revision takes against the history cap: its description and body. */
export function revisionBytes(description: string, body: string): number {
  return utf8Bytes(description) + utf8Bytes(body);
}
