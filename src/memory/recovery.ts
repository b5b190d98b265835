/**
 * Recovery: every change can be seen and undone, and "forget" really forgets. History,
 * one revision, diffs, restore, the trash, undrop and purge, over the Store port. Its
 * refusals name no command or route: each front door that offers recovery (the command
 * line, the REST API) words how to act from their detail, and a library user reads
 * them as they are. What restore and undrop bring back obeys the caps in force now
 * (recovery-caps.ts, and edit.ts's checkCaps), like every other way in.
 */

import { assertWritable, type Caller } from './model/caller.js';
import { checkCaps } from './model/edit.js';
import { EngramError } from './model/errors.js';
import { parseName } from './model/names.js';
import { type Policy, trashRetentionMs } from './model/policy.js';
import { boundedPatch } from './model/revision-diff.js';
import { utf8Bytes } from './model/text.js';
import type { Decide, RevisionRecord, Store, StoredEntry, TrashedEntry, WriteRules } from './port.js';
import { checkRecoveredCaps } from './recovery-caps.js';

export interface TrashItem extends TrashedEntry {
  /** When the trash purges it (ms since the epoch). */
  readonly purgeAt: number;
}

/** What changed between two revisions: both of them, and the unified diff of the body if it was found. */
export interface RevisionDiff {
  /** The entry's name, normalised. */
  readonly name: string;
  /**
   * The unified diff, headed `--- name@from\tdescription` / `+++ name@to\tdescription`;
   * null when the revisions are too different to show line by line (revision-diff.ts),
   * and the reader is offered both texts instead.
   */
  readonly patch: string | null;
  readonly from: RevisionRecord;
  readonly to: RevisionRecord;
}

export class Recovery {
  constructor(
    private readonly store: Store,
    private readonly policy: Policy,
    /** The Memory service's clock and history limits, for every change recovery makes. */
    private readonly rules: WriteRules,
  ) {}

  /** Revisions of the entry (live, else its latest dropped copy), oldest first. */
  async history(caller: Caller, rawName: string): Promise<RevisionRecord[]> {
    return this.revisionsOf(caller, parseName(rawName, this.policy));
  }

  async revision(caller: Caller, rawName: string, revision: number): Promise<RevisionRecord> {
    const name = parseName(rawName, this.policy);
    return pickRevision(name, await this.revisionsOf(caller, name), revision);
  }

  /** The diff of the body from revision `from` to revision `to` (default: the latest), at a bounded cost. */
  async diff(caller: Caller, rawName: string, from: number, to?: number): Promise<RevisionDiff> {
    const name = parseName(rawName, this.policy);
    const revisions = await this.revisionsOf(caller, name);
    const left = pickRevision(name, revisions, from);
    const right = to === undefined ? revisions.at(-1) : pickRevision(name, revisions, to);
    if (!right) throw new EngramError('NOT_FOUND', `${name} has no history.`);
    const side = (item: RevisionRecord) => ({
      label: `${name}@${item.revision}`,
      description: item.description,
      text: item.body,
    });
    return { name, patch: boundedPatch(side(left), side(right)), from: left, to: right };
  }

  /** Brings back a revision's description and body, as a new `restore` revision. */
  async restore(caller: Caller, rawName: string, revision: number): Promise<StoredEntry> {
    assertWritable(caller);
    const name = parseName(rawName, this.policy);
    const target = pickRevision(name, await this.revisionsOf(caller, name), revision);
    const decide: Decide = (current, usage) => {
      if (!current) {
        throw new EngramError('NOT_FOUND', `${name} is in the trash: undrop it first, then restore.`, {
          reason: 'restore-in-trash',
          name,
        });
      }
      const { description, body } = target;
      if (current.body === body && current.description === description) return { kind: 'none' };
      checkRecoveredCaps({ operation: 'restore', name, revision, description, body }, this.policy);
      checkCaps(name, current, { description, size: utf8Bytes(body) }, usage, this.policy);
      return { kind: 'put', operation: 'restore', description, body };
    };
    const { after } = await this.store.mutate(caller, name, decide, this.rules);
    if (!after) throw new Error(`store returned no entry after restoring ${name}`);
    return after;
  }

