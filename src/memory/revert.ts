/**
 * Revert: undo what one assistant did. A person names an actor (an app, a token's label)
 * and a time range; `preview` shows every entry that actor changed there and what each
 * returns to — its state just before the actor's first change in the range (model/
 * revert-plan.ts) — with the entries another actor changed since listed as conflicts;
 * `apply` makes it one operation: one transaction (mutateAll), each entry's revert a new
 * revision by the person carrying a note with the revert's id. A revert is undone the
 * same way: `undo` reverts the revisions that carry its id — and so is a merge (tidy.ts),
 * whose revisions carry a note of the same form. For people, never for the model; read-only groups do not hold it back, as they do not hold back a restore.
 *
 * An apply re-reads everything and refuses (CONFLICT, `revert-stale`, nothing changed)
 * when the preview it is given no longer matches, or when an entry changed between its
 * reading and its transaction; the caps in force now hold for the whole revert at once.
 */

import { createHash, randomBytes } from 'node:crypto';
import { ACTIVITY_LIMIT_CAP, type ActivityPosition } from './activity.js';
import { withNote } from './model/apply.js';
import { assertWritable, type Caller } from './model/caller.js';
import { bodyOverCap, descriptionOverCap } from './model/caps.js';
import { EngramError } from './model/errors.js';
import type { Policy } from './model/policy.js';
import {
  type ChangeSummary,
  type EntryRevertPlan,
  type EntryState,
  planEntryRevert,
  type RevertAction,
  stampOf,
} from './model/revert-plan.js';
import { boundedPatch } from './model/revision-diff.js';
import { formatCount, utf8Bytes } from './model/text.js';
import { entryBytes } from './model/usage.js';
import type { CopyRevision, DecideAll, NamedChange, Store, WriteRules } from './port.js';
import type { Recovery } from './recovery.js';

/** What to revert: one actor's changes from `since` (and up to `until`, both inclusive), in ms since the epoch. */
export interface RevertRange {
  readonly actor: string;
  readonly since: number;
  readonly until?: number | undefined;
}

/** What a revert or an undo is applied with: the conflicts chosen, and the preview it was decided on. */
export interface RevertChoice {
  /** The conflicting entries to revert anyway, by name, or `all`; the others are skipped. */
  readonly include?: readonly string[] | 'all' | undefined;
  /** The preview's `version`: refused (revert-stale) when the memory no longer matches it. */
  readonly version?: string | undefined;
}

/** One entry of a preview. */
export interface EntryPreview {
  readonly name: string;
  readonly action: RevertAction;
  /** Another actor changed it after a reverted change: reverted only when chosen. */
  readonly conflict: boolean;
  /** What it returns to (null: unknown, the history no longer keeps it). */
  readonly target: EntryState | null;
  readonly current: EntryState;
  /** The reverted changes, oldest first. */
  readonly changes: readonly ChangeSummary[];
  /** The later changes that are not reverted, oldest first (a conflict when any). */
  readonly conflicts: readonly ChangeSummary[];
  /** Unified diff from the entry as it is to what it returns to; null when absent on a side, or too different to show. */
  readonly patch: string | null;
}

export interface RevertPreview {
  /** The actor whose changes are reverted (for an undo: the revert's own note names them). */
  readonly actor?: string;
  readonly since?: number;
  readonly until?: number;
  /** For an undo: the revert it undoes. */
  readonly undoes?: string;
  /** Entries by name, in code-point order. */
  readonly entries: readonly EntryPreview[];
  /** Pass it back to apply: it refuses if the memory no longer matches this preview. */
  readonly version: string;
}

export interface RevertResult {
  /** The revert's id: undo it with this. */
  readonly id: string;
  /** The note each of its revisions carries. */
  readonly note: string;
  /** What was done, by entry. */
  readonly reverted: readonly { readonly name: string; readonly action: RevertAction }[];
  /** Entries left as they are: conflicts not chosen, and those whose earlier state is no longer kept. */
  readonly skipped: readonly { readonly name: string; readonly why: 'conflict' | 'unavailable' }[];
}

