/**
 * Every file the CLI reads for the user goes through one reader with a limit: a regular
 * file past it is refused by its size, unread; anything else (stdin, a pipe, a device) is
 * read in chunks that stop as soon as they pass it. Counted as bytes read, never as time.
 */

import { mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readBounded } from '../../src/cli/bounded-read.js';
import { tempDir } from '../helpers/engram.js';

const LIMIT = { bytes: 1024 * 1024, what: 'this reads', instead: 'name a smaller file' };

type ReadSync = (fd: number, buffer: Buffer, offset: number, length: number, position: null) => number;

/** The reads readBounded makes: as the system makes them, unless a test stands in for them. */
const reads = vi.hoisted(() => ({ instead: undefined as undefined | ((read: ReadSync) => ReadSync) }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const real = fs.readSync as unknown as ReadSync;
  const readSync: ReadSync = (...args) => (reads.instead ? reads.instead(real) : real)(...args);
  return { ...fs, default: { ...fs, readSync }, readSync };
});

afterEach(() => {
  reads.instead = undefined;
});

describe('readBounded', () => {
  it('reads a file within the limit', () => {
    const file = join(tempDir().path, 'small.txt');
    writeFileSync(file, 'hello');
    expect(readBounded(file, LIMIT).toString()).toBe('hello');
  });

  it('refuses a regular file past the limit by its size, without reading it', () => {
    const file = join(tempDir().path, 'huge.bin');
    writeFileSync(file, '');
    // 8 GB, sparse: read whole, it would take the process's memory before any check.
    truncateSync(file, 8 * 1024 * 1024 * 1024);
    expect(() => readBounded(file, LIMIT)).toThrow(
      `${file} is 8,589,934,592 bytes, over the 1,048,576 bytes this reads: name a smaller file`,
    );
  });

  it('stops reading what has no size (a device, a pipe) as soon as it passes the limit', () => {
    // /dev/zero never ends: read whole, it would never return.
    expect(() => readBounded('/dev/zero', LIMIT)).toThrow(
      '/dev/zero holds more than the 1,048,576 bytes this reads: name a smaller file',
    );
  });

  it('names the file as asked, refuses a folder, and says why a file cannot be read', () => {
    const dir = tempDir().path;
    mkdirSync(join(dir, 'folder'));
    expect(() => readBounded(join(dir, 'folder'), { ...LIMIT, name: '--new-file folder' })).toThrow(
      'cannot read --new-file folder: it is a folder, not a file',
    );
    expect(() => readBounded(join(dir, 'absent'), LIMIT)).toThrow(/^cannot read .*absent: ENOENT/);
  });
});

describe('readBounded of what has no size, read a little at a time', () => {
  it('holds at most twice the limit however small the reads (a pipe handing over 1 KiB at a time)', () => {
    const limit = { ...LIMIT, bytes: 4 * 1024 * 1024 };
    const before = process.memoryUsage().arrayBuffers;
    let peak = before;
    reads.instead = (real) => (fd, buffer, offset, length, position) => {
      peak = Math.max(peak, process.memoryUsage().arrayBuffers);
      return real(fd, buffer, offset, Math.min(length, 1024), position);
    };
    expect(() => readBounded('/dev/zero', limit)).toThrow(
      '/dev/zero holds more than the 4,194,304 bytes this reads: name a smaller file',
    );
    // Before: a 64 KiB buffer kept for each 1 KiB read, 256 MiB for a 4 MiB limit.
    expect(peak - before).toBeLessThan(2 * limit.bytes + 1024 * 1024);
  });

  it('reads what comes in small pieces whole and in order', () => {
    const file = join(tempDir().path, 'pieces.txt');
    const text = Array.from({ length: 50_000 }, (_, i) => `${i}\n`).join('');
    writeFileSync(file, text);
    reads.instead = (real) => (fd, buffer, offset, length, position) =>
      real(fd, buffer, offset, Math.min(length, 333), position);
    // Read as a pipe is, without trusting the size.
    expect(readBounded(file, { ...LIMIT, bytes: text.length }).toString()).toBe(text);
  });

  it('waits for a non-blocking stdin that has nothing yet, not asking again at once', () => {
    const file = join(tempDir().path, 'later.txt');
    writeFileSync(file, 'at last');
    const until = performance.now() + 100;
    let asked = 0;
    reads.instead = (real) => (fd, buffer, offset, length, position) => {
      asked++;
      if (performance.now() < until)
        throw Object.assign(new Error('EAGAIN: resource temporarily unavailable'), { code: 'EAGAIN' });
      return real(fd, buffer, offset, length, position);
    };
    expect(readBounded(file, LIMIT).toString()).toBe('at last');
    // Before: asked again at once, some hundreds of thousands of times in 100 ms, a core kept busy.
    expect(asked).toBeLessThan(100);
  });
});
