/**
 * The harness the end-to-end CLI tests share: `engram` on a temporary database
 * (ENGRAM_DB) with an empty config folder — run in-process through main(argv, io), as
 * fast as a function call, except where a real process is the point (stdin, the
 * executable's own exit codes) — and the expectations every command test makes: quiet
 * success, a refusal (exit 1) or a usage error (exit 2) that changed nothing.
 */

import { existsSync } from 'node:fs';
import { expect } from 'vitest';
import type { PasswordCost } from '../../src/access/accounts/passwords.js';
import { main } from '../../src/cli/program.js';
import { childEnv, type EngramRun, queryDatabase, runEngram, type TempDir, tempDir } from '../helpers/engram.js';

export interface Cli {
  readonly dir: TempDir;
  readonly db: string;
  /** Runs the command in this process, through main(argv, io), in the environment a child would get. */
  run(...args: string[]): Promise<EngramRun>;
  /** Runs the built executable as a child process, with `input` on stdin. */
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
    run: (...args) => runInProcess(args, env),
    pipe: (input, ...args) => runEngram(args, env, input),
  };
}

export interface InProcessOptions {
  /**
   * The scrypt cost user add and set-password hash with (Io.passwordCost), for a test
   * whose subject is not the hashing: TEST_PASSWORD_COST is 32 times cheaper than
   * production's, which a sign-in then checks at that cost too (it is in the hash).
   */
  readonly passwordCost?: PasswordCost;
}

/** In-process runs wait for each other: each one has process.env to itself while it runs. */
let previousRun: Promise<unknown> = Promise.resolve();

/**
 * main(args) in this process with process.env set to `env` for the run (the CLI reads
 * ENGRAM_* and XDG_CONFIG_HOME there), restored afterwards. `input` is what a password is
 * read from, as from a piped stdin (runEngram's `input`): empty unless given.
 */
export function runInProcess(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  input = '',
  options: InProcessOptions = {},
): Promise<EngramRun> {
  const run = previousRun.then(async () => {
    const saved = { ...process.env };
    const setAll = (values: NodeJS.ProcessEnv) => {
      for (const key of Object.keys(process.env)) if (!(key in values)) delete process.env[key];
      Object.assign(process.env, values);
    };
    const stdout: string[] = [];
    const stderr: string[] = [];
    const io = {
      stdout: (text: string) => stdout.push(text),
      stderr: (text: string) => stderr.push(text),
      passwords: {
        interactive: false,
        readAll: () => input,
        ask: () => Promise.reject(new Error('no terminal in an in-process run')),
      },
      ...(options.passwordCost === undefined ? {} : { passwordCost: options.passwordCost }),
    };
    setAll(env);
    try {
      const code = await main(args, io);
      return { code, stdout: stdout.join(''), stderr: stderr.join('') };
    } finally {
      setAll(saved);
    }
  });
  previousRun = run.catch(() => {});
  return run;
}

/**
 * The CLI's main() in this process, on a temporary database and the given config file
 * (passed as --db and --config after the arguments): as fast as a function call, for
 * tests that run many commands. No stdin but a password's; serve and stdio need a real process (runEngram).
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

export interface ServeRun {
  /** What it has printed so far. */
  readonly out: { stdout: string; stderr: string };
  /** The URL of its --json line once it listens; rejected if it ends before. */
  readonly listening: Promise<string>;
  /** main()'s exit code, once it has stopped. */
  readonly exited: Promise<number>;
  /** Asks it to stop, as a signal would; `reason` stands for the signal's name in its log. */
  stop(reason: string): void;
}

/**
 * `engram serve` through `run` (src's main, or the built CLI's) in this process: its
 * output kept, and stopped by stop() instead of a signal, or failing with `failingStop`
 * once it waits for one.
 */
export function serveInProcess(
  run: typeof main,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  failingStop?: Error,
): ServeRun {
  let stop: (reason: string) => void = () => {};
  const stopRequested = new Promise<string>((resolve) => {
    stop = resolve;
  });
  const out = { stdout: '', stderr: '' };
  let listened: (url: string) => void = () => {};
  let ended: (error: Error) => void = () => {};
  const listening = new Promise<string>((resolve, reject) => {
    listened = resolve;
    ended = reject;
  });
  listening.catch(() => {});
  const exited = run(
    ['serve', ...args],
    {
      stdout: (text) => {
        out.stdout += text;
        const url = /"url":"([^"]+)"/.exec(out.stdout)?.[1];
        if (url) listened(url);
      },
      stderr: (text) => {
        out.stderr += text;
      },
      stopRequested: () => (failingStop ? Promise.reject(failingStop) : stopRequested),
    },
    env,
  );
  exited.then(
    (code) => ended(new Error(`engram serve ended (exit ${code}) before serving:\n${out.stderr}`)),
    (error: Error) => ended(error),
  );
  return { out, listening, exited, stop };
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

/**
 * Runs a command, fed `input`, that must fail as a usage error whose stderr matches
 * `message`, changing nothing. A command that reads stdin (`-`) runs as a real process.
 */
export async function expectUsageError(engram: Cli, args: string[], message: RegExp, input = ''): Promise<void> {
  const before = databaseState(engram.db);
  const readsStdin = input !== '' || args.includes('-');
  const { code, stdout, stderr } = await (readsStdin ? engram.pipe(input, ...args) : engram.run(...args));
  expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
  expect(stderr).toMatch(message);
  expect(databaseState(engram.db)).toEqual(before);
}
