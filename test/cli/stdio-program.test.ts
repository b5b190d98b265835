/**
 * `engram stdio` runs in a command line of its command alone (stdio-program.ts), for a
 * quicker start: any line starting with `stdio` is helped and refused by it as by the
 * whole CLI (program.ts), word for word and with the same exit code.
 */

import { describe, expect, it } from 'vitest';
import type { Io } from '../../src/cli/output.js';
import { main as everyCommand } from '../../src/cli/program.js';
import { main as stdioAlone } from '../../src/cli/stdio-program.js';

type Main = typeof everyCommand;

/** The exit code and everything written, without reaching the store or stdin (each line is refused or helped). */
async function run(main: Main, argv: readonly string[]) {
  const written: string[] = [];
  const io: Io = { stdout: (text) => written.push(`out: ${text}`), stderr: (text) => written.push(`err: ${text}`) };
  const code = await main(argv, io, {});
  return { code, written: written.join('') };
}

describe('engram stdio, alone in its command line', () => {
  it.each([
    [['stdio', '--help']],
    [['stdio', '-h']],
    [['stdio', '--bogus']],
    [['stdio', '--dv']],
    [['stdio', 'extra']],
    [['stdio', '--version']],
    [['stdio', '--pool-size', '0']],
    [['stdio', '--sqlite-driver', 'sqlite3']],
    [['stdio', '--db']],
    [['stdio', 'help']],
  ])('%j: as the whole CLI answers it', async (argv) => {
    const whole = await run(everyCommand, argv);
    expect(whole.written).not.toBe('');
    expect(await run(stdioAlone, argv)).toEqual(whole);
  });
});
