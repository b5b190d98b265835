/**
 * Applying a change: the one rule every store persists. Given the entry as it is now
 * (or nothing), the change `decide` chose, who makes it, when, and the policy's
 * historyLimit, it says what the store writes: the entry's new values, the revision to
 * record, how the user's counters move, and which of the entry's old revisions to
 * delete. Pure, so every backend numbers revisions, records drops and counts usage
 * alike; a store only persists what it returns, by the storage engine
 * (src/storage/engine/writes.ts), which then keeps the user's history under the history
 * cap (src/storage/history-cap.ts, which needs the stored rows).
 */

import type { Change, RevisionRecord, StoredEntry, WriteRules } from '../port.js';
import type { Caller } from './caller.js';
import type { Policy } from './policy.js';
import { utf8Bytes } from './text.js';
import { entryBytes, revisionBytes } from './usage.js';

/** How one change moves the user's counters (the SQL stores' `users` row). */
export interface UsageDelta {
  /** Bytes of the user's live entries (names, descriptions, bodies). */
  readonly totalBytes: number;
  /** Number of live entries. */
  readonly entries: number;
  /**
   * Bytes of the user's history: the recorded revision's. The revisions trimmed by
   * `trimThrough` leave it too, by the bytes the store finds as it deletes them.
   */
  readonly historyBytes: number;
}

export interface AppliedChange {
  /**
   * What happens to the entry's row: `write` inserts it (when there was no live entry)
   * or updates it; `drop` marks it dropped, by `record.actor` at `record.at`; `undrop`
   * makes a dropped row live again.
   */
  readonly kind: 'write' | 'drop' | 'undrop';
  /** The row's values after the change. A drop or undrop keeps the text and times, with the new revision number. */
  readonly entry: StoredEntry;
  /** The revision to record (for a drop, the text the entry had). */
  readonly record: RevisionRecord;
  readonly usage: UsageDelta;
  /** The entry's revisions numbered at or below this one are deleted (historyLimit); 0 keeps every one. */
  readonly trimThrough: number;
  /**
   * For a write that only added text after the old body on lines of its own (an append,
   * the name and description as they were), when ChangeInput.withAppended asks: that
   * text. The entry's words are then the old body's and these, so a store that keeps them
   * (PostgreSQL's search vector) adds these rather than reading the whole body again.
   */
  readonly appended?: string;
}

export interface ChangeInput {
  /** The entry's name (already normalised). */
  readonly name: string;
  /** The live entry as it is now, or undefined when there is none. */
  readonly current: StoredEntry | undefined;
  readonly change: Change;
  readonly caller: Caller;
  /** The time of the change, in ms since the epoch (read from WriteRules.now inside the transaction). */
  readonly at: number;
  readonly historyLimit: number;
  /** The note the revision records (WriteRules.note), if any. */
  readonly note?: string | undefined;
  /**
   * Work out `appended`, for a store whose save reads it (PostgreSQL's). A comparison over
   * the whole body that no other store needs: ~8% of an append's CPU on SQLite at 12 KB,
   * nothing measurable at 1 KiB (in process, four interleaved rounds each, 2026-12-07).
   */
  readonly withAppended?: boolean;
}

/**
 * What to persist for `change`, or undefined when there is nothing to write: the change is
 * `none`, or a drop of an entry that does not exist. Then the entry stays as it is.
 */
