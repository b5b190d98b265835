/**
 * Who is calling: whose memory, the label history records, and whether they may change
 * anything, or only propose changes for the user's review. One type for every door and for the store port: the MCP client, a token's
 * holder, the CLI, an embedding agent are all a Caller. Every service that changes
 * memory refuses a read-only caller the same way, worded for how it connected (a token,
 * an OAuth app the user connected read-only, or one that narrowed its own token).
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
   * An app connected with OAuth: a refusal tells it how to get write access back, not to get
   * another token — from the user when they chose "Read only" on the consent page
   * (`readOnlyGrant`), from its own authorization otherwise (it narrowed its token itself).
   */
  readonly oauthApp?: boolean | undefined;
  /** The app's grant itself is read-only: the user chose "Read only" on the consent page. */
  readonly readOnlyGrant?: boolean | undefined;
  /**
   * A review-mode caller (a token or connected app set to "changes need my review"): its
   * writes and drops are checked as anyone's, then held as proposals (memory/review.ts)
   * that change nothing until the user approves them.
   */
  readonly review?: boolean | undefined;
}

/**
 * A label a client chose for itself (its MCP client name), made safe to record and to
 * print: one line, no control characters, at most 100 characters; `fallback` if nothing is left.
 */
export function actorLabel(raw: string | undefined, fallback: string): string {
  // No name given (every anonymous HTTP request without a session's): nothing to clean.
  if (raw === undefined) return fallback;
  const label = [...foldDescription(raw.replace(/\p{Cc}/gu, ' '))].slice(0, ACTOR_CAP).join('').trim();
  return label || fallback;
}

const READ_ONLY = 'This connection is read-only: it can use memory_open but not memory_write or memory_drop. ';
const READ_ONLY_TOKEN = `${READ_ONLY}Ask the user to connect with a read-write token to change memory.`;
const READ_ONLY_APP =
  `${READ_ONLY}The user connected this app to Engram with "Read only". To change memory, ask them to connect ` +
  'the app again (remove the connector and add it back) and choose "Read and change my memory" on Engram’s consent ' +
  'page (only "Read only" is offered when the app asked only to read: it must then ask for the scope memory:write).';
const READ_ONLY_NARROWED =
  `${READ_ONLY}The user let this app change memory, but the app narrowed its own token to the scope ` +
  'memory:read when refreshing it, and a refresh cannot widen it again. To change memory, the app must ' +
  'authorize again, asking for the scope "memory:read memory:write".';

function readOnlyWording(caller: Caller): string {
  if (!caller.oauthApp) return READ_ONLY_TOKEN;
  return caller.readOnlyGrant ? READ_ONLY_APP : READ_ONLY_NARROWED;
}

export function assertWritable(caller: Caller): void {
  if (caller.readOnly) {
    throw new EngramError('READ_ONLY_TOKEN', readOnlyWording(caller), {
      reason: 'read-only-caller',
    });
  }
}
