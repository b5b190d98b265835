/**
 * The server-sent events format (text/event-stream), as much of it as /api/events uses: a
 * stream read in pieces is cut into events at blank lines, and each event's lines into its
 * fields. events.ts reads the stream; this only parses it.
 */

/** One event: its type (`message` unless it says), its data lines joined, and `retry` when it sets one. */
export interface ServerEvent {
  readonly type: string;
  readonly data: string;
  readonly retry?: number;
}

/** One event (the lines before a blank line): comments skipped, fields as the SSE format defines them. */
export function parseEvent(block: string): ServerEvent {
  let type = 'message';
  let retry: number | undefined;
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
  return { type, data: data.join('\n'), ...(retry === undefined ? {} : { retry }) };
}

/** The whole events `buffer` holds (each ended by a blank line), and the rest, the start of one still to come. */
export function splitEvents(buffer: string): { readonly blocks: string[]; readonly rest: string } {
  const blocks: string[] = [];
  let rest = buffer;
  for (let end = rest.indexOf('\n\n'); end >= 0; end = rest.indexOf('\n\n')) {
    blocks.push(rest.slice(0, end));
    rest = rest.slice(end + 2);
  }
  return { blocks, rest };
}
