/**
 * What the MCP floor's server (floor-server.ts) asks of its memory, whichever database
 * keeps it (floor-sqlite.ts, floor-postgres.ts, floor-engram-schema.ts): the entries it
 * starts with, an open of one entry, and an append of one line that is durable when it
 * resolves; and the group commit the SQLite floors share.
 */

import type { IndexRow } from '../src/memory/model/format.js';

/** One entry as the floor answers it: its index line's parts, and its body. */
export interface FloorEntry extends IndexRow {
  readonly body: string;
}

/** Each user's entries, made before the server listens. */
export type FloorSeed = readonly { readonly user: string; readonly entries: readonly FloorEntry[] }[];

export interface FloorMemory {
  /** The user's entry `name` with the body of its latest revision. */
  open(user: string, name: string): Promise<FloorEntry>;
  /** Appends `line` to the user's entry `name`; resolves once durable, with the entry's new index line's parts. */
  append(user: string, name: string, line: string): Promise<IndexRow>;
  close(): Promise<void>;
}

/** One append waiting for its commit. */
export interface WaitingAppend {
  readonly user: string;
  readonly name: string;
  readonly line: string;
}

/**
 * Group commit for a floor in one process: the appends that arrive in one turn of the
 * event loop go to `commit` together on the next (one transaction, one fsync, as the
 * SQLite store's group commit shares them), each answered with its row once it returns.
 */
export function groupCommitted(
  commit: (appends: readonly WaitingAppend[]) => readonly IndexRow[],
): FloorMemory['append'] {
  let waiting: (WaitingAppend & { readonly resolve: (entry: IndexRow) => void })[] = [];
  const commitWaiting = () => {
    const batch = waiting;
    waiting = [];
    const saved = commit(batch);
    for (const [index, append] of batch.entries()) append.resolve(saved[index]!);
  };
  return (user, name, line) =>
    new Promise((resolve) => {
      if (waiting.length === 0) setImmediate(commitWaiting);
      waiting.push({ user, name, line, resolve });
    });
}
