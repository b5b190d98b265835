/**
 * Activity: one memory, many writers — what changed across a user's whole memory, by
 * which assistant, when, newest first, from the revisions every change records; the
 * actors that wrote (for a filter); and word of changes as they commit (live updates).
 * For people (the web UI, `engram activity`, /api/activity, /api/events), never for the
 * model. Here, once for every backend: the bounds of a page and the cursor that pages
 * on, checked before the store is asked (ActivityStore and ChangeStore in store.ts).
 */

import type { Caller } from './model/caller.js';
import { EngramError } from './model/errors.js';
import type { RevisionOperation, Store } from './port.js';

/** Items of one page, at most. */
export const ACTIVITY_LIMIT_CAP = 200;
/** Items of one page when no limit is given. */
export const ACTIVITY_DEFAULT_LIMIT = 50;

/**
 * Where an item sits in a user's activity. Activity is ordered newest first: by time, then
 * by the store's id of the entry copy, then by revision, all descending — a total order,
 * since a copy's revisions are numbered, so a page that starts after one never skips or repeats.
 */
export interface ActivityPosition {
  readonly at: number;
  /** The store's id of the entry copy (as in a dump), telling apart changes made in the same millisecond. */
  readonly entry: number;
  readonly revision: number;
}

/** One recorded change, as the store reads it: a revision of one entry, with its entry's name. */
export interface ActivityRecord extends ActivityPosition {
  readonly name: string;
  readonly operation: RevisionOperation;
  readonly actor: string;
  /** The entry's description after the change (before it, for a drop). */
  readonly description: string;
  /** UTF-8 bytes of the body after the change (before it, for a drop). */
  readonly size: number;
}

export interface ActivityQuery {
  /** 1 to ACTIVITY_LIMIT_CAP. */
  readonly limit: number;
  /** Only the changes after this position (older than it). */
  readonly before?: ActivityPosition;
  /** Only the changes this actor made (exact label). */
  readonly actor?: string;
}

/** An actor of a user's activity: how many changes of theirs the history keeps, and the latest one's time. */
export interface ActorCount {
  readonly actor: string;
  readonly changes: number;
  readonly last: number;
}

/**
 * Word that a user's memory changed. `version` is the user's change counter after it
 * (it grows with every committed change, however made; a fresh store starts it again).
 * A change this process made to one entry names it, with its revision and operation (a
 * purge names the entry only); one seen in the database, made by another process, or a
 * change of many entries at once (import, wipe, the trash expiring), carries the version alone.
 */
export interface MemoryChange {
  readonly version: number;
  readonly name?: string;
  readonly revision?: number;
  readonly operation?: RevisionOperation;
}

export type ChangeListener = (change: MemoryChange) => void;

/** One item of the activity as the doors show it: a record with the cursor that pages on after it. */
export interface ActivityItem {
  readonly name: string;
  readonly revision: number;
  readonly operation: RevisionOperation;
  readonly actor: string;
  readonly at: number;
  readonly size: number;
  readonly description: string;
  /** Opaque: pass it as `before` for the page after this item. */
  readonly cursor: string;
}

export interface ActivityPage {
  readonly items: ActivityItem[];
  /** The cursor of the page after this one; absent on the last page. */
  readonly next?: string;
}

/** What the doors ask: the limit, the cursor and the actor as given (unchecked). */
export interface ActivityRequest {
  readonly limit?: number;
  readonly before?: string;
  readonly actor?: string;
}

/** Longest actor filter, in characters (a recorded label has at most 100). */
const ACTOR_FILTER_CAP = 200;

export class Activity {
  constructor(private readonly store: Store) {}

  /** The caller's changes, newest first, one page at a time (arguments checked: INVALID_ARGUMENT). */
  async list(caller: Caller, request: ActivityRequest = {}): Promise<ActivityPage> {
    const limit = activityLimit(request.limit);
    const before = request.before === undefined ? undefined : parseCursor(request.before);
    const actor = request.actor === undefined ? undefined : actorFilter(request.actor);
    // One more than asked, to know whether a page follows.
    const records = await this.store.activity(caller.user, {
      limit: limit + 1,
      ...(before ? { before } : {}),
      ...(actor === undefined ? {} : { actor }),
    });
    const items = records.slice(0, limit).map(activityItem);
    const last = items.at(-1);
    return records.length > limit && last ? { items, next: last.cursor } : { items };
  }

  /** Who wrote the caller's memory: each actor with their changes kept, most changes first, then by name. */
  actors(caller: Caller): Promise<ActorCount[]> {
    return this.store.actors(caller.user);
  }

  /**
   * Calls `listener` as the caller's memory changes (MemoryChange). Resolves, to the
   * function that stops it, once every change committed from then on will be told.
   */
  watch(caller: Caller, listener: ChangeListener): Promise<() => void> {
    return this.store.watch(caller.user, listener);
  }
}

/** The limit of a page: ACTIVITY_DEFAULT_LIMIT when none, else a whole number from 1 to ACTIVITY_LIMIT_CAP. */
export function activityLimit(limit: number | undefined): number {
  if (limit === undefined) return ACTIVITY_DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > ACTIVITY_LIMIT_CAP) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `the limit of an activity page is a whole number from 1 to ${ACTIVITY_LIMIT_CAP}, not ${limit}.`,
    );
  }
  return limit;
}

/** The cursor of a position: `at.entry.revision` in decimal, which the doors treat as opaque. */
export function activityCursor(position: ActivityPosition): string {
  return `${position.at}.${position.entry}.${position.revision}`;
}

const CURSOR = /^(0|[1-9]\d{0,15})\.(0|[1-9]\d{0,15})\.(0|[1-9]\d{0,15})$/;

/** The position a cursor names; anything not made by activityCursor is INVALID_ARGUMENT. */
export function parseCursor(cursor: string): ActivityPosition {
  const match = CURSOR.exec(cursor);
  const [at, entry, revision] = (match?.slice(1) ?? []).map(Number);
  if (
    at === undefined ||
    entry === undefined ||
    revision === undefined ||
    !Number.isSafeInteger(at) ||
    !Number.isSafeInteger(entry) ||
    revision > MAX_REVISION
  ) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `${JSON.stringify(cursor.slice(0, 60))} is not an activity cursor: pass the cursor of an item (or the page's next) as it was given.`,
    );
  }
  return { at, entry, revision };
}

/** Revisions are numbered within 32-bit integers (PostgreSQL's integer column); times and ids within safe integers. */
const MAX_REVISION = 2 ** 31 - 1;

function actorFilter(actor: string): string {
  if (actor.length === 0 || actor.length > ACTOR_FILTER_CAP) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `the actor to filter by is a label as activity shows it, 1 to ${ACTOR_FILTER_CAP} characters.`,
    );
  }
  return actor;
}

function activityItem(record: ActivityRecord): ActivityItem {
  const { name, revision, operation, actor, at, size, description } = record;
  return { name, revision, operation, actor, at, size, description, cursor: activityCursor(record) };
}
