/**
 * `GET /api/events`: server-sent events telling a signed-in browser that its user's memory
 * changed — by any assistant, in any process sharing the database (the store's watch,
 * memory/activity.ts) — so the web UI fetches again instead of polling. Each stream is the
 * caller's own user's alone. Streams are capped per user and in all (429 beyond), kept
 * open through proxies by a comment every HEARTBEAT_MS, ended when their caller is no
 * longer let in (a revoked token, a signed-out session: checked at each heartbeat) or
 * reads nothing, and all ended when the server closes, so that closing never waits for them.
 */

import type { ServerResponse } from 'node:http';
import type { MemoryChange } from '../../memory/activity.js';
import type { Caller, Memory } from '../../memory/memory.js';
import { EngramError } from '../../memory/model/errors.js';
import type { ApiResult, Route } from './route.js';

export interface EventStreamLimits {
  /** Streams one user may hold open at once (several tabs and devices). */
  readonly perUser: number;
  /** Streams open at once on this server. */
  readonly total: number;
  /** How often each stream is sent a comment (and its caller checked again), in ms. */
  readonly heartbeatMs: number;
}

export const DEFAULT_EVENT_STREAM_LIMITS: EventStreamLimits = { perUser: 8, total: 256, heartbeatMs: 20_000 };

/** Bytes a stream may leave unread before it is ended: events are small, so only a client that reads nothing gets here. */
const MAX_UNREAD_BYTES = 64 * 1024;

/** How long a browser waits before reconnecting a stream that ended, in ms (the `retry` field). */
const RECONNECT_MS = 3_000;

/** Whether the stream's caller would still be let in (the same check as any /api request). */
export type StillAllowed = () => Promise<boolean>;

interface Stream {
  readonly user: string;
  readonly res: ServerResponse;
  readonly stillAllowed: StillAllowed;
  /** Stops watching and forgets the stream; ends the response unless it has ended. */
  end(): void;
}

export class EventStreams {
  private readonly streams = new Set<Stream>();
  private readonly perUser = new Map<string, number>();
  private heartbeat: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly memory: Memory,
    private readonly limits: EventStreamLimits = DEFAULT_EVENT_STREAM_LIMITS,
    /** Told when a stream opens; the function it returns, when the stream ends (metrics). */
    private readonly opened?: () => () => void,
  ) {}

  routes(): Route[] {
    return [{ method: 'GET', template: '/api/events', handle: async ({ caller }) => this.admit(caller) }];
  }

  /** How many streams are open (for tests and the log). */
  get size(): number {
    return this.streams.size;
  }

  /** Ends every stream, and refuses new ones: the server is closing. */
  close(): void {
    this.closed = true;
    for (const stream of [...this.streams]) stream.end();
  }

  /** A stream for the caller, or BUSY (429) beyond the caps. */
  private admit(caller: Caller): ApiResult {
    if (this.closed)
      throw new EngramError('BUSY', 'This server is shutting down: connect to it again once it is back.');
    if ((this.perUser.get(caller.user) ?? 0) >= this.limits.perUser) {
      throw new EngramError(
        'BUSY',
        `This user already has ${this.limits.perUser} event streams open, the most a user may: ` +
          'close another tab or window of the web UI, then try again.',
      );
    }
    if (this.streams.size >= this.limits.total) {
      throw new EngramError(
        'BUSY',
        `This server already has ${this.limits.total} event streams open, the most it keeps: try again in a minute.`,
      );
    }
    // Counted now: no await comes between this check and the stream opening.
    this.count(caller.user, 1);
    return { respond: (res, stillAllowed) => this.open(caller, res, stillAllowed) };
  }

  /**
   * Opens the stream and says `ready` once the watch has its starting point. A failure
   * before then (the response could not be started) forgets the stream and rejects: the
   * router answers it as any failed request (a 500, or a cut connection once begun).
   */
  private async open(caller: Caller, res: ServerResponse, stillAllowed: StillAllowed): Promise<void> {
    let stop: (() => void) | undefined;
    let uncount: (() => void) | undefined;
    let ended = false;
    let ready = false;
    const forget = () => {
      if (ended) return;
      ended = true;
      stop?.();
      uncount?.();
      this.streams.delete(stream);
      this.count(caller.user, -1);
      if (this.streams.size === 0) this.stopHeartbeat();
    };
    const stream: Stream = {
      user: caller.user,
      res,
      stillAllowed,
      end: () => {
        forget();
        if (!res.writableEnded) res.end();
      },
    };
    res.on('close', stream.end);
    if (res.destroyed || this.closed) {
      stream.end();
      return;
    }
    try {
      this.start(stream);
      uncount = this.opened?.();
    } catch (error) {
      forget();
      throw error;
    }
    let stopWatching: () => void;
    try {
      // A change told before `ready` committed before it: the page's fetch on `ready` shows it.
      stopWatching = await this.memory.activity.watch(caller, (change) => {
        if (ready) send(stream, changeEvent(change));
      });
    } catch {
      // The store is closing with the server: the browser reconnects once it is back.
      stream.end();
      return;
    }
    if (ended) {
      stopWatching();
      return;
    }
    stop = stopWatching;
    // Only now, with the watch's starting point read: a change committed after `ready` is
    // always told. Changes made while no stream was open are not replayed: on `ready` the
    // page fetches what it shows.
    ready = true;
    send(stream, `retry: ${RECONNECT_MS}\nevent: ready\ndata: {}\n\n`);
  }

  /** Sends the stream's headers at once and counts it among the open streams. */
  private start(stream: Stream): void {
    const { res } = stream;
    // The connection closes with the stream, so a server that closes never waits on it.
    res.shouldKeepAlive = false;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      // nginx and the like would hold the events back to fill a buffer.
      'X-Accel-Buffering': 'no',
    });
    // The browser learns the stream is open at once, though `ready` may wait for the store.
    res.flushHeaders();
    this.streams.add(stream);
    this.startHeartbeat();
  }

  private count(user: string, delta: number): void {
    const count = (this.perUser.get(user) ?? 0) + delta;
    if (count > 0) this.perUser.set(user, count);
    else this.perUser.delete(user);
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => void this.beat(), this.limits.heartbeatMs);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /** A comment to every stream, and each caller checked again: one no longer let in is ended. */
  private async beat(): Promise<void> {
    await Promise.all(
      [...this.streams].map(async (stream) => {
        send(stream, ': heartbeat\n\n');
        let allowed = false;
        try {
          allowed = await stream.stillAllowed();
        } catch {
          // The check itself failed (the store is unreachable): end the stream; the browser reconnects.
        }
        if (!allowed) stream.end();
      }),
    );
  }
}

/** One `change` event: its data the change as JSON (version, and name, revision and operation when known). */
function changeEvent(change: MemoryChange): string {
  return `event: change\ndata: ${JSON.stringify(change)}\n\n`;
}

/** Writes to the stream, ending it instead when the client has left this much unread. */
function send(stream: Stream, text: string): void {
  const { res } = stream;
  if (res.writableEnded || res.destroyed) return;
  if (res.writableLength > MAX_UNREAD_BYTES) {
    stream.end();
    return;
  }
  res.write(text);
}
