/**
 * Every write of entries, once for every backend: read, decide (the caller's pure
 * `decide`), apply (memory/model/apply.ts says what to write) and persist, then keep the
 * user's history under the cap (trim.ts) — all inside the one transaction the backend
 * holds while it drives these (drive.ts). `mutate(decide)` keeps the transaction in the
 * store and the decision in pure code; the store only runs these on its primitives.
 */

import { type AppliedChange, applyChange, applyUndrop, entryAfter } from '../../memory/model/apply.js';
import type {
  Caller,
  Change,
  Decide,
  DecideAll,
  MutationResult,
  StoredEntry,
  UndropCheck,
  UndropResult,
  WriteRules,
} from '../../memory/port.js';
import { Trim } from '../history-cap.js';
import { type EntryRow, toEntry } from '../sql-rows.js';
import { get, type Work } from './drive.js';
import type { Counters, Primitives } from './primitives.js';
import { trimHistory } from './trim.js';

/** Reads the live entry and the usage, decides, and persists the decision (Store.mutate). */
export function* mutate(
  p: Primitives,
  caller: Caller,
  name: string,
  decide: Decide,
  rules: WriteRules,
): Work<MutationResult> {
  const row = yield* get(p.liveEntry(caller.user, name));
  const before = row && toEntry(row);
  const change = decide(before, yield* get(p.usage(caller.user)));
  return { before, after: yield* apply(p, caller, name, row?.id, before, change, rules) };
}

/** Like mutate over every live entry of the user (Store.mutateAll). */
export function* mutateAll(p: Primitives, caller: Caller, decide: DecideAll, rules: WriteRules): Work<void> {
  const rows = yield* get(p.liveEntries(caller.user));
  const byName = new Map(rows.map((row) => [row.name, row]));
  const changes = decide(rows.map(toEntry), yield* get(p.usage(caller.user)));
  for (const { name, change, undrop: undropFirst } of changes) {
    const row = byName.get(name) ?? (undropFirst ? yield* undropForAll(p, caller, name, rules) : undefined);
    const current = row && toEntry(row);
    if (undropFirst && current && change.kind === 'put' && sameText(current, change)) continue;
    yield* apply(p, caller, name, row?.id, current, change, rules);
  }
}

/** Brings back the most recently dropped copy of `name` inside mutateAll (NamedChange.undrop); undefined when none is in the trash. */
function* undropForAll(p: Primitives, caller: Caller, name: string, rules: WriteRules): Work<EntryRow | undefined> {
  const row = yield* get(p.latestTrashed(caller.user, name));
  if (!row) return undefined;
  const applied = applyUndrop(toEntry(row), caller, rules.now(), rules.historyLimit, rules.note);
  yield* persist(p, caller.user, row.id, applied, rules);
  return { ...row, ...applied.entry };
}

function sameText(entry: StoredEntry, change: { readonly description: string; readonly body: string }): boolean {
  return entry.description === change.description && entry.body === change.body;
}

/** Brings back the most recently dropped copy of `name`, unless a live entry holds it or `check` refuses (Store.undrop). */
export function* undrop(
  p: Primitives,
  caller: Caller,
  name: string,
  rules: WriteRules,
  check: UndropCheck | undefined,
): Work<UndropResult> {
  const row = yield* get(p.latestTrashed(caller.user, name));
  if (!row) return { status: 'missing' };
  if (yield* get(p.liveEntry(caller.user, name))) return { status: 'taken' };
  const dropped = toEntry(row);
  if (check) check(dropped, yield* get(p.usage(caller.user)));
  const applied = applyUndrop(dropped, caller, rules.now(), rules.historyLimit, rules.note);
  yield* persist(p, caller.user, row.id, applied, rules);
  return { status: 'restored', entry: applied.entry };
}

/**
 * Applies `change`, decided on `current` (the live row `id`, or none), and returns the
 * entry after it: what a caller that decided outside the transaction runs inside it.
 */
export function* apply(
  p: Primitives,
  caller: Caller,
  name: string,
  id: number | undefined,
  current: StoredEntry | undefined,
  change: Change,
  rules: WriteRules,
): Work<StoredEntry | undefined> {
  const at = rules.now();
  const applied = applyChange({
    name,
    current,
    change,
    caller,
    at,
    historyLimit: rules.historyLimit,
    note: rules.note,
    // A backend that saves a write whole (PostgreSQL) reads what an append added.
    withAppended: p.saveWrite !== undefined,
  });
  if (applied) yield* persist(p, caller.user, id, applied, rules);
  return entryAfter(current, applied);
}

/**
 * Persists what applyChange or applyUndrop returned on the row `id` (a new row when
 * undefined): the row, its revision, the revisions past historyLimit deleted, the user's
 * counters moved, then their history kept within the cap. The body is kept once, in the
 * revision; in the row only when that revision is trimmed at once (a history limit of 0).
 */
function* persist(
  p: Primitives,
  user: string,
  id: number | undefined,
  applied: AppliedChange,
  rules: WriteRules,
): Work<void> {
  const counters = yield* applied.kind === 'write' ? write(p, user, id, applied) : move(p, user, id, applied);
  yield* trimHistory(p, user, Trim.of(counters.historyBytes, rules.historyCap), counters.entries);
}

/** A write's row inserted (no `id`) or updated, then recorded; whole, by a backend's saveWrite when it has one. */
function* write(p: Primitives, user: string, id: number | undefined, applied: AppliedChange): Work<Counters> {
  if (p.saveWrite) return yield* get(p.saveWrite(user, id, applied));
  const { entry } = applied;
  const body = rowBody(applied);
  let rowId = id;
  if (rowId === undefined) rowId = yield* get(p.insertEntry(user, entry, body));
  else yield* get(p.updateEntry(user, rowId, entry, body));
  return yield* record(p, user, rowId, applied);
}

/** A drop or undrop of the row `id`, then recorded. */
function* move(p: Primitives, user: string, id: number | undefined, applied: AppliedChange): Work<Counters> {
  const { entry } = applied;
  if (id === undefined) throw new Error(`no row to ${applied.kind} for ${entry.name}`);
  if (applied.kind === 'drop') yield* get(p.dropEntry(user, id, entry, applied.record, rowBody(applied)));
  else yield* get(p.undropEntry(user, id, entry, rowBody(applied)));
  return yield* record(p, user, id, applied);
}

/** The change's revision recorded, the revisions past its history limit deleted, the user's counters moved. */
function* record(p: Primitives, user: string, id: number, applied: AppliedChange): Work<Counters> {
  const { usage } = applied;
  yield* get(p.addRevision(user, id, applied.record, isKept(applied)));
  const trimmed = applied.trimThrough > 0 ? yield* get(p.trimRevisions(user, id, applied.trimThrough)) : 0;
  return yield* get(p.addUsage(user, { ...usage, historyBytes: usage.historyBytes - trimmed }));
}

/** Whether the change's revision outlives its own history limit (not a limit of 0). */
function isKept(applied: AppliedChange): boolean {
  return applied.trimThrough < applied.entry.revision;
}

/** The body the row itself keeps: none while its latest revision holds it. */
function rowBody(applied: AppliedChange): string | null {
  return isKept(applied) ? null : applied.entry.body;
}
