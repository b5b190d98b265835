/**
 * The `engram` command line for `engram stdio` alone: the same frame (program-frame.ts)
 * with only that command in it, so that a client starting Engram waits for the code of
 * that command and not of every other (executable.ts takes it when the first argument is
 * `stdio`). Evaluating the whole CLI — every command, what each loads, and commander
 * setting each up — was a sizeable part of the start to the first `tools/list` (DESIGN §7).
 * A line whose first argument is `stdio` is parsed by the stdio command alone in either
 * program, so it is read, helped and refused alike (test/cli/stdio-program.test.ts).
 */

import { type Io, processIo } from './output.js';
import { common, runProgram } from './program-frame.js';
import { registerStdioCommand } from './stdio.js';

export function main(
  argv: readonly string[],
  io: Io = processIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  return runProgram(argv, io, env, ({ program, environment }) => registerStdioCommand(program, common, environment));
}