/** What a revert selects: its revisions, and how its notes and errors name it. */
interface Selection {
  readonly selected: (revision: CopyRevision) => boolean;
  /** The names that may hold a selected revision. */
  readonly names: readonly string[];
  /** What the note says was reverted, from the plans of the entries reverted. */
  readonly what: (plans: readonly EntryRevertPlan[]) => string;
  readonly actor: string;
  readonly preview: Omit<RevertPreview, 'entries' | 'version'>;
  /** The refusal when no kept revision is selected. */
  readonly none: () => EngramError;
  /** Refuses plans that would not undo the change whole (a merge whose entry merged in was purged). */
  readonly whole?: (plans: readonly EntryRevertPlan[]) => void;
}

/**
 * The note of the revisions of a revert, `revert <id>: <what>`, or of a merge (tidy.ts),
 * `merge <id>: <from> into <into>`: its id read back by revertIdOf, and undone alike.
 */
const NOTE = /^(revert|merge) ([0-9a-z]{1,12}-[0-9a-f]{8}): /;

/** The id of the revert or merge a revision's note names, if it does. */
export function revertIdOf(note: string | undefined): string | undefined {
  return note === undefined ? undefined : NOTE.exec(note)?.[2];
}

/** Whether a revision's note names a revert or a merge, if either. */
function undoneKindOf(note: string | undefined): string | undefined {
  return note === undefined ? undefined : NOTE.exec(note)?.[1];
}

/** The entry a merge's note says was merged in, and the one it went into (names hold no spaces). */
const MERGE_NOTE = /^merge \S+: (\S+) into (\S+)$/;

/**
 * A merge is undone whole or not at all: once the entry merged in is no longer kept (purged
 * from the trash, at once where trashRetentionDays is 0), undoing the merge would take its
 * text out of the entry it went into with nowhere to go.
 */
function mergeUndoneWhole(id: string, plans: readonly EntryRevertPlan[]): void {
  const merge = MERGE_NOTE.exec(
    plans.flatMap((plan) => plan.changes.map((change) => change.note ?? '')).find((note) => MERGE_NOTE.test(note)) ??
      '',
  );
  if (!merge) return;
  const [, from = '', into = ''] = merge;
  if (plans.some((plan) => plan.name === from)) return;
  throw new EngramError(
    'CONFLICT',
    `Merge ${id} cannot be undone: ${from} is no longer kept (it was purged from the trash), so undoing it would ` +
      `take ${from}'s text out of ${into} with nowhere to put it. Nothing was changed; edit ${into} by hand to split it.`,
    { reason: 'merge-purged', id, from, into },
  );
}

/** A new id for a revert or a merge made at `at`: the time in base 36, then 4 random bytes. */
export function newChangeId(at: number): string {
  return `${at.toString(36)}-${randomBytes(4).toString('hex')}`;
}

export class Revert {
  constructor(
    private readonly store: Store,
    private readonly policy: Policy,
    private readonly rules: WriteRules,
    private readonly recovery: Recovery,
  ) {}

  /** Every entry `range.actor` changed in the range, and what reverting does to each. */
  async preview(caller: Caller, range: RevertRange): Promise<RevertPreview> {
    return (await this.planned(caller, await this.ofActor(caller, range))).preview;
  }

  /** Reverts the actor's changes in the range, as `preview` shows them, in one transaction. */
  async apply(caller: Caller, range: RevertRange, choice: RevertChoice = {}): Promise<RevertResult> {
    assertWritable(caller);
    return this.applied(caller, await this.ofActor(caller, range), choice);
  }

  /** What undoing the revert `id` does: its revisions reverted in turn. */
  async previewUndo(caller: Caller, id: string): Promise<RevertPreview> {
    return (await this.planned(caller, await this.ofRevert(caller, id))).preview;
  }

