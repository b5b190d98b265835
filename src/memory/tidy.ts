/**
 * Tidying a memory that has grown copies (#29): `duplicates` lists the pairs of entries
 * whose names, descriptions or bodies are close (model/near-duplicates.ts), and `merge`
 * folds one entry of a pair into the other. For people, never for the model.
 *
 * A listing reads the index, then the bodies BATCH entries at a time, keeping only each
 * entry's features and letting the event loop run between batches, and between the
 * finder's steps, so a memory of 10,000 entries never holds it long. A merge is one transaction (mutateAll, as a revert
 * applies): `into` receives `from`'s description and body under a heading naming it
 * (model/merge-text.ts), its own description unchanged, and `from` goes to the trash; both
 * revisions carry the note `merge <id>: <from> into <into>`, so that `engram revert --undo
 * <id>` (revert.ts) undoes it exactly. It refuses (nothing changed) when either entry moved
 * since the person looked at it, and when the merged body would be over the entry cap.
 * `into` must be in a group that can be written, as a person's save must
 * (editor.ts); `from` may be in any group, as a drop may.
 */

import { setImmediate } from 'node:timers/promises';
import { assertWritable, type Caller } from './model/caller.js';
import { bodyOverCap } from './model/caps.js';
import { EngramError } from './model/errors.js';
import { mergedBody } from './model/merge-text.js';
import { parseName, parseWritableName } from './model/names.js';
import {
  byCodePoint,
  type DuplicateField,
  DuplicateFinder,
  entryFeatures,
  type FieldSimilarity,
} from './model/near-duplicates.js';
import type { Policy } from './model/policy.js';
import { formatCount, utf8Bytes } from './model/text.js';
import { entryBytes } from './model/usage.js';
import type { DecideAll, Store, StoredEntry, Usage, WriteRules } from './port.js';
import type { Recovery } from './recovery.js';
import { newChangeId } from './revert.js';

/** Pairs listed when no limit is asked for. */
export const DUPLICATES_LIMIT_DEFAULT = 50;
/** The most pairs one listing gives. */
export const DUPLICATES_LIMIT_CAP = 200;
/** Entries whose bodies are read at once: a batch's features are computed before the next is read. */
export const BATCH = 200;

/** One entry of a pair, as the person sees it to choose. */
export interface DuplicateSide {
  readonly name: string;
  readonly description: string;
  /** UTF-8 bytes of the body. */
  readonly size: number;
  /** Pass it back to merge: it refuses if the entry changed since. */
  readonly revision: number;
  /** When it last changed, in ms since the epoch. */
  readonly updated: number;
}

export interface DuplicatePair {
  /** `a`'s name comes first in code-point order. */
  readonly a: DuplicateSide;
  readonly b: DuplicateSide;
  readonly score: number;
  readonly reasons: readonly DuplicateField[];
  readonly similarity: FieldSimilarity;
}

export interface Duplicates {
  /** Highest score first. */
  readonly pairs: readonly DuplicatePair[];
  /** Entries compared. */
  readonly examined: number;
  /** More pairs may be close than listed (more than the limit, or too many alike to compare them all). */
  readonly truncated: boolean;
  /** The work done: characters of bodies examined, candidate pairs scored, and pairs visited finding them. */
  readonly work: { readonly characters: number; readonly candidates: number; readonly visits: number };
}

export interface MergeRequest {
  /** The entry merged in, then dropped to the trash. */
  readonly from: string;
  /** The entry that receives it. */
  readonly into: string;
  /** The revisions the person looked at: refused (merge-stale) if either entry changed since. */
  readonly fromRevision: number;
  readonly intoRevision: number;
}

export interface MergeResult {
  /** Undo it with this: engram revert --undo ID, or POST /api/revert/{id}/undo. */
  readonly id: string;
  /** The note both revisions carry. */
  readonly note: string;
  readonly into: string;
  readonly dropped: string;
}

export class Tidy {
  constructor(
    private readonly store: Store,
    private readonly policy: Policy,
    private readonly rules: WriteRules,
    private readonly recovery: Recovery,
  ) {}

