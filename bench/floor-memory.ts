/**
 * What the MCP floor's server (floor-server.ts) asks of its memory, whichever database
 * keeps it (floor-sqlite.ts, floor-postgres.ts): the entries it starts with, an open of
 * one entry, and an append of one line that is durable when it resolves.
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
