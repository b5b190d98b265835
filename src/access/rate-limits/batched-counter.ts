/**
 * A shared count, kept here and sent to the shared store in batches: for the limits that
 * guard load (`mcp`, `api`: a runaway loop, a leaked token), where counting every request
 * in PostgreSQL cost each /mcp call an upsert and a round trip (some 15% of a durable
 * write's time at one connection). A request waits for the shared count only when this
 * server has not heard it for `syncMs` (a key's first request of a window, or the first
 * after a pause), and is counted in it then; the requests that follow within `syncMs` are
 * decided here, from that count plus this server's own since, and added to the shared
 * count at most `syncMs` later, in one statement per key, which also brings back what the
 * other servers added. One server alone counts exactly, and so do several whose requests
 * for a key come further apart than `syncMs`; several servers taking a burst of one key's
 * requests at once may let it past its limit by what each admits before it next hears
 * the total, some `syncMs` later. The limits that guard credentials (`auth`, `sign-in`)
 * are not counted so.
 *
 * Should the shared store fail, the requests counted here are let through and forgotten,
 * as a failing count lets a request through (storage/postgres/rate-counters.ts).
 */

import type { RateCount, RateCounter } from './port.js';
import type { Rate } from './rules.js';

/** The shared count of one key, as the store answers when points are added to it. */
export interface SharedCount {
  /** Points the key holds in its current window, those just added included. */
  readonly used: number;
  /** Milliseconds until that window ends. */
  readonly resetMs: number;
}

/** A count every server shares: adds points to a key's count and says what it holds then. */
export interface SharedTally {
  add(key: string, points: number): Promise<SharedCount>;
}

export interface BatchedCounterOptions {
  /** How long a server's own requests wait here before the shared count hears of them. */
  readonly syncMs: number;
  /** Keys remembered at most; past it, the key asked of the shared count longest ago is forgotten (asked again at its next request). */
  readonly maxKeys: number;
  readonly now?: () => number;
}

export const DEFAULT_BATCHED: BatchedCounterOptions = { syncMs: 100, maxKeys: 100_000 };

interface KeyState {
  /** The shared count when last heard, this server's requests sent so far included. */
  used: number;
  /** This server's requests not yet sent. */
  pending: number;
  /** This server's requests sent and not yet counted back (an add under way). */
  sending: number;
  /** When the window ends (ms since the epoch). */
  ends: number;
  /** When the shared count was last heard (ms since the epoch). */
  heard: number;
  /** The shared count being asked for, while a request waits for it. */
  asking?: Promise<void>;
}

export class BatchedCounter implements RateCounter {
  private readonly keys = new Map<string, KeyState>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly now: () => number;

  constructor(
    private readonly tally: SharedTally,
    private readonly rate: Rate,
    private readonly options: BatchedCounterOptions = DEFAULT_BATCHED,
  ) {
    this.now = options.now ?? Date.now;
  }

  async take(key: string): Promise<RateCount> {
    let state = this.keys.get(key);
    // Another request is asking the shared count: decide by its answer (or ask anew if it failed).
    while (state?.asking) {
      await state.asking;
      state = this.keys.get(key);
    }
    const now = this.now();
    if (state === undefined || state.ends <= now) {
      return this.ask(key, { used: 0, pending: 0, sending: 0, ends: 0, heard: 0 });
    }
    if (now - state.heard >= this.options.syncMs) return this.ask(key, state);
    const used = state.used + state.sending + state.pending;
    const resetMs = Math.max(state.ends - now, 0);
    if (used >= this.rate.points) return { allowed: false, remaining: 0, resetMs };
    state.pending++;
    this.schedule();
    return { allowed: true, remaining: this.rate.points - used - 1, resetMs };
  }

  async giveBack(key: string): Promise<void> {
    const state = this.keys.get(key);
    // Only within the window it was counted in: past it, the count began again without it.
    if (state === undefined || state.ends <= this.now()) return;
    if (state.pending > 0) state.pending--;
    else await this.send(key, state, -1);
  }

  /** Sends every key's requests counted here to the shared count, and forgets the keys whose window ended. */
  private async sendPending(): Promise<void> {
    const sends: Promise<void>[] = [];
    for (const [key, state] of this.keys) {
      if (state.pending > 0 && state.asking === undefined) sends.push(this.sendPendingOf(key, state));
      else if (state.ends <= this.now() && state.asking === undefined) this.keys.delete(key);
    }
    await Promise.all(sends);
  }

  /**
   * Counts this request, and those counted here and not yet sent, in the shared count, and
   * decides by what it then holds: a key's first request of a window, or the first since
   * this server last heard the count `syncMs` ago.
   */
  private async ask(key: string, state: KeyState): Promise<RateCount> {
    let count: RateCount | undefined;
    const points = state.pending + 1;
    state.pending = 0;
    state.asking = this.tally.add(key, points).then(
      (shared) => {
        this.heard(state, shared);
        count = {
          allowed: shared.used <= this.rate.points,
          remaining: Math.max(this.rate.points - shared.used, 0),
          resetMs: Math.max(shared.resetMs, 0),
        };
      },
      () => {
        // Let through, and not remembered: the next request asks again.
        this.keys.delete(key);
        count = { allowed: true, remaining: this.rate.points, resetMs: this.rate.windowSeconds * 1000 };
      },
    );
    this.remember(key, state);
    await state.asking;
    delete state.asking;
    return count!;
  }

  /** Adds the requests counted here for `key` to the shared count. */
  private sendPendingOf(key: string, state: KeyState): Promise<void> {
    const points = state.pending;
    state.pending = 0;
    return this.send(key, state, points);
  }

  private async send(key: string, state: KeyState, points: number): Promise<void> {
    state.sending += points;
    try {
      this.heard(state, await this.tally.add(key, points));
    } catch {
      // Not counted: those requests were let through, as a failing count lets them through.
    } finally {
      state.sending -= points;
    }
  }

  /** What the shared count said; requests counted here meanwhile stay pending, on top of it. */
  private heard(state: KeyState, shared: SharedCount): void {
    const now = this.now();
    state.used = shared.used;
    state.ends = now + shared.resetMs;
    state.heard = now;
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.sendPending();
    }, this.options.syncMs);
    this.timer.unref();
  }

  private remember(key: string, state: KeyState): void {
    this.keys.delete(key);
    this.keys.set(key, state);
    for (const [oldest, forgotten] of this.keys) {
      if (this.keys.size <= this.options.maxKeys) break;
      this.keys.delete(oldest);
      if (forgotten.pending > 0 && forgotten.asking === undefined) void this.sendPendingOf(oldest, forgotten);
    }
  }
}
