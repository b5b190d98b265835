/**
 * Line framing of `engram stdio`: lines come out whole however the bytes are chunked, and
 * a line over the limit is reported once and dropped up to its newline, the next line
 * intact.
 */

import { describe, expect, it } from 'vitest';
import { LineReader } from '../../src/mcp/line-reader.js';

function reader(maxBytes: number) {
  const events: string[] = [];
  const lines = new LineReader(
    maxBytes,
    (line) => events.push(`line ${line.toString('utf8')}`),
    () => events.push('oversized'),
  );
  return { events, push: (bytes: string | Buffer) => lines.push(Buffer.from(bytes)) };
}

describe('LineReader', () => {
  it('joins a line split across chunks, multi-byte characters included', () => {
    const { events, push } = reader(100);
    for (const byte of Buffer.from('héllo\nwörld\n', 'utf8')) push(Buffer.from([byte]));
    push('a\n\nb');
    push('c\n');
    expect(events).toEqual(['line héllo', 'line wörld', 'line a', 'line ', 'line bc']);
  });

  it('takes a line of exactly the limit and refuses one byte more, once, keeping the next line', () => {
    const { events, push } = reader(4);
    push('abcd\nabcde\nok\n');
    expect(events).toEqual(['line abcd', 'oversized', 'line ok']);
  });

  it('drops an oversized line chunk by chunk until its newline', () => {
    const { events, push } = reader(8);
    push('0123');
    push('45678');
    for (let i = 0; i < 1000; i++) push('x'.repeat(1000));
    push('tail\nnext');
    expect(events).toEqual(['oversized']);
    push('\n');
    expect(events).toEqual(['oversized', 'line next']);
  });
});
