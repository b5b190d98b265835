/**
 * A database file the CLI cannot use, as a newcomer meets it: a folder given as --db, a
 * path under a file, a read-only file, a read-only folder. Each ends the command with
 * exit 1 and a message that names the file and says what to do (storage/sqlite/errors.ts),
 * never "internal error". The read-only cases run the built CLI as an unprivileged user
 * when the tests run as root, who may write anything.
 */

import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/program.js';
import { type EngramRun, tempDir } from '../helpers/engram.js';
import { engramUnprivileged, unprivilegedRunnable } from '../helpers/unprivileged.js';

const unprivileged = unprivilegedRunnable('database-errors: the read-only cases');

/** main() in this process, with `--config` pointing at an empty config file. */
async function engram(configFile: string, ...args: string[]): Promise<EngramRun> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const io = { stdout: (text: string) => stdout.push(text), stderr: (text: string) => stderr.push(text) };
  const code = await main([...args, '--config', configFile], io);
  return { code, stdout: stdout.join(''), stderr: stderr.join('') };
}

const cannotOpen = (path: string, reason: string) =>
  `The memory's database ${path} cannot be opened (${reason}). Check that the file and its folder exist ` +
  'and that the user running Engram may read and write both, then try again.\n';

const readOnly = (path: string) =>
  `The memory's database ${path} cannot be written: the file, its folder or its file system is read-only ` +
  '(attempt to write a readonly database (SQLITE_READONLY)). Nothing was changed. Give the user running Engram ' +
  'write access to the file and its folder, then try again.\n';

describe('a database the CLI cannot use: exit 1, the file named, what to do', () => {
  it('a folder given as --db: "unable to open database file", for reading and writing commands', async () => {
    const dir = tempDir();
    const folder = dir.file('folder');
    mkdirSync(folder);
    const config = dir.config({});
    const expected = {
      code: 1,
      stdout: '',
      stderr: cannotOpen(folder, 'unable to open database file (SQLITE_CANTOPEN)'),
    };
    expect(await engram(config, 'index', '--db', folder)).toEqual(expected);
    expect(await engram(config, 'write', 'topics/a', '-d', 'A', '--new', 'a', '--db', folder)).toEqual(expected);
  });

  it('a path under a file: its folder cannot be made', async () => {
    const dir = tempDir();
    const file = dir.file('notes.txt');
    writeFileSync(file, 'notes\n');
    const db = `${file}/memory.db`;
    const run = await engram(dir.config({}), 'write', 'topics/a', '-d', 'A', '--new', 'a', '--db', db);
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: cannotOpen(db, `ENOTDIR: not a directory, open '${db}' (ENOTDIR)`),
    });
    expect(readFileSync(file, 'utf8')).toBe('notes\n');
  });

  it.skipIf(!unprivileged)(
    'a read-only database file: a write is refused and says to give write access; reading still works',
    async () => {
      const dir = tempDir();
      chmodSync(dir.path, 0o777);
      const db = dir.file('memory.db');
      expect((await engram(dir.config({}), 'write', 'topics/a', '-d', 'A', '--new', 'a', '--db', db)).code).toBe(0);
      chmodSync(db, 0o444);

      const write = await engramUnprivileged(dir.path, 'write', 'topics/a', '--new', 'b', '--db', db);
      expect(write).toEqual({ code: 1, stdout: '', stderr: readOnly(db) });
      const index = await engramUnprivileged(dir.path, 'index', '--db', db);
      expect({ code: index.code, stdout: index.stdout }).toEqual({ code: 0, stdout: 'topics/a (2 bytes): A\n' });
    },
  );

  it.skipIf(!unprivileged)('a read-only folder: a new database cannot be made in it', async () => {
    const dir = tempDir();
    const folder = dir.file('locked');
    mkdirSync(folder, { mode: 0o555 });
    chmodSync(dir.path, 0o755);
    const db = `${folder}/memory.db`;
    const run = await engramUnprivileged(dir.path, 'write', 'topics/a', '-d', 'A', '--new', 'a', '--db', db);
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: cannotOpen(db, `EACCES: permission denied, open '${db}' (EACCES)`),
    });
  });
});
