/**
 * How commands answer: text for people, JSON for scripts (--json), refusals on stderr
 * with exit code 1, usage errors with exit code 2.
 */

import { isEngramError } from '../core/errors.js';

export const EXIT_OK = 0;
export const EXIT_REFUSED = 1;
export const EXIT_USAGE = 2;

export class UsageError extends Error {}

export interface Output {
  readonly json: boolean;
  /** Prints the text, or the data as JSON with --json. */
  result(text: string, data: unknown): void;
}

export function createOutput(json: boolean): Output {
  return {
    json,
    result(text, data) {
      process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : text.endsWith('\n') ? text : `${text}\n`);
    },
  };
}

/** Reports a failed command and returns its exit code. */
export function reportFailure(error: unknown, json: boolean): number {
  if (error instanceof UsageError) {
    process.stderr.write(`engram: ${error.message}\n`);
    return EXIT_USAGE;
  }
  if (isEngramError(error)) {
    if (json) process.stdout.write(`${JSON.stringify({ error: { code: error.code, message: error.message } })}\n`);
    process.stderr.write(`${error.message}\n`);
    return EXIT_REFUSED;
  }
  process.stderr.write(`engram: ${error instanceof Error ? error.message : String(error)}\n`);
  return EXIT_REFUSED;
}

/** What a serving command reports, one line on stderr: stdout carries the protocol (stdio) or the connection help (serve). */
export function log(line: string): void {
  process.stderr.write(`engram: ${line}\n`);
}

/** A tool call that failed unexpectedly: its stack, for whoever runs the server (never arguments or bodies). */
export function logInternalError(error: unknown): void {
  log(`internal error: ${error instanceof Error ? error.stack : String(error)}`);
}