  /** Undoes the revert `id`: each entry it changed returns to its state just before it. Itself a revert, with an id. */
  async undo(caller: Caller, id: string, choice: RevertChoice = {}): Promise<RevertResult> {
    assertWritable(caller);
    return this.applied(caller, await this.ofRevert(caller, id), choice);
  }

  private async applied(caller: Caller, selection: Selection, choice: RevertChoice): Promise<RevertResult> {
    const { plans, preview } = await this.planned(caller, selection);
    if (choice.version !== undefined && choice.version !== preview.version) throw stale();
    const include = chosenConflicts(plans, choice.include);
    const reverted: RevertResult['reverted'][number][] = [];
    const skipped: RevertResult['skipped'][number][] = [];
    const chosen: EntryRevertPlan[] = [];
    for (const plan of plans) {
      if (plan.action === 'unavailable') skipped.push({ name: plan.name, why: 'unavailable' });
      else if (plan.conflicts.length > 0 && !include.has(plan.name)) skipped.push({ name: plan.name, why: 'conflict' });
      else if (plan.action !== 'none') {
        chosen.push(plan);
        reverted.push({ name: plan.name, action: plan.action });
      }
    }
    if (chosen.length === 0) {
      throw new EngramError(
        'NOTHING_TO_DO',
        `Nothing to revert: every entry ${selection.actor} changed is ${
          skipped.length > 0 ? 'a conflict left out, or has no earlier state kept' : 'already as it was'
        }; nothing was changed.`,
        { reason: 'revert-nothing', actor: selection.actor },
      );
    }
    const id = newChangeId(this.rules.now());
    const note = `revert ${id}: ${selection.what(chosen)}`;
    await this.store.mutateAll(caller, this.decide(chosen), withNote(this.rules, note));
    if (chosen.some((plan) => plan.action === 'drop')) await this.recovery.purgeIfNoRetention();
    return { id, note, reverted, skipped };
  }

  /** Inside the transaction: each chosen entry still as planned, the caps in force now held for the whole revert. */
  private decide(chosen: readonly EntryRevertPlan[]): DecideAll {
    return (entries, usage) => {
      const live = new Map(entries.map((entry) => [entry.name, entry]));
      let total = usage.totalBytes;
      let count = usage.entries;
      const changes: NamedChange[] = [];
      for (const plan of chosen) {
        const now = live.get(plan.name);
        if (stampOf(now) !== plan.stamp || !plan.target) throw stale();
        total -= now ? bytesOf(now.name, now.description, now.body) : 0;
        count -= now ? 1 : 0;
        if (!plan.target.present) {
          changes.push({ name: plan.name, change: { kind: 'drop' } });
          continue;
        }
        const { description, body } = plan.target;
        checkEntryCaps(plan.name, description, body, this.policy);
        total += bytesOf(plan.name, description, body);
        count += 1;
        const change = { kind: 'put', operation: 'restore', description, body } as const;
        changes.push(now ? { name: plan.name, change } : { name: plan.name, change, undrop: true });
      }
      const last = chosen.at(-1)?.name ?? '';
      if (count > this.policy.maxEntries && count > usage.entries) {
        throw overCap({ part: 'entries', name: last, size: count, cap: this.policy.maxEntries });
      }
      if (total > this.policy.userCap && total > usage.totalBytes) {
        throw overCap({ part: 'total', name: last, size: total, cap: this.policy.userCap });
      }
      return changes;
    };
  }

  /** The plans of every entry the selection touched, and the preview that shows them. */
  private async planned(
    caller: Caller,
    selection: Selection,
  ): Promise<{ plans: EntryRevertPlan[]; preview: RevertPreview }> {
    const names = [...new Set(selection.names)].sort();
    const live = new Map((await this.store.get(caller.user, names)).map((entry) => [entry.name, entry]));
    const plans: EntryRevertPlan[] = [];
    for (const name of names) {
      const timeline = await this.store.timeline(caller.user, name);
      const plan = planEntryRevert(name, timeline, live.get(name), selection.selected);
      if (plan) plans.push(plan);
    }
    if (plans.length === 0) throw selection.none();
    selection.whole?.(plans);
    const entries = plans.map(entryPreview);
    const version = createHash('sha256')
      .update(JSON.stringify(plans.map((plan) => [plan.name, plan.stamp, plan.action, plan.conflicts.length])))
      .digest('hex')
      .slice(0, 16);
    return { plans, preview: { ...selection.preview, entries, version } };
  }

