/**
 * A torture fixture run as a child process, watched line by line: wait until its stdout
 * says something, kill it, and know it has ended only once every line it wrote is read.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface Ending {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

export interface Child {
  readonly process: ChildProcess;
  /** Every complete stdout line so far. */
  readonly lines: readonly string[];
  /** Resolves once `predicate` holds for the lines so far; rejects if the child ends before. */
  until(predicate: (lines: readonly string[]) => boolean): Promise<void>;
  /** Resolves when the child has ended and all of its output has been read. */
  readonly ended: Promise<Ending>;
  /** SIGKILLs the child and waits for its end. */
  kill(): Promise<Ending>;
}

/** The path of a fixture script in test/torture/fixtures. */
export function fixture(file: string): string {
  return fileURLToPath(new URL(`./fixtures/${file}`, import.meta.url));
}

/** Runs `script` with `args` under this Node, in `env` (this process's by default). */
export function startChild(script: string, args: readonly string[], env?: NodeJS.ProcessEnv): Child {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env });
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  let ending: Ending | undefined;
  const waiters = new Set<{ predicate: (lines: readonly string[]) => boolean; settle: (error?: Error) => void }>();

  const check = () => {
    for (const waiter of waiters) {
      if (waiter.predicate(lines)) waiter.settle();
      else if (ending) waiter.settle(new Error(`child ended (${describeEnding(ending)}) before the awaited output`));
    }
  };
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
    check();
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const ended = new Promise<Ending>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      ending = { code, signal, stderr };
      check();
      resolve(ending);
    });
  });

  return {
    process: child,
    lines,
    ended,
    until(predicate) {
      return new Promise<void>((resolve, reject) => {
        const waiter = {
          predicate,
          settle: (error?: Error) => {
            waiters.delete(waiter);
            if (error) reject(error);
            else resolve();
          },
        };
        waiters.add(waiter);
        check();
      });
    },
    kill() {
      child.kill('SIGKILL');
      return ended;
    },
  };
}

export function describeEnding(ending: Ending): string {
  const how = ending.signal ? `signal ${ending.signal}` : `exit code ${ending.code}`;
  return ending.stderr ? `${how}; stderr:\n${ending.stderr}` : how;
}
