/**
 * Copying a whole store into another (`engram migrate`): SQLite to PostgreSQL when a
 * team outgrows one machine, or back. Everything goes — every user's entries, trash,
 * revisions, usage and tokens — exactly as stored, and the target takes it in one
 * transaction. A target that already holds something is refused unless the caller
 * chose to replace it.
 */

import { EngramError } from './errors.js';
import type { Store, StoreDump } from './store.js';

export interface CopyOptions {
  /** Replace whatever the target holds; without it, a target that is not empty is refused. */
  readonly force: boolean;
  /** How to name the target in messages, e.g. "PostgreSQL postgres://db/engram". */
  readonly target: string;
  /** Told once the source is read, then as entries are written. */
  readonly onProgress?: (progress: CopyProgress) => void;
}

export interface CopyProgress {
  readonly entriesWritten: number;
  readonly entriesTotal: number;
}

/** What was copied. */
export interface CopySummary {
  readonly users: number;
  /** Live entries. */
  readonly entries: number;
  /** Dropped copies in the trash. */
  readonly trash: number;
  readonly revisions: number;
  readonly tokens: number;
  /** True when the target held something that the copy replaced. */
  readonly replaced: boolean;
}

export async function copyStore(from: Store, to: Store, options: CopyOptions): Promise<CopySummary> {
  const empty = await to.isEmpty();
  if (!empty && !options.force) {
    throw new EngramError(
      'CONFLICT',
      `${options.target} is not empty: it already holds entries, trash or tokens, so nothing was copied. ` +
        'Pass --force to replace everything in it with the copy, or copy into an empty database.',
    );
  }
  const dump = await from.dump();
  const entriesTotal = dump.entries.length;
  options.onProgress?.({ entriesWritten: 0, entriesTotal });
  await to.load(dump, {
    replace: options.force,
    onProgress: (entriesWritten) => options.onProgress?.({ entriesWritten, entriesTotal }),
  });
  return { ...summarize(dump), replaced: !empty };
}

function summarize(dump: StoreDump): Omit<CopySummary, 'replaced'> {
  const users = new Set([...dump.users.map((usage) => usage.user), ...dump.entries.map((entry) => entry.user)]);
  const live = dump.entries.filter((entry) => entry.droppedAt === null).length;
  return {
    users: users.size,
    entries: live,
    trash: dump.entries.length - live,
    revisions: dump.entries.reduce((sum, entry) => sum + entry.revisions.length, 0),
    tokens: dump.tokens.length,
  };
}
