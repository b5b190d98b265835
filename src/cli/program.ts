/**
 * The `engram` command line: every command, in the frame they share (program-frame.ts:
 * the flags every command takes, the exit codes 0 done, 1 refused, 2 usage).
 */

import { registerActivityCommand } from './activity.js';
import { registerBackupCommands } from './backup.js';
import { registerChatCommand } from './chat.js';
import type { CommonOptions } from './context.js';
import { registerEntryCommands } from './entries.js';
import { registerMigrateCommand } from './migrate.js';
import { type Io, processIo } from './output.js';
import { processPasswordSource } from './password-input.js';
import { common, type Registration, runProgram } from './program-frame.js';
import { registerRecoveryCommands } from './recovery.js';
import { registerRevertCommand } from './revert.js';
import { registerReviewCommands } from './review.js';
import { registerSearchCommand } from './search.js';
import { registerServeCommand } from './serve.js';
import { registerStdioCommand } from './stdio.js';
import { registerTidyCommands } from './tidy.js';
import { registerTokenCommands } from './token.js';
import { registerTransferCommands } from './transfer.js';
import { registerUserCommands } from './user.js';

function registerEveryCommand({ program, run, io, environment, finish }: Registration): void {
  registerStdioCommand(program, common, environment);
  registerServeCommand(program, common, environment, io, finish);
  registerTokenCommands(program, common, run);
  registerUserCommands(program, common, run, io.passwords ?? processPasswordSource);
  registerEntryCommands(program, common, run);
  registerSearchCommand(program, common, run);
  registerRecoveryCommands(program, common, run);
  registerReviewCommands(program, common, run);
  registerActivityCommand(program, common, run);
  registerRevertCommand(program, common, run);
  registerTidyCommands(program, common, run);
  registerTransferCommands(program, common, run);
  registerMigrateCommand(program, environment, io, finish);
  registerBackupCommands(program, common, environment, io, finish);
  registerChatCommand(program, common, run, environment);
  program.addHelpText(
    'after',
    `
Quick start:
  engram stdio                      serve MCP to Claude Desktop / Claude Code
  engram serve                      serve MCP over HTTP at http://127.0.0.1:8787/mcp (llama.cpp WebUI)
  engram write topics/me -d "Who I am" --new "Name: Ada."
  engram index                      what your assistants remember
  engram chat --base-url http://127.0.0.1:8080/v1   chat with a local model that remembers

Data lives in $ENGRAM_DB, else \${XDG_DATA_HOME:-~/.local/share}/engram/memory.db.`,
  );
}

/**
 * Runs the CLI and returns the exit code (program-frame.ts's runProgram, every command).
 * Tests run commands in-process through it.
 */
export function main(
  argv: readonly string[],
  io: Io = processIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  return runProgram(argv, io, env, registerEveryCommand);
}

export type { CommonOptions };