export function applyChange(input: ChangeInput): AppliedChange | undefined {
  const { name, current, change, caller, at, historyLimit, note, withAppended } = input;
  if (change.kind === 'none') return undefined;
  if (change.kind === 'drop') {
    if (!current) return undefined;
    const entry = { ...current, revision: current.revision + 1 };
    const record = recordOf(entry, 'drop', caller, at, note);
    const usage = { totalBytes: -bytesOf(current), entries: -1, historyBytes: recordBytes(record) };
    return { kind: 'drop', entry, record, usage, trimThrough: trimThrough(entry.revision, historyLimit) };
  }
  const entry = putEntry(name, current, change, at);
  const record = recordOf(entry, change.operation, caller, at, note);
  const usage = {
    totalBytes: bytesOf(entry) - (current ? bytesOf(current) : 0),
    entries: current ? 0 : 1,
    historyBytes: recordBytes(record),
  };
  const appended = withAppended && current ? appendedText(current, change) : undefined;
  return {
    kind: 'write',
    entry,
    record,
    usage,
    trimThrough: trimThrough(entry.revision, historyLimit),
    ...(appended === undefined ? {} : { appended }),
  };
}

/**
 * What `change` added after `current`'s body, when that is all it did to the entry's text
 * and a line break parts the two (so no word of the old body runs on into the new text);
 * otherwise undefined.
 */
function appendedText(current: StoredEntry, change: Extract<Change, { kind: 'put' }>): string | undefined {
  const before = current.body;
  if (change.operation !== 'append' || change.description !== current.description) return undefined;
  if (!change.body.startsWith(before)) return undefined;
  const added = change.body.slice(before.length);
  return before === '' || before.endsWith('\n') || added.startsWith('\n') ? added : undefined;
}

/** The entry `name` becomes when `change` puts a new text over `current` (undefined: a new entry) at `at`. */
export function putEntry(
  name: string,
  current: StoredEntry | undefined,
  change: Extract<Change, { kind: 'put' }>,
  at: number,
): StoredEntry {
  return {
    name,
    description: change.description,
    body: change.body,
    size: utf8Bytes(change.body),
    created: current?.created ?? at,
    updated: at,
    revision: (current?.revision ?? 0) + 1,
  };
}

/** What to persist to bring back `dropped`, the most recently dropped copy of its name (no live entry has it). */
export function applyUndrop(
  dropped: StoredEntry,
  caller: Caller,
  at: number,
  historyLimit: number,
  note?: string,
): AppliedChange & { readonly kind: 'undrop' } {
  const entry = { ...dropped, revision: dropped.revision + 1 };
  const record = recordOf(entry, 'undrop', caller, at, note);
  const usage = { totalBytes: bytesOf(entry), entries: 1, historyBytes: recordBytes(record) };
  return { kind: 'undrop', entry, record, usage, trimThrough: trimThrough(entry.revision, historyLimit) };
}

/** The entry a mutate reports after `applied` (undefined: dropped, or never there); `current` when nothing was applied. */
export function entryAfter(
  current: StoredEntry | undefined,
  applied: AppliedChange | undefined,
): StoredEntry | undefined {
  if (!applied) return current;
  return applied.kind === 'drop' ? undefined : applied.entry;
}

/** The rules a Memory service hands its store with every write: its policy's history limits and its clock. */
export function writeRules(policy: Pick<Policy, 'historyLimit' | 'historyCap'>, now: () => number): WriteRules {
  return { now, historyLimit: policy.historyLimit, historyCap: policy.historyCap };
}

/** `rules` with the note every revision written under them records. */
export function withNote(rules: WriteRules, note: string): WriteRules {
  return { ...rules, note };
}

function recordOf(
  entry: StoredEntry,
  operation: RevisionRecord['operation'],
  caller: Caller,
  at: number,
  note: string | undefined,
): RevisionRecord {
  return {
    revision: entry.revision,
    operation,
    actor: caller.label,
    at,
    description: entry.description,
    body: entry.body,
    ...(note === undefined ? {} : { note }),
  };
}

/** Revisions kept per entry: the newest `historyLimit`, so a new revision N deletes those up to N - historyLimit. */
function trimThrough(revision: number, historyLimit: number): number {
  return Math.max(0, revision - historyLimit);
}

function bytesOf(entry: StoredEntry): number {
  return entryBytes(entry.name, entry.description, entry.size);
}

function recordBytes(record: RevisionRecord): number {
  return revisionBytes(record.description, record.body);
}
