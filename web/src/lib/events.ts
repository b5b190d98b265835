/**
 * Word from the server that memory changed (`GET /api/events`, server-sent events), for the
 * pages that show it. The stream is read with fetch() rather than EventSource, which cannot
 * send an Authorization header: so a token pasted into this tab gets live updates as the
 * session cookie does. Like EventSource, it reconnects after the stream's `retry` when the
 * connection is lost, and stops for good when the server refuses it (a token no longer
 * valid, too many streams open).
 */

import { storedToken } from './api/client';

export interface ChangeHandlers {
  /** The stream opened, or opened again: fetch what the page shows (a change made before is not replayed). */
  readonly ready: () => void;
  /** Memory changed: the event's data, JSON (version; name, revision and operation when known). */
  readonly change: (data: string) => void;
}

/** How long to wait before connecting again, until the server says (`retry:`). */
const DEFAULT_RETRY_MS = 3_000;

/** Listens until the function it returns is called. */
export function listenForChanges(handlers: ChangeHandlers): () => void {
  const abort = new AbortController();
  let retry = DEFAULT_RETRY_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;

  /** One event (the lines before a blank line): comments skipped, fields as the SSE format defines them. */
  const dispatch = (block: string) => {
    let type = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') type = value;
      else if (field === 'data') data.push(value);
      else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value);
    }
    if (type === 'ready') handlers.ready();
    else if (type === 'change') handlers.change(data.join('\n'));
  };

  const again = () => {
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
    if (!response.ok || response.body === null) return;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          dispatch(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
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
