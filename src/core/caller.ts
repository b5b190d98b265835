/**
 * Who is calling: whose memory, the label history records, and whether they may change
 * anything. One type for every door and for the store port: the MCP client, a token's
 * holder, the CLI, an embedding agent are all a Caller. Every service that changes
 * memory refuses a read-only caller the same way.
 */

import { EngramError } from './errors.js';
import { foldDescription } from './text.js';

/** Longest actor label kept in history, in characters. */
const ACTOR_CAP = 100;

export interface Caller {
  /** Whose memory: every read and write is keyed by it. */
  readonly user: string;
  /** Who acts, as history records it: the MCP client's name, a token's label, `cli`, `api`, `agent`. */
  readonly label: string;
  /** A read-only caller may read memory but not change it (a read-only token). */
  readonly readOnly?: boolean | undefined;
}

/**
 * A label a client chose for itself (its MCP client name), made safe to record and to
 * print: one line, no control characters, at most 100 characters; `fallback` if nothing is left.
 */
export function actorLabel(raw: string | undefined, fallback: string): string {
  const label = [...foldDescription((raw ?? '').replace(/\p{Cc}/gu, ' '))].slice(0, ACTOR_CAP).join('').trim();
  return label || fallback;
}

export function assertWritable(caller: Caller): void {
  if (caller.readOnly) {
    throw new EngramError(
      'READ_ONLY_TOKEN',
      'This connection is read-only: it can use memory_open but not memory_write or memory_drop. ' +
        'Ask the user to connect with a read-write token to change memory.',
      { reason: 'read-only-caller' },
    );
  }
}
