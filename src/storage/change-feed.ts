/**
 * Word of changes for watchers (ChangeStore in memory/port.ts), shared by every backend.
 * Each user's memory has a change counter (its `version`) that every committed change
 * moves, in the same transaction. The feed keeps, per watched user, their listeners and
 * the version they were last told. A store says when it committed a change (`committed`,
 * with what it knows of it), and that is always told; while anyone watches, the feed also
 * polls the watched users' versions, so that changes committed by other processes sharing
 * the database are told too — a backend may gate the poll on something cheaper (SQLite's
 * data_version). A poll tells only a version that moved since the last one told or read,
 * so a change is told once, or (when a poll reads it first) twice. A watch is ready once
 * its user's starting version is read (or its read has failed, when the first read that
 * succeeds tells a change): from then on no committed change goes untold.
 */

import type { ChangeListener, MemoryChange } from '../memory/activity.js';
import type { Change, Decide, MutationResult } from '../memory/port.js';

/** How a read of versions was asked for: the first of a newly watched user, a poll, or a commit of this store. */
type Reason = 'baseline' | 'poll' | 'committed';

/** What a change this store made is known to be. */
export type ChangeDetails = Omit<MemoryChange, 'version'>;

/** The versions of these users (a user the store keeps nothing of: absent, read as 0). */
export type ReadVersions = (
  users: readonly string[],
) => ReadonlyMap<string, number> | Promise<ReadonlyMap<string, number>>;

export interface ChangeFeedOptions {
  readonly readVersions: ReadVersions;
  /** Poll every this many ms while anyone watches; no polling without (one process owns the data). */
  readonly pollMs?: number;
  /** Checked before each poll: false when nothing can have changed since the last (skips reading versions). */
  readonly mayHaveChanged?: () => boolean;
}

/** `decide`, keeping the change it decided last (a transaction tried again calls it again). */
export function recordingDecide(decide: Decide): {
  readonly decide: Decide;
  readonly decided: () => Change | undefined;
} {
  let decided: Change | undefined;
  return {
    decide: (current, usage) => {
      decided = decide(current, usage);
      return decided;
    },
    decided: () => decided,
  };
}

/** What a committed mutate of `name` changed, or undefined when it changed nothing. */
export function mutationDetails(
  name: string,
  change: Change | undefined,
  { before, after }: MutationResult,
): ChangeDetails | undefined {
  if (change === undefined || change.kind === 'none') return undefined;
  if (change.kind === 'drop') return before ? { name, revision: before.revision + 1, operation: 'drop' } : undefined;
  return after ? { name, revision: after.revision, operation: change.operation } : undefined;
}

interface Watched {
  readonly listeners: Set<ChangeListener>;
  /** The version last told or read; undefined until the first read. */
  version: number | undefined;
  /** Settles once the first read of the version has returned or failed. */
  started: Promise<unknown>;
}

export class ChangeFeed {
  private readonly watched = new Map<string, Watched>();
  private timer: NodeJS.Timeout | undefined;
  /** The last poll could not read the versions: the next one reads them whatever mayHaveChanged says. */
  private unread = false;
  private closed = false;

  constructor(private readonly options: ChangeFeedOptions) {}

  /**
   * Tells `listener` of each change of `user`'s memory until the function it resolves to
   * is called. It resolves once the starting version is known, so that every change
   * committed after it resolves is told; one committed before may be told too.
   */
  async watch(user: string, listener: ChangeListener): Promise<() => void> {
    if (this.closed) throw new Error('the store is closed');
    let entry = this.watched.get(user);
    if (!entry) {
      entry = { listeners: new Set(), version: undefined, started: Promise.resolve() };
      this.watched.set(user, entry);
      // The version now, so that the first change after it is told (and nothing before).
      entry.started = Promise.resolve(this.read([user], 'baseline'));
    }
    const listeners = entry.listeners;
    // The same function added twice is two listeners.
    const own: ChangeListener = (change) => listener(change);
    listeners.add(own);
    this.schedule();
    const stop = () => {
      listeners.delete(own);
      if (listeners.size === 0 && this.watched.get(user)?.listeners === listeners) this.watched.delete(user);
      if (this.watched.size === 0) this.stop();
    };
    await entry.started;
    return stop;
  }

  /** This store committed a change of `user`'s memory: the watchers learn it (with `details`) once its version is read. */
  committed(user: string, details: ChangeDetails = {}): void {
    if (this.watched.has(user)) this.read([user], 'committed', details);
  }

  /** A change of any users this store cannot name (e.g. expired trash, a load): every watched version is read again. */
  committedSome(): void {
    if (this.watched.size > 0) this.read([...this.watched.keys()], 'poll');
  }

  /** Stops polling and forgets every watcher. */
  close(): void {
    this.closed = true;
    this.watched.clear();
    this.stop();
  }

  /**
   * Reads the versions of `users` and tells their watchers as `reason` says, synchronously
   * when the read is; false (or a promise of it) when the read failed.
   */
  private read(users: readonly string[], reason: Reason, details: ChangeDetails = {}): boolean | Promise<boolean> {
    let versions: ReadonlyMap<string, number> | Promise<ReadonlyMap<string, number>>;
    try {
      versions = this.options.readVersions(users);
    } catch {
      // Unreadable now (busy, closing): the next poll or change reads again.
      return false;
    }
    if (!(versions instanceof Promise)) {
      this.apply(users, versions, reason, details);
      return true;
    }
    return versions.then(
      (read) => {
        this.apply(users, read, reason, details);
        return true;
      },
      () => false,
    );
  }

  private apply(
    users: readonly string[],
    versions: ReadonlyMap<string, number>,
    reason: Reason,
    details: ChangeDetails,
  ): void {
    for (const user of users) {
      const entry = this.watched.get(user);
      if (!entry) continue;
      const version = versions.get(user) ?? 0;
      // A baseline read that returns after another read is already out of date.
      if (reason === 'baseline') {
        entry.version ??= version;
        continue;
      }
      if (reason === 'poll' && version === entry.version) continue;
      entry.version = version;
      const change: MemoryChange = { version, ...details };
      for (const listener of [...entry.listeners]) {
        try {
          listener(change);
        } catch {
          // One watcher's failure is its own; the others are still told.
        }
      }
    }
  }

  private schedule(): void {
    const { pollMs } = this.options;
    if (pollMs === undefined || this.timer || this.closed || this.watched.size === 0) return;
    this.timer = setTimeout(() => void this.poll(), pollMs);
    // Watching alone never keeps a process alive.
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    this.timer = undefined;
    if (this.closed || this.watched.size === 0) return;
    let changed = true;
    try {
      changed = this.unread || (this.options.mayHaveChanged?.() ?? true);
    } catch {
      // Unreadable now: read the versions anyway (which fails quietly too) and try again later.
    }
    if (changed) this.unread = !(await this.read([...this.watched.keys()], 'poll'));
    this.schedule();
  }

  private stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