  /** The caller's possible duplicates: at most `limit` pairs (DUPLICATES_LIMIT_DEFAULT, at most DUPLICATES_LIMIT_CAP). */
  async duplicates(caller: Caller, options: { readonly limit?: number | undefined } = {}): Promise<Duplicates> {
    const limit = options.limit ?? DUPLICATES_LIMIT_DEFAULT;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > DUPLICATES_LIMIT_CAP) {
      throw new EngramError(
        'INVALID_ARGUMENT',
        `A listing of possible duplicates gives 1 to ${DUPLICATES_LIMIT_CAP} pairs; ${String(limit)} were asked for.`,
        { reason: 'duplicates-limit', max: DUPLICATES_LIMIT_CAP },
      );
    }
    // In the finder's order, whatever a store's collation.
    const names = (await this.store.index(caller.user)).map((row) => row.name).sort(byCodePoint);
    const finder = new DuplicateFinder();
    const sides = new Map<string, DuplicateSide>();
    let characters = 0;
    for (let start = 0; start < names.length; start += BATCH) {
      if (start > 0) await setImmediate();
      const batch = names.slice(start, start + BATCH);
      const read = new Map((await this.store.get(caller.user, batch)).map((entry) => [entry.name, entry]));
      // In the index's order; an entry dropped since the index was read is left out.
      for (const name of batch) {
        const entry = read.get(name);
        if (!entry) continue;
        const features = entryFeatures(entry.name, entry.description, entry.body);
        characters += features.examined;
        finder.add(features);
        const { description, size, revision, updated } = entry;
        sides.set(name, { name, description, size, revision, updated });
      }
    }
    const steps = finder.search(limit);
    let step = steps.next();
    while (!step.done) {
      await setImmediate();
      step = steps.next();
    }
    const found = step.value;
    return {
      pairs: found.pairs.map(({ a, b, score, reasons, similarity }) => ({
        a: sides.get(a) as DuplicateSide,
        b: sides.get(b) as DuplicateSide,
        score,
        reasons,
        similarity,
      })),
      examined: sides.size,
      truncated: found.truncated,
      work: { characters, ...found.work },
    };
  }

  /** Merges `from` into `into` in one transaction, as the module says; undone by the revert of its id. */
  async merge(caller: Caller, request: MergeRequest): Promise<MergeResult> {
    assertWritable(caller);
    const from = parseName(request.from, this.policy);
    const into = parseWritableName(request.into, this.policy);
    for (const revision of [request.fromRevision, request.intoRevision]) {
      if (!Number.isSafeInteger(revision) || revision < 1) {
        throw new EngramError(
          'INVALID_ARGUMENT',
          'A merge names the revision of each entry the person looked at: a whole number from 1.',
        );
      }
    }
    if (from === into) {
      throw new EngramError('INVALID_ARGUMENT', `${from} cannot be merged into itself: choose two entries.`, {
        reason: 'merge-same',
        name: from,
      });
    }
    // Checked first on the two entries alone, then again inside the transaction on every entry.
    const [entries, usage] = await Promise.all([
      this.store.get(caller.user, [from, into]),
      this.store.usage(caller.user),
    ]);
    this.checked(entries, usage, { ...request, from, into });
    const id = newChangeId(this.rules.now());
    const note = `merge ${id}: ${from} into ${into}`;
    const decide: DecideAll = (all, now) => {
      const { body, description } = this.checked(all, now, { ...request, from, into });
      return [
        { name: into, change: { kind: 'put', operation: 'replace', description, body } },
        { name: from, change: { kind: 'drop' } },
      ];
    };
    await this.store.mutateAll(caller, decide, { ...this.rules, note });
    await this.recovery.purgeIfNoRetention();
    return { id, note, into, dropped: from };
  }

  /** The merged body and `into`'s description (kept), once both entries are found at the revisions named and it keeps to the caps. */
  private checked(
    entries: readonly StoredEntry[],
    usage: Usage,
    request: MergeRequest,
  ): { body: string; description: string } {
    const entryOf = (name: string, expected: number): StoredEntry => {
      const entry = entries.find((item) => item.name === name);
      if (!entry) {
        throw new EngramError(
          'NOT_FOUND',
          `${name} is not in this memory (it may have been dropped or renamed meanwhile): nothing was merged.`,
          { reason: 'merge-missing', name },
        );
      }
      if (entry.revision !== expected) {
        throw new EngramError(
          'CONFLICT',
          `${name} has changed since it was looked at (revision ${expected}, now ${entry.revision}): nothing was ` +
            'merged. Look at both entries again, then merge.',
          { reason: 'merge-stale', name, expected, current: entry.revision },
        );
      }
      return entry;
    };
    const from = entryOf(request.from, request.fromRevision);
    const into = entryOf(request.into, request.intoRevision);
    const body = mergedBody(into.body, from);
    const over = bodyOverCap(body, this.policy);
    if (over) throw overCap({ part: 'body', from: from.name, into: into.name, ...over });
    const total =
      usage.totalBytes -
      entryBytes(from.name, from.description, from.size) -
      entryBytes(into.name, into.description, into.size) +
      entryBytes(into.name, into.description, utf8Bytes(body));
    if (total > this.policy.userCap && total > usage.totalBytes) {
      throw overCap({ part: 'total', from: from.name, into: into.name, size: total, cap: this.policy.userCap });
    }
    return { body, description: into.description };
  }
}

function overCap(detail: { part: 'body' | 'total'; from: string; into: string; size: number; cap: number }) {
  const { part, from, into, size, cap } = detail;
  const problem =
    part === 'body'
      ? `${into} would be ${formatCount(size)} bytes with ${from} merged in, ${formatCount(size - cap)} over the ` +
        `entry cap of ${formatCount(cap)}. Shorten one of them first (or move part of ${from} into another entry)`
      : `the memory would take ${formatCount(size)} bytes, over its cap of ${formatCount(cap)}. Make room first ` +
        '(shorten or drop entries that are no longer needed)';
  return new EngramError('TOO_LARGE', `${problem}, then merge again; nothing was merged.`, {
    reason: 'merge-over-cap',
    ...detail,
  });
}
