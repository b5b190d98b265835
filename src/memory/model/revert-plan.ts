/**
 * What reverting one actor's changes does to one entry, as a pure function of the entry's
 * whole timeline (every copy's revisions, oldest first), the live entry as it is now, and
 * which revisions are being reverted. The entry returns to its state just before the
 * first of those revisions: absent (the actor created it, so it is dropped to the trash),
 * or a description and body (the actor changed or dropped it, so it is restored or
 * undropped). A later revision that is not being reverted — another actor's change after
 * the reverted one — makes the entry a conflict, reverted only when the person chooses it.
 * The service (revert.ts) reads the store and applies; nothing here does I/O.
 */

import type { CopyRevision, RevisionOperation, StoredEntry } from '../port.js';
import { utf8Bytes } from './text.js';

/** An entry's state at one moment: absent (never created, or in the trash), or its text. */
export type EntryState =
  | { readonly present: false }
  | { readonly present: true; readonly description: string; readonly body: string };

/** One recorded change, as a preview shows it: who, when, what (no body). */
export interface ChangeSummary {
  readonly revision: number;
  readonly operation: RevisionOperation;
  readonly actor: string;
  readonly at: number;
  readonly description: string;
  /** UTF-8 bytes of the body after the change (before it, for a drop). */
  readonly size: number;
  readonly note?: string;
}

/**
 * What reverting does to the entry: `drop` it (created in the range), `undrop` it
 * (dropped in the range; its earlier text comes back), `restore` its earlier text,
 * `none` (it already is as it was), or `unavailable`: the revision before the first
 * reverted one is no longer kept (the history limits trimmed it), so the earlier state
 * is unknown and the entry is left as it is.
 */
export type RevertAction = 'drop' | 'undrop' | 'restore' | 'none' | 'unavailable';

export interface EntryRevertPlan {
  readonly name: string;
  readonly action: RevertAction;
  /** What the entry returns to; undefined when `unavailable`. */
  readonly target: EntryState | undefined;
  readonly current: EntryState;
  /** The reverted revisions of the entry, oldest first. */
  readonly changes: readonly ChangeSummary[];
  /** The revisions after the first reverted one that are not being reverted, oldest first: a conflict when any. */
  readonly conflicts: readonly ChangeSummary[];
  /** The live entry's revision and time of its last change, or `absent`: what an apply checks is unchanged. */
  readonly stamp: string;
}

const ABSENT: EntryState = { present: false };

/** The plan for one entry, or undefined when none of its revisions is selected. */
export function planEntryRevert(
  name: string,
  timeline: readonly CopyRevision[],
  live: StoredEntry | undefined,
  selected: (revision: CopyRevision) => boolean,
): EntryRevertPlan | undefined {
  const first = timeline.findIndex(selected);
  if (first < 0) return undefined;
  const target = stateBefore(timeline, first);
  const current: EntryState = live ? { present: true, description: live.description, body: live.body } : ABSENT;
  return {
    name,
    action: actionOf(target, current),
    target,
    current,
    changes: timeline.filter(selected).map(summaryOf),
    conflicts: timeline
      .slice(first + 1)
      .filter((revision) => !selected(revision))
      .map(summaryOf),
    stamp: stampOf(live),
  };
}

/** How the live entry stands, for an apply to see whether it changed since the preview. */
export function stampOf(live: StoredEntry | undefined): string {
  return live ? `${live.revision}@${live.updated}` : 'absent';
}

/** Whether two states hold the same text (or are both absent). */
export function sameState(a: EntryState, b: EntryState): boolean {
  if (!a.present || !b.present) return a.present === b.present;
  return a.description === b.description && a.body === b.body;
}

/** The entry's state just before `timeline[index]`; undefined when the revision that says is not kept. */
function stateBefore(timeline: readonly CopyRevision[], index: number): EntryState | undefined {
  const revision = timeline[index];
  if (!revision) return undefined;
  // A drop records the text the entry had; a copy's first revision and an undrop find the name free.
  if (revision.operation === 'drop') return textOf(revision);
  if (revision.revision === 1 || revision.operation === 'undrop') return ABSENT;
  const previous = timeline.find((item) => item.entry === revision.entry && item.revision === revision.revision - 1);
  if (!previous) return undefined;
  return previous.operation === 'drop' ? ABSENT : textOf(previous);
}

function actionOf(target: EntryState | undefined, current: EntryState): RevertAction {
  if (!target) return 'unavailable';
  if (sameState(target, current)) return 'none';
  if (!target.present) return 'drop';
  return current.present ? 'restore' : 'undrop';
}

function textOf(revision: CopyRevision): EntryState {
  return { present: true, description: revision.description, body: revision.body };
}

function summaryOf(revision: CopyRevision): ChangeSummary {
  const { operation, actor, at, description, body, note } = revision;
  return {
    revision: revision.revision,
    operation,
    actor,
    at,
    description,
    size: utf8Bytes(body),
    ...(note === undefined ? {} : { note }),
  };
}
