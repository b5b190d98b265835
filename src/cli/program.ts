/**
 * The `engram` command line: its commands, the flags every command shares, and the
 * exit codes (0 done, 1 refused, 2 usage).
 */

import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { type CommonOptions, type Context, openContext, VERSION } from './context.js';
import { type Run, registerEntryCommands } from './entries.js';
import { registerMigrateCommand } from './migrate.js';
import { createOutput, EXIT_OK, EXIT_USAGE, reportFailure } from './output.js';
import { registerRecoveryCommands } from './recovery.js';
import { registerServeCommand } from './serve.js';
import { registerStdioCommand } from './stdio.js';
import { registerTokenCommands } from './token.js';
import { registerTransferCommands } from './transfer.js';

function positive(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('expected a whole number from 1 up.');
  return number;
}

function common(command: Command): Command {
  return command
    .addOption(new Option('--db <path>', 'SQLite database file').env('ENGRAM_DB'))
    .addOption(
      new Option('--database-url <url>', 'use PostgreSQL instead of SQLite (postgres://…)').env('ENGRAM_DATABASE_URL'),
    )
    .addOption(new Option('--pool-size <n>', 'PostgreSQL connections per process (default 10)').argParser(positive))
    .addOption(
      new Option('--statement-timeout <ms>', 'PostgreSQL statement timeout in ms (default 30000)').argParser(positive),
    )
    .addOption(
      new Option('--config <file>', 'JSON config file (default ~/.config/engram/config.json)').env('ENGRAM_CONFIG'),
    )
    .addOption(new Option('--user <name>', 'whose memory (default "local")').env('ENGRAM_USER'))
    .option('--json', 'print JSON for scripts');
}

const run: Run = async (options, body) => {
  const output = createOutput(options.json === true);
  let context: Context | undefined;
  try {
    context = await openContext(options);
    await body(context, output);
    process.exitCode = EXIT_OK;
  } catch (error) {
    process.exitCode = reportFailure(error, output.json);
  } finally {
    await context?.close();
  }
};

function buildProgram(): Command {
  const program = new Command('engram')
    .version(VERSION)
    .description('Engram: one persistent memory shared by every LLM assistant you use.')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerStdioCommand(program, common);
  registerServeCommand(program, common);
  registerTokenCommands(program, common, run);
  registerEntryCommands(program, common, run);
  registerRecoveryCommands(program, common, run);
  registerTransferCommands(program, common, run);
  registerMigrateCommand(program);
  program.addHelpText(
    'after',
    `
Quick start:
  engram stdio                      serve MCP to Claude Desktop / Claude Code
  engram serve                      serve MCP over HTTP at http://127.0.0.1:8787/mcp (llama.cpp WebUI)
  engram write topics/me -d "Who I am" --new "Name: Ada."
  engram index                      what your assistants remember

Data lives in $ENGRAM_DB, else \${XDG_DATA_HOME:-~/.local/share}/engram/memory.db.`,
  );
  return program;
}

/** Runs the CLI and returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      const done = error.code === 'commander.helpDisplayed' || error.code === 'commander.version';
      return done ? EXIT_OK : EXIT_USAGE;
    }
    return reportFailure(error, false);
  }
  return typeof process.exitCode === 'number' ? process.exitCode : EXIT_OK;
}

export type { CommonOptions };
