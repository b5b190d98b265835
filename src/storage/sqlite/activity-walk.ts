/**
 * One actor's activity and the count of every actor, read from revisions_activity (schema
 * 13: the user's revisions in time order, each with its actor) a stretch at a time. For an
 * actor with few changes, or for counting them all, that reads the user's whole history,
 * which the history cap lets grow to millions of small revisions (16 MiB of a few bytes
 * each, the trash included): measured some 70 ns a revision for one actor's page and 150 for
 * the counts, so one statement over a million held the event loop 70 and 220 ms, past the
 * 50 ms any request may (DESIGN §7). Each step reads at most STEP_ROWS of the index (the
 * first fewer, where a page of a frequent actor is found), and the event loop turns between
 * steps; a page or a count is exact across them, as a walk by position never meets a
 * revision twice (each step is a read of its own: a change made meanwhile is counted only
 * where the walk has not passed yet). Finding where a step ends reads its rows once more:
 * measured interleaved, a rare actor's page costs 2.3x the CPU of one statement, the count
 * 1.2-1.7x, a frequent actor's page some 0.1 ms more. Switched off (the activityWalk
 * accelerator, accelerators.ts), the same statements read the whole history in one step:
 * the plain path, whose answers a walk must equal.
 */

import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ActivityPosition, ActivityRecord, ActorCount } from '../../memory/activity.js';
import type { Database, Statement } from './driver.js';
import type { Guard } from './guard.js';
import { compareNames } from './index-cache.js';

/** Index rows the first step reads at most: a page of an actor with a tenth of the changes or more is found in it. */
export const FIRST_STEP_ROWS = 1_000;

/** Index rows each later step reads at most: a millisecond or two. */
export const STEP_ROWS = 10_000;

/** A position after every one of activity's (newest-first) order. */
export const NEWEST = {
  at: Number.MAX_SAFE_INTEGER,
  entry: Number.MAX_SAFE_INTEGER,
  revision: Number.MAX_SAFE_INTEGER,
};

/** A position before every one of activity's (newest-first) order. */
const OLDEST = { at: Number.MIN_SAFE_INTEGER, entry: Number.MIN_SAFE_INTEGER, revision: Number.MIN_SAFE_INTEGER };

/** The revisions of a step: the user's below (older than) @at/@entry/@revision, down to the floor's, which it includes. */
function step(r: string): string {
  return `${r}user_id = @user AND (${r}at, ${r}entry_id, ${r}revision) < (@at, @entry, @revision)
       AND (${r}at, ${r}entry_id, ${r}revision) >= (@floorAt, @floorEntry, @floorRevision)`;
}

const SQL = {
  // Where a step of @rows from @at/@entry/@revision ends: the @rows-th revision below it, if there is one.
  floor: `SELECT at, entry_id AS entry, revision FROM revisions INDEXED BY revisions_activity
       WHERE user_id = @user AND (at, entry_id, revision) < (@at, @entry, @revision)
       ORDER BY at DESC, entry_id DESC, revision DESC LIMIT 1 OFFSET @rows - 1`,
  activityOf: `SELECT r.at, r.entry_id AS entry, r.revision, e.name, r.operation, r.actor, r.description,
         octet_length(r.body) AS size
       FROM revisions r INDEXED BY revisions_activity JOIN entries e ON e.id = r.entry_id
       WHERE r.actor = @actor AND ${step('r.')}
       ORDER BY r.at DESC, r.entry_id DESC, r.revision DESC LIMIT @limit`,
  actors: `SELECT actor, count(*) AS changes, max(at) AS last FROM revisions INDEXED BY revisions_activity
       WHERE ${step('')} GROUP BY actor`,
} as const;

/** The bounds of one step, as the statements take them. */
type Step = Record<'user' | 'at' | 'entry' | 'revision' | 'floorAt' | 'floorEntry' | 'floorRevision', number | string>;

export class ActivityWalk {
  private readonly statements: { readonly [K in keyof typeof SQL]: Statement };

  /** `stepped` false: one step, over the whole history (the plain path). */
  constructor(
    db: Database,
    private readonly guard: Guard,
    private readonly stepped: boolean,
  ) {
    this.statements = {
      floor: db.prepare(SQL.floor),
      activityOf: db.prepare(SQL.activityOf),
      actors: db.prepare(SQL.actors),
    };
  }

  /** `actor`'s revisions of the user below `before`, newest first, at most `limit`. */
  async activityOf(user: string, actor: string, before: ActivityPosition, limit: number): Promise<ActivityRecord[]> {
    const found: ActivityRecord[] = [];
    await this.walk(user, before, (step) => {
      found.push(
        ...(this.statements.activityOf.all({ ...step, actor, limit: limit - found.length }) as ActivityRecord[]),
      );
      return found.length < limit;
    });
    return found;
  }

  /** Each actor of the user's revisions with how many they made and the latest's time: most first, then by name. */
  async actors(user: string): Promise<ActorCount[]> {
    const counts = new Map<string, ActorCount>();
    await this.walk(user, NEWEST, (step) => {
      for (const { actor, changes, last } of this.statements.actors.all(step) as ActorCount[]) {
        const seen = counts.get(actor);
        counts.set(actor, { actor, changes: changes + (seen?.changes ?? 0), last: Math.max(last, seen?.last ?? last) });
      }
      return true;
    });
    return [...counts.values()].sort((a, b) => b.changes - a.changes || compareNames(a.actor, b.actor));
  }

  /** Runs `read` on each step below `from` (its own read, the event loop turning between) until it returns false or the history ends. */
  private async walk(user: string, from: ActivityPosition, read: (step: Step) => boolean): Promise<void> {
    for (let top: ActivityPosition | undefined = from, rows = FIRST_STEP_ROWS; top; rows = STEP_ROWS) {
      const above: ActivityPosition = top;
      const stepRows = rows;
      top = await this.guard.read(() => {
        const floor = this.stepped
          ? (this.statements.floor.get({ user, ...above, rows: stepRows }) as ActivityPosition | undefined)
          : undefined;
        const bottom = floor ?? OLDEST;
        const more = read({
          user,
          ...above,
          floorAt: bottom.at,
          floorEntry: bottom.entry,
          floorRevision: bottom.revision,
        });
        return more ? floor : undefined;
      });
      if (top) await nextTurn();
    }
  }
}
