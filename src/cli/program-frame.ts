/**
 * What every `engram` command line shares, whichever commands it holds: the root command
 * (version, help after an error, output through the Io), the flags every command takes,
 * and the run from argv to an exit code (0 done, 1 refused, 2 usage). program.ts puts
 * every command in it; stdio-program.ts only `engram stdio`, so that a client's start
 * evaluates that command's code alone (executable.ts chooses).
 */

import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { SQLITE_DRIVER_NAMES } from '../open-store.js';
import { databaseUrlToRepeat } from './backend.js';
import { type Context, openContext, VERSION } from './context.js';
import type { Run } from './entries.js';
import { type Environment, readEnvironment } from './environment.js';
import { createOutput, EXIT_OK, EXIT_USAGE, type Io, reportFailure } from './output.js';
import { bearsSecret } from './repeat-command.js';
import { forTerminal } from './terminal.js';

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
export function common(command: Command, output: { readonly json: boolean } = { json: true }): Command {
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

/** What a command line's commands are registered with. */
export interface Registration {
  readonly program: Command;
  readonly run: Run;
  readonly io: Io;
  readonly environment: Environment;
  /** Sets the exit code, for commands that run on after their action returns (serve, migrate, backup). */
  readonly finish: (exitCode: number) => void;
}

function rootCommand(io: Io): Command {
  return (
    new Command('engram')
      .version(VERSION)
      .description('Engram: one persistent memory shared by every LLM assistant you use.')
      .showHelpAfterError('(run with --help for usage)')
      .exitOverride()
      // Before any command is added, so that every one inherits it.
      .configureOutput({
        writeOut: (text) => io.stdout(forTerminal(text)),
        writeErr: (text) => io.stderr(forTerminal(text)),
      })
  );
}

/**
 * Runs a command line of the commands `register` adds and returns the exit code. Commands
 * that use `run`, migrate and serve write to `io` and leave process.exitCode alone, so
 * tests can run them in-process (serve until `io.stopRequested` says); stdio uses the process.
 * `env` is read once, here (environment.ts), and is the only environment any command sees.
 */
export async function runProgram(
  argv: readonly string[],
  io: Io,
  env: NodeJS.ProcessEnv,
  register: (registration: Registration) => void,
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
  const program = rootCommand(io);
  register({
    program,
    run,
    io,
    environment,
    finish: (code) => {
      exitCode = code;
    },
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
