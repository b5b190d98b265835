/**
 * Purging, once for every backend: the copies go with every revision, and their users'
 * counters move by what they took — a live copy leaves the usage too (usage.ts).
 */

import { entryBytes } from '../../memory/model/usage.js';
import { get, type Work } from './drive.js';
import type { Copy, Primitives } from './primitives.js';

/** Deletes the user's dropped copies of `name` (and the live one with includeLive), returning them. */
export function* purge(p: Primitives, user: string, name: string, includeLive: boolean): Work<readonly Copy[]> {
  const copies = yield* get(p.copies(user, name, includeLive));
  yield* forget(p, user, copies);
  return copies;
}

/** Deletes every user's trash dropped at or before `cutoff`, returning the copies deleted. */
export function* purgeTrash(p: Primitives, cutoff: number): Work<readonly Copy[]> {
  const copies = yield* get(p.expiredTrash(cutoff));
  const byUser = new Map<string, Copy[]>();
  for (const copy of copies) {
    const theirs = byUser.get(copy.user);
    if (theirs) theirs.push(copy);
    else byUser.set(copy.user, [copy]);
  }
  for (const [user, theirs] of byUser) yield* forget(p, user, theirs);
  return copies;
}

function* forget(p: Primitives, user: string, copies: readonly Copy[]): Work<void> {
  if (copies.length === 0) return;
  const history = yield* get(
    p.deleteCopies(
      user,
      copies.map((copy) => copy.id),
    ),
  );
  const live = copies.filter((copy) => !copy.dropped);
  const totalBytes = live.reduce((sum, copy) => sum + entryBytes(copy.name, copy.description, copy.size), 0);
  yield* get(p.addUsage(user, { totalBytes: -totalBytes, entries: -live.length, historyBytes: -history }));
}
