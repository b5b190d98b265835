/**
 * The environment the `engram` command reads: every variable and default path in one
 * place (environment.ts), read once by main from the environment it is given, so a
 * command sees nothing else (and the library's stores nothing at all).
 */

import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acceleratorVariable, readEnvironment } from '../../src/cli/environment.js';
import { main } from '../../src/cli/program.js';
import { ACCELERATOR_NAMES, NO_ACCELERATORS } from '../../src/storage/accelerators.js';
import { queryDatabase, tempDir } from '../helpers/engram.js';

/** Runs the CLI in this process with exactly `env` as its environment. */
async function engram(env: NodeJS.ProcessEnv, ...args: string[]) {
  const out: string[] = [];
  const io = { stdout: (text: string) => out.push(text), stderr: (text: string) => out.push(text) };
  const code = await main(args, io, env);
  return { code, output: out.join('') };
}

describe('the default database path', () => {
  it('is under $XDG_DATA_HOME when set', () => {
    expect(readEnvironment({ XDG_DATA_HOME: '/data' }).defaultDatabasePath).toBe('/data/engram/memory.db');
  });

  it('is under ~/.local/share otherwise, empty variables counting as unset', () => {
    const expected = join(homedir(), '.local', 'share', 'engram', 'memory.db');

    expect(readEnvironment({}).defaultDatabasePath).toBe(expected);
    expect(readEnvironment({ ENGRAM_DB: '', XDG_DATA_HOME: '' })).toMatchObject({
      db: undefined,
      defaultDatabasePath: expected,
    });
  });

  it('gives way to $ENGRAM_DB', () => {
    expect(readEnvironment({ ENGRAM_DB: '/srv/engram.db', XDG_DATA_HOME: '/data' })).toMatchObject({
      db: '/srv/engram.db',
      defaultDatabasePath: '/data/engram/memory.db',
    });
  });
});

describe('main', () => {
  it('opens the default path of the environment it is given, its folder created 0700', async () => {
    const dir = tempDir();
    const env = { XDG_DATA_HOME: dir.file('data'), XDG_CONFIG_HOME: dir.file('config') };

    expect(await engram(env, 'write', 'topics/x', '-d', 'X', '--new', 'x')).toEqual({
      code: 0,
      output: 'topics/x (2 bytes): X\n',
    });

    const db = join(dir.file('data'), 'engram', 'memory.db');
    expect(queryDatabase(db, 'SELECT name FROM entries')).toEqual([{ name: 'topics/x' }]);
    expect(statSync(join(dir.file('data'), 'engram')).mode & 0o777).toBe(0o700);
  });

  it('takes ENGRAM_DB, ENGRAM_USER and ENGRAM_CONFIG from that environment, below the flags', async () => {
    const dir = tempDir();
    const config = dir.config({ groups: { notes: 'anything' } });
    const env = { ENGRAM_DB: dir.file('env.db'), ENGRAM_USER: 'ada', ENGRAM_CONFIG: config, XDG_DATA_HOME: dir.path };

    expect((await engram(env, 'write', 'notes/a', '-d', 'A', '--new', 'a')).code).toBe(0);
    expect((await engram(env, 'write', 'notes/b', '-d', 'B', '--new', 'b', '--user', 'bob')).code).toBe(0);

    expect(queryDatabase(dir.file('env.db'), 'SELECT user_id, name FROM entries ORDER BY id')).toEqual([
      { user_id: 'ada', name: 'notes/a' },
      { user_id: 'bob', name: 'notes/b' },
    ]);
  });
});

describe('the storage accelerators’ switches (docs/accelerators.md)', () => {
  it('leave every storage accelerator as it defaults unless its ENGRAM_ACCEL_ variable is 0', () => {
    expect(acceleratorVariable('indexCache')).toBe('ENGRAM_ACCEL_INDEX_CACHE');
    expect(readEnvironment({}).storageAccelerators).toEqual({});
    expect(
      readEnvironment({ ENGRAM_ACCEL_INDEX_CACHE: '0', ENGRAM_ACCEL_WRITE_CACHE: '0', ENGRAM_ACCEL_GROUP_COMMIT: '1' })
        .storageAccelerators,
    ).toEqual({ indexCache: false, writeCache: false });
  });

  it('serve on the plain path with every one off', async () => {
    const dir = tempDir();
    const off = Object.fromEntries(ACCELERATOR_NAMES.map((name) => [acceleratorVariable(name), '0']));
    const env = { ENGRAM_DB: dir.file('memory.db'), ...off };

    expect(readEnvironment(env).storageAccelerators).toEqual(NO_ACCELERATORS);
    expect((await engram(env, 'write', 'topics/x', '-d', 'X', '--new', 'x')).code).toBe(0);
    expect(await engram(env, 'index')).toEqual({ code: 0, output: expect.stringContaining('topics/x') });
  });
});

describe('the accelerators’ switches (docs/accelerators.md)', () => {
  it('leave every accelerator on unless its variable is 0', () => {
    expect(readEnvironment({}).accelerators).toEqual({ httpFastPath: true, stdioFastPath: true });
    expect(
      readEnvironment({ ENGRAM_ACCEL_HTTP_FAST_PATH: '1', ENGRAM_ACCEL_STDIO_FAST_PATH: '' }).accelerators,
    ).toEqual({ httpFastPath: true, stdioFastPath: true });
    expect(readEnvironment({ ENGRAM_ACCEL_HTTP_FAST_PATH: '0' }).accelerators).toEqual({
      httpFastPath: false,
      stdioFastPath: true,
    });
    expect(readEnvironment({ ENGRAM_ACCEL_STDIO_FAST_PATH: '0' }).accelerators).toEqual({
      httpFastPath: true,
      stdioFastPath: false,
    });
  });
});
