/**
 * Where `engram user add` and `engram user set-password` get a password: at a terminal it
 * is asked for twice without echo (on stderr, so stdout stays the command's answer); from
 * a pipe or a file, stdin is read whole and one trailing newline (`\n` or `\r\n`), which
 * `echo` and editors add, is not part of it. A password is never an argument: arguments
 * show in `ps` and in shell history.
 */

import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { EngramError } from '../memory/model/errors.js';
import { readBoundedText } from './bounded-read.js';
import { UsageError } from './output.js';

/** The terminal or the pipe a password comes from; tests bring their own. */
export interface PasswordSource {
  /** True when stdin is a terminal (someone is typing). */
  readonly interactive: boolean;
  /** All of stdin, when it is not a terminal. */
  readAll(): string;
  /** Asks `prompt` at the terminal and reads one line without echoing it. */
  ask(prompt: string): Promise<string>;
}

export interface PasswordRequest {
  /** Whose password, for the prompt. */
  readonly user: string;
  /** --password-stdin: stdin must be a pipe or a file, not a terminal. */
  readonly fromStdin: boolean;
  /** Empty stdin means "no password" (user add) rather than an empty password. */
  readonly optional: boolean;
}

/** Stdin without the one trailing newline a pipe or a file usually ends with. */
export function withoutFinalNewline(text: string): string {
  if (text.endsWith('\r\n')) return text.slice(0, -2);
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

/**
 * The new password, or undefined when it is optional and stdin (not a terminal) is empty.
 * Refused when the two typed at a terminal differ, and (a usage error) when
 * --password-stdin is given at a terminal.
 */
export async function readNewPassword(
  request: PasswordRequest,
  source: PasswordSource = processPasswordSource,
): Promise<string | undefined> {
  if (!source.interactive) {
    const text = source.readAll();
    return text === '' && request.optional && !request.fromStdin ? undefined : withoutFinalNewline(text);
  }
  if (request.fromStdin) {
    throw new UsageError(
      '--password-stdin reads the password from a pipe or a file, but stdin is a terminal: ' +
        'leave --password-stdin out to be asked for it without echo.',
    );
  }
  const first = await source.ask(`New password for ${request.user}: `);
  const second = await source.ask('The same password again: ');
  if (first !== second) throw new EngramError('INVALID_ARGUMENT', 'the two passwords differ; nothing was changed.');
  return first;
}

export const processPasswordSource: PasswordSource = {
  get interactive() {
    return process.stdin.isTTY === true;
  },
  // A password is at most 1,024 characters: a pipe of more is not one, and is not read on.
  readAll: () =>
    readBoundedText('-', {
      bytes: 64 * 1024,
      what: 'a password read from stdin may be',
      instead: 'a password is 10 to 1,024 characters: pipe the password alone',
    }),
  ask: askWithoutEcho,
};

/** One line from the terminal, its typing not echoed; Ctrl-C or Ctrl-D gives up, changing nothing. */
function askWithoutEcho(prompt: string): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const lines = createInterface({ input: process.stdin, output, terminal: true });
  return new Promise<string>((resolve, reject) => {
    let answered = false;
    lines.question(prompt, (answer) => {
      answered = true;
      resolve(answer);
    });
    // The prompt is written; what is typed from now on is not.
    muted = true;
    lines.on('SIGINT', () => lines.close());
    lines.on('close', () => {
      if (!answered) reject(new UsageError('no password given; nothing was changed.'));
    });
  }).finally(() => {
    lines.close();
    process.stderr.write('\n');
  });
}
