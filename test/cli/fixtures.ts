/**
 * The harness the end-to-end CLI tests share: the built `engram` on a temporary database
 * (ENGRAM_DB) with an empty config folder, the same CLI run in-process where no process is
 * needed, and the expectations every command test makes — quiet success, a refusal
 * (exit 1) or a usage error (exit 2) that changed nothing.
 */

import { existsSync } from 'node:fs';
import { expect } from 'vitest';
import { main } from '../../src/cli/program.js';
import { childEnv, type EngramRun, queryDatabase, runEngram, type TempDir, tempDir } from '../helpers/engram.js';

export interface Cli {
  readonly dir: TempDir;
  readonly db: string;
  run(...args: string[]): Promise<EngramRun>;
  /** Runs with `input` on stdin. */
  pipe(input: string, ...args: string[]): Promise<EngramRun>;
}

/** A fresh temporary folder holding the database, the config home and any files a test writes. */
export function cli(): Cli {
  const dir = tempDir();
  const db = dir.file('memory.db');
  const env = childEnv(dir.path, { ENGRAM_DB: db });
  return {
    dir,
    db,
    run: (...args) => runEngram(args, env),
    pipe: (input, ...args) => runEngram(args, env, input),
  };
}

/**
 * The CLI's main() in this process, on a temporary database and the given config file
 * (passed as --db and --config after the arguments): as fast as a function call, for
 * tests that run many commands. No stdin; serve, stdio and migrate need cli().
 */
export function inProcessCli(config: unknown = {}): Omit<Cli, 'pipe'> {
  const dir = tempDir();
  const db = dir.file('memory.db');
  const configFile = dir.config(config);
  return {
    dir,
    db,
    async run(...args) {
      const stdout: string[] = [];
      const stderr: string[] = [];
      const io = { stdout: (text: string) => stdout.push(text), stderr: (text: string) => stderr.push(text) };
      const code = await main([...args, '--db', db, '--config', configFile], io);
      return { code, stdout: stdout.join(''), stderr: stderr.join('') };
    },
  };
}

/** Every row of the database that a command could change (undefined before it exists). */
export function databaseState(db: string) {
  if (!existsSync(db)) return undefined;
  return {
    entries: queryDatabase(db, 'SELECT * FROM entries ORDER BY id'),
    revisions: queryDatabase(db, 'SELECT * FROM revisions ORDER BY entry_id, revision'),
  };
}

/** Expects the command to succeed with nothing on stderr, and returns its stdout. */
export async function ok(result: Promise<EngramRun>): Promise<string> {
  const { code, stdout, stderr } = await result;
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  return stdout;
}

/** Runs a command that must be refused with `message` on stderr, leaving the database as it was. */
export async function expectRefused(engram: Cli, args: string[], message: string): Promise<void> {
  const before = databaseState(engram.db);
  expect(await engram.run(...args)).toEqual({ code: 1, stdout: '', stderr: `${message}\n` });
  expect(databaseState(engram.db)).toEqual(before);
}

/** Runs a command, fed `input`, that must fail as a usage error whose stderr matches `message`, changing nothing. */
export async function expectUsageError(engram: Cli, args: string[], message: RegExp, input = ''): Promise<void> {
  const before = databaseState(engram.db);
  const { code, stdout, stderr } = await engram.pipe(input, ...args);
  expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
  expect(stderr).toMatch(message);
  expect(databaseState(engram.db)).toEqual(before);
}