  async trash(caller: Caller): Promise<TrashItem[]> {
    const retention = trashRetentionMs(this.policy);
    return (await this.store.trash(caller.user)).map((entry) => ({ ...entry, purgeAt: entry.droppedAt + retention }));
  }

  async undrop(caller: Caller, rawName: string): Promise<StoredEntry> {
    assertWritable(caller);
    const name = parseName(rawName, this.policy);
    const result = await this.store.undrop(caller, name, this.rules, (entry, usage) => {
      // The trashed copy's revision (its drop) holds the text the undrop brings back.
      const { revision, description, body } = entry;
      checkRecoveredCaps({ operation: 'undrop', name, revision, description, body }, this.policy);
      checkCaps(name, undefined, entry, usage, this.policy);
    });
    if (result.status === 'restored') return result.entry;
    if (result.status === 'taken') {
      throw new EngramError(
        'CONFLICT',
        `${name} cannot be undropped: a live entry has taken the name since. Rename or drop the live one first, ` +
          'then undrop again.',
        { reason: 'undrop-taken', name },
      );
    }
    throw new EngramError('NOT_FOUND', `${name} is not in the trash; nothing was undropped.`, {
      reason: 'undrop-missing',
      name,
    });
  }

  /** Forgets an entry for good: its trashed copies, and the live one with `force`. */
  async purge(caller: Caller, rawName: string, options: { readonly force: boolean }): Promise<number> {
    assertWritable(caller);
    const name = parseName(rawName, this.policy);
    const live = (await this.store.get(caller.user, [name])).length > 0;
    if (live && !options.force) {
      throw new EngramError(
        'CONFLICT',
        `${name} is a live entry: drop it first, or purge it with force to remove it and all its history now.`,
        { reason: 'purge-live', name },
      );
    }
    const count = await this.store.purge(caller.user, name, { includeLive: options.force });
    if (count === 0)
      throw new EngramError('NOT_FOUND', `${name} is neither live nor in the trash; nothing was purged.`);
    return count;
  }

  /**
   * With a retention of 0 days, what was just dropped is purged at once. The drop has
   * already committed, so a purge that cannot finish its last step now (another process
   * keeps the database busy) must not turn it into an error: what is left of it goes at
   * the next checkpoint or the next start.
   */
  async purgeIfNoRetention(): Promise<void> {
    if (this.policy.trashRetentionDays !== 0) return;
    try {
      await this.store.purgeTrash(this.rules.now());
    } catch (error) {
      if (!(error instanceof EngramError && error.code === 'STORE_UNAVAILABLE')) throw error;
    }
  }

  /** Purges, for every user, the trash older than the retention period. */
  purgeExpired(): Promise<number> {
    return this.store.purgeTrash(this.rules.now() - trashRetentionMs(this.policy));
  }

  /** The revisions of `name` (already parsed); NOT_FOUND when it has none. */
  private async revisionsOf(caller: Caller, name: string): Promise<RevisionRecord[]> {
    const revisions = await this.store.history(caller.user, name);
    if (revisions.length === 0) {
      throw new EngramError('NOT_FOUND', `${name} has no history: no entry of that name, live or in the trash.`);
    }
    return revisions;
  }
}

/** Revision `revision` among the entry's `revisions`, or the error that says which are kept. */
function pickRevision(name: string, revisions: readonly RevisionRecord[], revision: number): RevisionRecord {
  const found = revisions.find((item) => item.revision === revision);
  if (!found) {
    const first = revisions[0]?.revision;
    const last = revisions.at(-1)?.revision;
    throw new EngramError(
      'NOT_FOUND',
      `${name} has no revision ${revision}; the revisions kept are ${first}${first === last ? '' : ` to ${last}`}.`,
      { reason: 'no-such-revision', name, revision, first: first ?? 0, last: last ?? 0 },
    );
  }
  return found;
}
