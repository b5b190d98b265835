/**
 * The server's log (createBatchedLog): the lines of one turn of the event loop reach
 * stderr (or the writer given) in one write once the turn ends, in order and as `log`
 * writes each (prefixed, safe for a terminal); lines still pending are written when the
 * process exits, or when the log is closed, which stops it watching for the exit.
 */

import { afterEach, describe, expect, it, vi } from 'vitest';
import { createBatchedLog } from '../../src/cli/output.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Makes a batched log, and its exit listener, taken away again after the test. */
function batchedLog(): { log: (line: string) => void; onExit: () => void } {
  const before = new Set(process.listeners('exit'));
  const log = createBatchedLog();
  const onExit = process.listeners('exit').find((listener) => !before.has(listener)) as () => void;
  added.push(onExit);
  return { log, onExit };
}

const added: (() => void)[] = [];

describe('the batched log', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    for (const listener of added.splice(0)) process.off('exit', listener);
  });

  it('writes the lines of one turn together, after it', async () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const { log } = batchedLog();
    log('first');
    log('second \x1b[2J');
    expect(write).not.toHaveBeenCalled();
    await nextTurn();
    expect(write.mock.calls).toEqual([['engram: first\nengram: second \\x1b[2J\n']]);
    log('third');
    await nextTurn();
    expect(write.mock.calls[1]).toEqual(['engram: third\n']);
    expect(write).toHaveBeenCalledTimes(2);
  });

  it('writes what is pending when it is closed, to the writer it was given, and leaves the process alone', () => {
    const written: string[] = [];
    const exitListeners = process.listenerCount('exit');
    const log = createBatchedLog((text) => written.push(text));
    expect(process.listenerCount('exit')).toBe(exitListeners + 1);
    log('one');
    log('two');
    log.close();
    expect(written).toEqual(['engram: one\nengram: two\n']);
    expect(process.listenerCount('exit')).toBe(exitListeners);
  });

  it('writes what is pending when the process exits', () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const { log, onExit } = batchedLog();
    log('last words');
    onExit();
    expect(write.mock.calls).toEqual([['engram: last words\n']]);
  });
});
