/**
 * Every file the CLI reads for the user goes through one reader with a limit: a regular
 * file past it is refused by its size, unread; anything else (stdin, a pipe, a device) is
 * read in chunks that stop as soon as they pass it. Counted as bytes read, never as time.
 */

import { mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readBounded } from '../../src/cli/bounded-read.js';
import { tempDir } from '../helpers/engram.js';

const LIMIT = { bytes: 1024 * 1024, what: 'this reads', instead: 'name a smaller file' };

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
