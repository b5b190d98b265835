// The server-sent events parser of the web UI's live updates (web/src/lib/sse.ts).
import { describe, expect, it } from 'vitest';
import { parseEvent, splitEvents } from '../../web/src/lib/sse';

describe('parseEvent', () => {
  it('reads the type, the data lines joined, and retry', () => {
    expect(parseEvent('event: change\ndata: {"version":2}')).toEqual({ type: 'change', data: '{"version":2}' });
    expect(parseEvent('event: ready\nretry: 5000')).toEqual({ type: 'ready', data: '', retry: 5000 });
    expect(parseEvent('data: one\ndata:two')).toEqual({ type: 'message', data: 'one\ntwo' });
  });

  it('skips comments and keeps a value past its first space', () => {
    expect(parseEvent(': keep-alive\nevent:change\ndata:  two spaces')).toEqual({
      type: 'change',
      data: ' two spaces',
    });
  });

  it('ignores a retry that is not a whole number, and fields it does not know', () => {
    expect(parseEvent('retry: soon\nid: 7\nevent: ready')).toEqual({ type: 'ready', data: '' });
  });
});

describe('splitEvents', () => {
  it('cuts whole events at blank lines and keeps the start of the next', () => {
    expect(splitEvents('event: ready\n\nevent: change\ndata: 1\n\nevent: ch')).toEqual({
      blocks: ['event: ready', 'event: change\ndata: 1'],
      rest: 'event: ch',
    });
  });

  it('gives an event split across reads once it is whole', () => {
    const first = splitEvents('event: change\nda');
    expect(first.blocks).toEqual([]);
    expect(splitEvents(`${first.rest}ta: 1\n\n`)).toEqual({ blocks: ['event: change\ndata: 1'], rest: '' });
  });
});
