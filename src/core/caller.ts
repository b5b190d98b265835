/**
 * Who is calling: whose memory, the label history records, and whether they may change
 * anything. One type for every door and for the store port: the MCP client, a token's
 * holder, the CLI, an embedding agent are all a Caller. Every service that changes
 * memory refuses a read-only caller the same way, worded for how it connected (a token
 * or an OAuth app).
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
  /** A read-only caller may read memory but not change it (a read-only token or connected app). */
  readonly readOnly?: boolean | undefined;
  /**
   * An app connected with OAuth, whose rights the user chose on the consent page: a refusal
   * tells it to have the app connected again, not to get another token.
   */
  readonly oauthApp?: boolean | undefined;
}

/**
 * A label a client chose for itself (its MCP client name), made safe to record and to
 * print: one line, no control characters, at most 100 characters; `fallback` if nothing is left.
 */
export function actorLabel(raw: string | undefined, fallback: string): string {
  const label = [...foldDescription((raw ?? '').replace(/\p{Cc}/gu, ' '))].slice(0, ACTOR_CAP).join('').trim();
  return label || fallback;
}

const READ_ONLY = 'This connection is read-only: it can use memory_open but not memory_write or memory_drop. ';
const READ_ONLY_TOKEN = `${READ_ONLY}Ask the user to connect with a read-write token to change memory.`;
const READ_ONLY_APP =
  `${READ_ONLY}The user connected this app to Engram with "Read only". To change memory, ask them to connect ` +
  'the app again (remove the connector and add it back) and leave "Read only" unticked on Engram’s consent page.';

export function assertWritable(caller: Caller): void {
  if (caller.readOnly) {
    throw new EngramError('READ_ONLY_TOKEN', caller.oauthApp ? READ_ONLY_APP : READ_ONLY_TOKEN, {
      reason: 'read-only-caller',
    });
  }
}