  /** The revisions of `range.actor` in the range, and the names they changed (from activity, newest first). */
  private async ofActor(caller: Caller, range: RevertRange): Promise<Selection> {
    const { actor, since, until } = checkedRange(range);
    const actors = await this.store.actors(caller.user);
    if (!actors.some((item) => item.actor === actor)) {
      const known = actors.map((item) => item.actor);
      throw new EngramError(
        'NOT_FOUND',
        `No change by ${JSON.stringify(actor)} is kept in this memory's history. ` +
          `${known.length > 0 ? `The actors are: ${known.slice(0, 20).join(', ')}.` : 'It has no history yet.'}`,
        { reason: 'revert-unknown-actor', actor, actors: known.slice(0, 20) },
      );
    }
    const start: ActivityPosition | undefined =
      until === undefined ? undefined : { at: until + 1, entry: 0, revision: 0 };
    const names = await this.namesSince(caller, since, start, actor);
    const span = `since ${iso(since)}${until === undefined ? '' : ` until ${iso(until)}`}`;
    const none = () =>
      new EngramError(
        'NOTHING_TO_DO',
        `${actor} made no change ${span} that history still keeps: nothing to revert. Choose a wider range.`,
        { reason: 'revert-nothing', actor },
      );
    if (names.length === 0) throw none();
    return {
      none,
      selected: (revision) =>
        revision.actor === actor && revision.at >= since && (until === undefined || revision.at <= until),
      names,
      what: () => `${actor}'s changes ${span}`,
      actor,
      preview: { actor, since, ...(until === undefined ? {} : { until }) },
    };
  }

  /** The revisions that carry the note of revert (or merge) `id`, and the names they changed. */
  private async ofRevert(caller: Caller, id: string): Promise<Selection> {
    const at = Number.parseInt(id.split('-')[0] ?? '', 36);
    const unknown = () =>
      new EngramError(
        'NOT_FOUND',
        `No revert or merge ${JSON.stringify(id.slice(0, 40))} is kept in this memory's history.`,
        { reason: 'revert-unknown', id: id.slice(0, 40) },
      );
    if (!/^[0-9a-z]{1,12}-[0-9a-f]{8}$/.test(id) || !Number.isSafeInteger(at)) throw unknown();
    const names = await this.namesSince(caller, at, undefined, undefined);
    if (names.length === 0) throw unknown();
    return {
      none: unknown,
      selected: (revision) => revertIdOf(revision.note) === id,
      names,
      what: (plans) => `undo of ${undoneKindOf(plans[0]?.changes[0]?.note) ?? 'revert'} ${id}`,
      actor: `revert ${id}`,
      preview: { undoes: id },
      whole: (plans) => mergeUndoneWhole(id, plans),
    };
  }

  /**
   * The names of the user's changes from `start` (newest first) back to `since`, by
   * `actor` when given; read a page at a time. Activity carries
   * no notes, so an undo's names are all those changed since the revert: the plan then
   * keeps only the entries holding one of its revisions.
   */
  private async namesSince(
    caller: Caller,
    since: number,
    start: ActivityPosition | undefined,
    actor: string | undefined,
  ): Promise<string[]> {
    const names = new Set<string>();
    let before = start;
    for (;;) {
      const page = await this.store.activity(caller.user, {
        limit: ACTIVITY_LIMIT_CAP,
        ...(before ? { before } : {}),
        ...(actor === undefined ? {} : { actor }),
      });
      for (const record of page) {
        if (record.at < since) return [...names];
        names.add(record.name);
      }
      const last = page.at(-1);
      if (!last || page.length < ACTIVITY_LIMIT_CAP) return [...names];
      before = last;
    }
  }
}

