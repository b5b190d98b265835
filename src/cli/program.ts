/**
 * The `engram` command line: its commands, the flags every command shares, and the
 * exit codes (0 done, 1 refused, 2 usage).
 */

import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { SQLITE_DRIVER_NAMES } from '../open-store.js';
import { registerActivityCommand } from './activity.js';
import { databaseUrlToRepeat } from './backend.js';
import { registerBackupCommands } from './backup.js';
import { registerChatCommand } from './chat.js';
import { type CommonOptions, type Context, openContext, VERSION } from './context.js';
import { type Run, registerEntryCommands } from './entries.js';
import { type Environment, readEnvironment } from './environment.js';
import { registerMigrateCommand } from './migrate.js';
import { createOutput, EXIT_OK, EXIT_USAGE, type Io, processIo, reportFailure } from './output.js';
import { processPasswordSource } from './password-input.js';
import { registerRecoveryCommands } from './recovery.js';
import { bearsSecret } from './repeat-command.js';
import { registerRevertCommand } from './revert.js';
import { registerReviewCommands } from './review.js';
import { registerSearchCommand } from './search.js';
import { registerServeCommand } from './serve.js';
import { registerStdioCommand } from './stdio.js';
import { forTerminal } from './terminal.js';
import { registerTidyCommands } from './tidy.js';
import { registerTokenCommands } from './token.js';
import { registerTransferCommands } from './transfer.js';
import { registerUserCommands } from './user.js';

function positive(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('expected a whole number from 1 up.');
  return number;
}

/**
 * The flags every command shares; each variable beside a flag is read by environment.ts,
 * once. A command that prints nothing for scripts (`json: false`: stdio, chat) still takes
 * --json, to refuse it in its own words, but its --help does not offer it.
 */
function common(command: Command, output: { readonly json: boolean } = { json: true }): Command {
  return command
    .addOption(new Option('--db <path>', 'SQLite database file (else $ENGRAM_DB)'))
    .addOption(
      bearsSecret(
        new Option('--database-url <url>', 'use PostgreSQL instead of SQLite (else $ENGRAM_DATABASE_URL)'),
        databaseUrlToRepeat,
      ),
    )
    .addOption(new Option('--pool-size <n>', 'PostgreSQL connections per process (default 10)').argParser(positive))
    .addOption(
      new Option('--statement-timeout <ms>', 'PostgreSQL statement timeout in ms (default 30000)').argParser(positive),
    )
    .addOption(
      new Option(
        '--sqlite-driver <driver>',
        'SQLite driver: better-sqlite3 or node (node:sqlite, Node 22.16+); else $ENGRAM_SQLITE_DRIVER, else better-sqlite3 when it loads',
      ).choices(SQLITE_DRIVER_NAMES),
    )
    .addOption(
      new Option('--config <file>', 'JSON config file (else $ENGRAM_CONFIG, else ~/.config/engram/config.json)'),
    )
    .addOption(new Option('--user <name>', 'whose memory (else $ENGRAM_USER, else "local")'))
    .addOption(new Option('--json', 'print JSON for scripts').hideHelp(!output.json));
}

function buildProgram(run: Run, io: Io, environment: Environment, finish: (exitCode: number) => void): Command {
  const program = new Command('engram')
    .version(VERSION)
    .description('Engram: one persistent memory shared by every LLM assistant you use.')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    // Before any command is added, so that every one inherits it.
    .configureOutput({
      writeOut: (text) => io.stdout(forTerminal(text)),
      writeErr: (text) => io.stderr(forTerminal(text)),
    });
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
  return program;
}

/**
 * Runs the CLI and returns the exit code. Commands that use `run`, migrate and serve write
 * to `io` and leave process.exitCode alone, so tests can run them in-process (serve until
 * `io.stopRequested` says); stdio uses the process.
 * `env` is read once, here (environment.ts), and is the only environment any command sees.
 */
export async function main(
  argv: readonly string[],
  io: Io = processIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const environment = readEnvironment(env);
  let exitCode: number | undefined;
  const run: Run = async (options, body, opening = 'creates') => {
    const output = createOutput(options.json === true, io);
    let context: Context | undefined;
    try {
      context = await openContext(options, environment, opening, io.passwordCost);
      await body(context, output);
      exitCode = EXIT_OK;
    } catch (error) {
      exitCode = reportFailure(error, output.json, io);
    } finally {
      await context?.close();
    }
  };
  const program = buildProgram(run, io, environment, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      const done = error.code === 'commander.helpDisplayed' || error.code === 'commander.version';
      return done ? EXIT_OK : EXIT_USAGE;
    }
    return reportFailure(error, false, io);
  }
  return exitCode ?? (typeof process.exitCode === 'number' ? process.exitCode : EXIT_OK);
}

export type { CommonOptions };
