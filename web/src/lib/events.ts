/**
 * Word from the server that memory changed (`GET /api/events`, server-sent events), for the
 * pages that show it. The stream is read with fetch() rather than EventSource, which cannot
 * send an Authorization header: so a token pasted into this tab gets live updates as the
 * session cookie does. Like EventSource, it reconnects after the stream's `retry` when the
 * connection is lost, and stops for good when the server refuses it (a token no longer
 * valid, too many streams open). Everything that listens in this tab (the view shown, the
 * header's count of changes waiting for review) shares one stream: the server caps how many
 * a user may hold open.
 */

import { storedToken } from './api/client';
import { parseEvent, splitEvents } from './sse';

export interface ChangeHandlers {
  /** The stream opened, or opened again: fetch what the page shows (a change made before is not replayed). */
  readonly ready: () => void;
  /** Memory changed: the event's data, JSON (version; name, revision and operation when known). */
  readonly change: (data: string) => void;
}

/** How long to wait before connecting again, until the server says (`retry:`). */
const DEFAULT_RETRY_MS = 3_000;

/** Everyone listening in this tab. */
const listeners = new Set<ChangeHandlers>();
/** Ends the one stream; undefined while none is open. */
let stopStream: (() => void) | undefined;
/** The stream has said `ready` since it last (re)connected: a new listener may fetch at once. */
let streamReady = false;

/** Listens until the function it returns is called; `ready` is called at once when the shared stream is open already. */
export function listenForChanges(handlers: ChangeHandlers): () => void {
  listeners.add(handlers);
  if (stopStream === undefined) {
    stopStream = openStream({
      ready: () => {
        streamReady = true;
        for (const listener of [...listeners]) listener.ready();
      },
      change: (data) => {
        for (const listener of [...listeners]) listener.change(data);
      },
      lost: () => {
        streamReady = false;
      },
    });
  } else if (streamReady) {
    // Later, as a stream's `ready` comes: not inside the caller's own effect, which would
    // then depend on whatever `ready` reads and writes.
    queueMicrotask(() => {
      if (listeners.has(handlers)) handlers.ready();
    });
  }
  return () => {
    if (!listeners.delete(handlers) || listeners.size > 0) return;
    stopStream?.();
    stopStream = undefined;
    streamReady = false;
  };
}

/** The one stream, told to `handlers`, until the function it returns is called. */
function openStream(handlers: ChangeHandlers & { readonly lost: () => void }): () => void {
  const abort = new AbortController();
  let retry = DEFAULT_RETRY_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const dispatch = (block: string) => {
    const event = parseEvent(block);
    if (event.retry !== undefined) retry = event.retry;
    if (event.type === 'ready') handlers.ready();
    else if (event.type === 'change') handlers.change(event.data);
  };

  const again = () => {
    handlers.lost();
    if (!abort.signal.aborted) timer = setTimeout(() => void connect(), retry);
  };

  const connect = async () => {
    const token = storedToken();
    let response: Response;
    try {
      response = await fetch('/api/events', {
        headers: { Accept: 'text/event-stream', ...(token === null ? {} : { Authorization: `Bearer ${token}` }) },
        credentials: 'same-origin',
        cache: 'no-store',
        signal: abort.signal,
      });
    } catch {
      again();
      return;
    }
    if (!response.ok || response.body === null) {
      handlers.lost();
      return;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const { blocks, rest } = splitEvents(buffer + value);
        buffer = rest;
        for (const block of blocks) dispatch(block);
      }
    } catch {
      // The connection was lost, or closed here.
    }
    again();
  };

  void connect();
  return () => {
    abort.abort();
    clearTimeout(timer);
  };
}
