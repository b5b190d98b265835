/**
 * When each entry was last opened by a model, kept approximately and never at the cost of
 * a read: memory_open only notes what it returned (a Map lookup, at most once an hour per
 * entry), and the notes are written later, off the read path, in one batch
 * (EntryStore.recordOpened) — on a timer, when a batch is full, or when the memory closes.
 * Bounded: what this process noted lately and what waits to be written are capped, and a
 * note past the cap is dropped. A failed write is logged, never a reader's error: the
 * figure is approximate by design (a person tidying up sees "not opened for months", not
 * the minute).
 */

import type { EntryStore, OpenedEntry } from './port.js';

/** An entry's opening is written at most once in this long (ms). */
export const OPENED_GAP_MS = 60 * 60 * 1000;

export interface OpenedLogOptions {
  readonly store: Pick<EntryStore, 'recordOpened'>;
  /** The Memory service's clock. */
  readonly now: () => number;
  /** Told when writing the notes failed. */
  readonly onError?: ((error: unknown) => void) | undefined;
  /** Longest a note waits to be written, in ms (default 30 s). */
  readonly flushAfterMs?: number;
  /** Notes written in one batch; this many waiting are written at once (default 500). */
  readonly batch?: number;
  /** Most notes waiting to be written; past it a note is dropped (default 10,000). */
  readonly maxPending?: number;
  /** Most entries remembered as noted within the gap; past it, the older half is let go at once (default 50,000). */
  readonly maxRecent?: number;
}

/** Where openings are noted (OpenedLog), or nowhere (NO_OPENED_LOG). */
export interface OpenedNotes {
  /** `names` of `user`'s memory were just returned to a model: noted, if not within the gap. */
  note(user: string, names: readonly string[]): void;
  /** Writes what waits, and notes nothing more. */
  close(): Promise<void>;
}

/** Notes nothing: a memory that keeps no record of openings (a benchmark's comparison). */
export const NO_OPENED_LOG: OpenedNotes = {
  note: () => {},
  close: async () => {},
};

export class OpenedLog implements OpenedNotes {
  private readonly store: Pick<EntryStore, 'recordOpened'>;
  private readonly now: () => number;
  private readonly onError: (error: unknown) => void;
  private readonly flushAfterMs: number;
  private readonly batch: number;
  private readonly maxPending: number;
  private readonly maxRecent: number;
  /**
   * When this process last noted each entry, in two generations: a note goes into `recent`,
   * and when it holds half of maxRecent it becomes `older` (the one before it let go whole).
   * Every step is O(1): a Map whose oldest keys were deleted one by one, as an LRU does,
   * makes V8 skip over the holes they leave on every look at its first key.
   */
  private recent = new Generation();
  private older = new Generation();
  private pending = new Map<string, OpenedEntry>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The delay `timer` was set with: a full batch's 0 replaces a longer wait, never the other way. */
  private due = 0;
  private writing: Promise<void> = Promise.resolve();
  private queued = false;
  private closed = false;

  constructor(options: OpenedLogOptions) {
    this.store = options.store;
    this.now = options.now;
    this.onError = options.onError ?? (() => {});
    this.flushAfterMs = options.flushAfterMs ?? 30_000;
    this.batch = options.batch ?? 500;
    this.maxPending = options.maxPending ?? 10_000;
    this.maxRecent = options.maxRecent ?? 50_000;
  }

  /** How many notes wait to be written. */
  get waiting(): number {
    return this.pending.size;
  }

  note(user: string, names: readonly string[]): void {
    if (this.closed || names.length === 0) return;
    const at = this.now();
    for (const name of names) {
      const last = this.recent.get(user, name) ?? this.older.get(user, name);
      if (last !== undefined && at - last < OPENED_GAP_MS && at >= last) continue;
      const key = keyOf(user, name);
      // Past the cap the note is dropped, and not remembered: a later opening may be noted.
      if (this.pending.size >= this.maxPending && !this.pending.has(key)) continue;
      this.remember(user, name, at);
      this.pending.set(key, { user, name, at });
    }
    if (this.pending.size >= this.batch) this.schedule(0);
    else if (this.pending.size > 0 && this.timer === undefined) this.schedule(this.flushAfterMs);
  }

  /** Writes every note waiting now (after any write under way); never throws. */
  flush(): Promise<void> {
    this.clearTimer();
    if (!this.queued) {
      // One write queued at a time: it takes every note waiting when it starts, and those that come meanwhile.
      this.queued = true;
      this.writing = this.writing.then(() => {
        this.queued = false;
        return this.writeWaiting();
      });
    }
    return this.writing;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private remember(user: string, name: string, at: number): void {
    if (this.recent.size >= Math.max(1, Math.floor(this.maxRecent / 2))) {
      this.older = this.recent;
      this.recent = new Generation();
    }
    this.recent.set(user, name, at);
  }

  private async writeWaiting(): Promise<void> {
    while (this.pending.size > 0) {
      const opens = this.takeBatch();
      try {
        await this.store.recordOpened(opens, OPENED_GAP_MS);
      } catch (error) {
        this.told(error);
      }
    }
  }

  /** Tells `onError` of a failed write; a teller that throws in turn is ignored, so writing never stops for good. */
  private told(error: unknown): void {
    try {
      this.onError(error);
    } catch {
      // Nothing more to tell it with: the notes of that write are lost, as a failed write loses them.
    }
  }

  /** The first `batch` notes waiting, taken out (the whole Map at once, where it fits in one). */
  private takeBatch(): OpenedEntry[] {
    if (this.pending.size <= this.batch) {
      const opens = [...this.pending.values()];
      this.pending = new Map();
      return opens;
    }
    const opens: OpenedEntry[] = [];
    for (const [key, open] of this.pending) {
      if (opens.length === this.batch) break;
      opens.push(open);
      this.pending.delete(key);
    }
    return opens;
  }

  /** A write within `delayMs` (unless one is due sooner); the timer never keeps the process alive. */
  private schedule(delayMs: number): void {
    if (this.timer !== undefined && this.due <= delayMs) return;
    this.clearTimer();
    this.due = delayMs;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, delayMs);
    this.timer.unref?.();
  }

  private clearTimer(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * Entries noted, by user then name: a lookup hashes the name alone (the user's string, the
 * same caller's each call, keeps its hash), with no key to build for an entry within the hour.
 */
class Generation {
  private readonly byUser = new Map<string, Map<string, number>>();
  size = 0;

  get(user: string, name: string): number | undefined {
    return this.byUser.get(user)?.get(name);
  }

  set(user: string, name: string, at: number): void {
    let names = this.byUser.get(user);
    if (names === undefined) {
      names = new Map();
      this.byUser.set(user, names);
    }
    if (!names.has(name)) this.size++;
    names.set(name, at);
  }
}

/** One key per (user, name), whatever either holds. */
function keyOf(user: string, name: string): string {
  return `${user.length}:${user}${name}`;
}
