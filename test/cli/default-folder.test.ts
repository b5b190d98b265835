/**
 * The one place Engram makes folders: the default database path's, 0700, and only when the
 * database to create is that path — however it is spelt (the Claude Desktop bundle names it
 * as `${HOME}/.local/share/engram/memory.db`, with forward slashes on Windows too). Any
 * other path must be in a folder that exists.
 */

import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { prepareFolder } from '../../src/cli/existing-memory.js';
import { tempDir } from '../helpers/engram.js';

it('makes the default path’s folders (0700) when the database named is the default, spelt another way', () => {
  const home = tempDir().path;
  const defaultPath = join(home, '.local', 'share', 'engram', 'memory.db');
  prepareFolder({ kind: 'sqlite', path: `${home}/.local/./share/engram//memory.db` }, defaultPath);
  expect(statSync(join(home, '.local', 'share', 'engram')).mode & 0o777).toBe(0o700);
});

it('makes no folder for any other path, and refuses one whose folder does not exist, naming it', () => {
  const home = tempDir().path;
  const defaultPath = join(home, '.local', 'share', 'engram', 'memory.db');
  expect(() => prepareFolder({ kind: 'sqlite', path: join(home, 'elsewhere', 'memory.db') }, defaultPath)).toThrow(
    expect.objectContaining({ code: 'STORE_UNAVAILABLE', message: expect.stringContaining(join(home, 'elsewhere')) }),
  );
  expect(existsSync(join(home, 'elsewhere'))).toBe(false);
  expect(existsSync(join(home, '.local'))).toBe(false);
  prepareFolder({ kind: 'sqlite', path: join(home, 'memory.db') }, defaultPath);
});
