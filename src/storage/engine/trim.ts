/**
 * Keeping a user's history under the history cap, once for every backend: the order and
 * the bounds are history-cap.ts's (oldest revisions that are not the latest of their
 * entry, then the oldest dropped entries whole), walked in batches of TRIM_BATCH rows
 * read by the backend's index (primitives.ts).
 */

import { TRIM_BATCH, type Trim } from '../history-cap.js';
import { get, type Work } from './drive.js';
import type { Primitives } from './primitives.js';

/** Trims the user's history as `trim` (undefined: within the cap) requires; `liveEntries` is theirs now. */
export function* trimHistory(p: Primitives, user: string, trim: Trim | undefined, liveEntries: number): Work<void> {
  if (!trim) return;
  for (let more = true; more && !trim.done; ) {
    const older = yield* get(p.olderRevisions(user, TRIM_BATCH, liveEntries));
    const doomed = trim.take(older);
    if (doomed.length > 0) yield* get(p.deleteRevisions(user, doomed));
    more = older.length === TRIM_BATCH;
  }
  for (let more = true; more && !trim.done; ) {
    const trash = yield* get(p.oldestTrash(user, TRIM_BATCH));
    const ids = trim.take(trash).map((copy) => copy.id);
    if (ids.length > 0) yield* get(p.deleteCopies(user, ids));
    more = trash.length === TRIM_BATCH;
  }
  if (trim.freed > 0) yield* get(p.addUsage(user, { totalBytes: 0, entries: 0, historyBytes: -trim.freed }));
}
