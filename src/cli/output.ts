/**
 * How commands answer: text for people, JSON for scripts (--json, its times in ISO 8601
 * UTC: json-times.ts), refusals on stderr
 * with exit code 1, usage errors with exit code 2. Everything goes through terminal.ts,
 * so no command prints a stored escape sequence raw.
 */

import type { PasswordCost } from '../access/accounts/passwords.js';
import { isEngramError } from '../memory/model/errors.js';
import { isoTimes } from './json-times.js';
import type { PasswordSource } from './password-input.js';
import { forTerminal, highlighted, jsonForTerminal } from './terminal.js';
import { cliMessage } from './wording.js';

export const EXIT_OK = 0;
export const EXIT_REFUSED = 1;
export const EXIT_USAGE = 2;

export class UsageError extends Error {}

/** Where a command writes: the process's streams, or a test's. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Whether stdout is a terminal: marked text (search matches) is highlighted only there. */
  readonly terminal?: boolean;
  /** Whether stderr is a terminal: long work (a backup) shows its progress there only. */
  readonly stderrTerminal?: boolean;
  /** Where user add and set-password read a password: the process's stdin unless a test brings its own. */
  readonly passwords?: PasswordSource;
  /**
   * The scrypt cost user add and set-password hash a password with: production's unless
   * a test running main() in its own process brings a cheaper one (no front door sets it).
   */
  readonly passwordCost?: PasswordCost;
  /**
   * Resolves when a long-running command (serve) must stop, with what asked it to (a
   * signal's name): the process's SIGINT or SIGTERM, unless a test running main() in its
   * own process brings its own.
   */
  readonly stopRequested?: () => Promise<string>;
}

/** The process's SIGINT or SIGTERM, whichever comes first. */
export function processStopRequested(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

export const processIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  get terminal() {
    return process.stdout.isTTY === true;
  },
  get stderrTerminal() {
    return process.stderr.isTTY === true;
  },
};

/** A piece of a line for people; a marked piece is highlighted on a terminal, plain elsewhere. */
export interface Piece {
  readonly text: string;
  readonly marked?: boolean;
}

/** The Io with every text for people made safe for a terminal. */
function safe(io: Io): Io {
  return { stdout: (text) => io.stdout(forTerminal(text)), stderr: (text) => io.stderr(forTerminal(text)) };
}

export interface Output {
  readonly json: boolean;
  /** Prints the text for people, or the data as JSON with --json. */
  result(text: string, data: unknown): void;
  /** Like result, for lines of pieces: the marked ones highlighted when stdout is a terminal. */
  marked(lines: readonly (readonly Piece[])[], data: unknown): void;
  /** Prints data for programs (an export) byte for byte. */
  exact(text: string): void;
  /** A line for people on stderr, beside data on stdout. */
  note(line: string): void;
}

export function createOutput(json: boolean, io: Io = processIo): Output {
  const people = safe(io);
  return {
    json,
    result(text, data) {
      if (json) io.stdout(`${jsonForTerminal(data, 2, isoTimes)}\n`);
      else people.stdout(text.endsWith('\n') ? text : `${text}\n`);
    },
    marked(lines, data) {
      if (json) return io.stdout(`${jsonForTerminal(data, 2, isoTimes)}\n`);
      const show = (piece: Piece) => (piece.marked && io.terminal ? highlighted(piece.text) : forTerminal(piece.text));
      io.stdout(lines.map((line) => `${line.map(show).join('')}\n`).join(''));
    },
    exact: (text) => io.stdout(text),
    note: (line) => people.stderr(`${line}\n`),
  };
}

/** Reports a failed command and returns its exit code. */
export function reportFailure(error: unknown, json: boolean, io: Io = processIo): number {
  const people = safe(io);
  if (error instanceof UsageError) {
    people.stderr(`engram: ${error.message}\n`);
    return EXIT_USAGE;
  }
  if (isEngramError(error)) {
    const message = cliMessage(error);
    if (json) io.stdout(`${jsonForTerminal({ error: { code: error.code, message } })}\n`);
    people.stderr(`${message}\n`);
    return EXIT_REFUSED;
  }
  people.stderr(`engram: ${error instanceof Error ? error.message : String(error)}\n`);
  return EXIT_REFUSED;
}

/** A log line as written: prefixed, and safe for a terminal. */
function logText(line: string): string {
  return forTerminal(`engram: ${line}\n`);
}

/** What a serving command reports, one line on stderr: stdout carries the protocol (stdio) or the connection help (serve). */
export function log(line: string): void {
  process.stderr.write(logText(line));
}

/** A log that writes its lines in batches (createBatchedLog). */
export interface BatchedLog {
  (line: string): void;
  /** Writes what is pending, and stops watching for the process's exit. */
  close(): void;
}

/**
 * `log` for a busy server, which logs a line per request: the lines of one turn of the
 * event loop go out together in one write (to stderr unless `write` is given) as it ends,
 * since each write to stderr (a file or a pipe) is a system call that holds the event
 * loop. Lines still pending when the process exits, or the log is closed, are written first.
 */
export function createBatchedLog(write: (text: string) => void = processIo.stderr): BatchedLog {
  const batched = createBatchedWrite(write);
  return Object.assign((line: string) => batched(logText(line)), { close: () => batched.close() });
}

/** Texts written as createBatchedLog writes its lines, as they are (the JSON log's lines, already whole). */
export function createBatchedWrite(write: (text: string) => void): BatchedLog {
  let pending = '';
  const flush = () => {
    if (pending === '') return;
    const text = pending;
    pending = '';
    write(text);
  };
  process.on('exit', flush);
  const add = (text: string) => {
    if (pending === '') setImmediate(flush);
    pending += text;
  };
  return Object.assign(add, {
    close() {
      process.off('exit', flush);
      flush();
    },
  });
}

/** A tool call that failed unexpectedly: its stack, for whoever runs the server (never arguments or bodies). */
export function logInternalError(error: unknown): void {
  log(`internal error: ${error instanceof Error ? error.stack : String(error)}`);
}