/** The names of `include` checked against the plan's conflicts: each must be one. */
function chosenConflicts(plans: readonly EntryRevertPlan[], include: RevertChoice['include']): Set<string> {
  const conflicts = plans.filter((plan) => plan.conflicts.length > 0).map((plan) => plan.name);
  if (include === 'all') return new Set(conflicts);
  for (const name of include ?? []) {
    if (!conflicts.includes(name)) {
      throw new EngramError(
        'INVALID_ARGUMENT',
        `${JSON.stringify(name.slice(0, 100))} is not a conflict of this revert; ${
          conflicts.length > 0 ? `its conflicts are: ${conflicts.join(', ')}` : 'it has no conflict'
        }. Nothing was changed.`,
      );
    }
  }
  return new Set(include ?? []);
}

function checkedRange(range: RevertRange): { actor: string; since: number; until: number | undefined } {
  const { actor, since, until } = range;
  if (typeof actor !== 'string' || actor.length === 0 || actor.length > 200) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      'the actor to revert is a label as activity shows it (an app, a token), 1 to 200 characters.',
    );
  }
  if (!Number.isSafeInteger(since) || since < 0) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      'the start of the range to revert is a time (since), not given or not valid.',
    );
  }
  if (until !== undefined && (!Number.isSafeInteger(until) || until < since)) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      'the end of the range to revert (until) is a time at or after its start (since).',
    );
  }
  return { actor, since, until };
}

function entryPreview(plan: EntryRevertPlan): EntryPreview {
  const { name, action, target, current, changes, conflicts } = plan;
  return {
    name,
    action,
    conflict: conflicts.length > 0,
    target: target ?? null,
    current,
    changes,
    conflicts,
    patch: target?.present && current.present ? patchOf(name, current, target) : null,
  };
}

function patchOf(
  name: string,
  current: Extract<EntryState, { present: true }>,
  target: Extract<EntryState, { present: true }>,
): string | null {
  return boundedPatch(
    { label: `${name} (now)`, description: current.description, text: current.body },
    { label: `${name} (reverted)`, description: target.description, text: target.body },
  );
}

function bytesOf(name: string, description: string, body: string): number {
  return entryBytes(name, description, utf8Bytes(body));
}

function checkEntryCaps(name: string, description: string, body: string, policy: Policy): void {
  const bodyOver = bodyOverCap(body, policy);
  if (bodyOver) throw overCap({ part: 'body', name, ...bodyOver });
  const descriptionOver = descriptionOverCap(description, policy);
  if (descriptionOver) throw overCap({ part: 'description', name, ...descriptionOver });
}

function overCap(detail: {
  part: 'body' | 'description' | 'total' | 'entries';
  name: string;
  size: number;
  cap: number;
}) {
  const { part, name, size, cap } = detail;
  const what = {
    body: `${name} would return to ${formatCount(size)} bytes; the entry cap is ${formatCount(cap)}`,
    description: `${name} would return to a description of ${formatCount(size)} characters; the cap is ${formatCount(cap)}`,
    total: `the memory would take ${formatCount(size)} bytes; the cap is ${formatCount(cap)}`,
    entries: `the memory would hold ${formatCount(size)} entries; the cap is ${formatCount(cap)}`,
  }[part];
  return new EngramError(
    part === 'entries' ? 'TOO_MANY_ENTRIES' : 'TOO_LARGE',
    `The revert cannot be applied under the caps in force now: ${what}. Nothing was changed: make room ` +
      '(shorten or drop entries that are no longer needed), then apply again.',
    { reason: 'revert-over-cap', ...detail },
  );
}

function stale(): EngramError {
  return new EngramError(
    'CONFLICT',
    'The memory changed since this revert was previewed: nothing was changed. Preview it again and apply the new preview.',
    { reason: 'revert-stale' },
  );
}

function iso(at: number): string {
  return new Date(at).toISOString();
}
