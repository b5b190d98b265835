/**
 * `engram migrate --from A --to B [--force]`: copies a whole database — every user's
 * entries, trash, revisions, usage and tokens, accounts and connected apps — from a SQLite file to PostgreSQL, back,
 * or between two of a kind, through the core's copyStore. A big copy reports progress on
 * stderr; the summary goes to stdout (JSON with --json). It writes through the `Io` it is
 * given and hands back its exit code, so tests can run it in-process like the other commands.
 */

import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { countOf, formatCount } from '../memory/model/text.js';
import type { Store } from '../memory/port.js';
import { type Backend, backendOf, openBackend, SQLITE_DRIVER_NAMES, type SqliteDriverName } from '../open-store.js';
import { type CopyProgress, type CopySummary, copyStore } from '../transfer/migration.js';
import { describeBackend } from './backend.js';
import { loadSettings } from './config.js';
import { chooseSqliteDriver } from './context.js';
import type { Environment } from './environment.js';
import { createOutput, EXIT_OK, type Io, log, reportFailure, UsageError } from './output.js';

interface MigrateOptions {
  readonly from: string;
  readonly to: string;
  readonly force?: boolean;
  readonly config?: string;
  readonly sqliteDriver?: SqliteDriverName;
  readonly json?: boolean;
}

/** From this many entries on, a copy reports its progress. */
const BIG_COPY = 1_000;

function backendFor(location: string, flag: '--from' | '--to'): Backend {
  const backend = backendOf(location);
  // A copy is one long transaction: no statement timeout cuts it short.
  if (backend.kind === 'postgres') return { ...backend, statementTimeoutMs: 0 };
  if (flag === '--from' && !existsSync(backend.path)) {
    throw new UsageError(
      `--from ${location}: no such file. Give the path of an Engram SQLite database or a postgres:// URL.`,
    );
  }
  return { kind: 'sqlite', path: resolve(backend.path) };
}

/** One SQLite file named twice: told before opening, as opening a target creates its file. */
function sameFile(from: Backend, to: Backend): boolean {
  return (
    from.kind === 'sqlite' &&
    to.kind === 'sqlite' &&
    existsSync(to.path) &&
    realpathSync(from.path) === realpathSync(to.path)
  );
}

/**
 * One PostgreSQL database named twice, however its URLs spell it (127.0.0.1 or localhost, a
 * socket, another user), as its server tells: the target's load locks every table, then
 * the source's read would wait on it while the load waits for the read, forever.
 */
async function sameTables(source: Store, target: Store): Promise<boolean> {
  if (!source.identity || !target.identity) return false;
  return (await source.identity()) === (await target.identity());
}

const SAME_DATABASE = '--from and --to name the same database: nothing was copied. Copy into another one.';

/** Prints a line on stderr at each tenth of a big copy. */
function progressOnStderr(io: Io): (progress: CopyProgress) => void {
  let lastTenth = -1;
  return ({ entriesWritten, entriesTotal }) => {
    if (entriesTotal < BIG_COPY) return;
    const tenth = Math.floor((entriesWritten * 10) / entriesTotal);
    if (tenth === lastTenth) return;
    lastTenth = tenth;
    io.stderr(
      entriesWritten === 0
        ? `engram: copying ${formatCount(entriesTotal)} entries in one transaction\n`
        : `engram: wrote ${formatCount(entriesWritten)} of ${formatCount(entriesTotal)} entries (${tenth * 10}%)\n`,
    );
  };
}

function describeSummary(from: string, to: string, summary: CopySummary): string {
  const counts = [
    countOf(summary.users, 'user'),
    countOf(summary.entries, 'entry', 'entries'),
    `${formatCount(summary.trash)} in the trash`,
    countOf(summary.revisions, 'revision'),
    countOf(summary.tokens, 'token'),
    countOf(summary.accounts, 'account'),
    countOf(summary.apps, 'connected app'),
  ].join(', ');
  return `Copied ${from} to ${to}${summary.replaced ? ', replacing what it held' : ''}: ${counts}.`;
}

async function migrate(options: MigrateOptions, environment: Environment, io: Io): Promise<number> {
  const output = createOutput(options.json === true, io);
  const opened: Store[] = [];
  try {
    const from = backendFor(options.from, '--from');
    const to = backendFor(options.to, '--to');
    if (sameFile(from, to)) throw new UsageError(SAME_DATABASE);
    const settings = loadSettings(options.config, environment);
    const { policy } = settings;
    const sqliteDriver = chooseSqliteDriver(options, settings, environment);
    const source = await openBackend(from, { onWarning: log, sqliteDriver });
    opened.push(source);
    const target = await openBackend(to, { onWarning: log, sqliteDriver });
    opened.push(target);
    if (await sameTables(source, target)) throw new UsageError(SAME_DATABASE);
    const names = { from: describeBackend(from), to: describeBackend(to) };
    const summary = await copyStore(source, target, {
      force: options.force === true,
      target: names.to,
      policy,
      onProgress: progressOnStderr(io),
    });
    output.result(describeSummary(names.from, names.to, summary), { ...names, ...summary });
    return EXIT_OK;
  } catch (error) {
    return reportFailure(error, output.json, io);
  } finally {
    for (const store of opened) await store.close();
  }
}

export function registerMigrateCommand(
  program: Command,
  environment: Environment,
  io: Io,
  finish: (exitCode: number) => void,
): void {
  program
    .command('migrate')
    .description(
      'Copy a whole database (every user’s entries, trash, revisions and tokens, accounts and connected apps) between SQLite and PostgreSQL, either way',
    )
    .requiredOption('--from <database>', 'the database to copy: a SQLite file path or a postgres:// URL')
    .requiredOption('--to <database>', 'where to copy it: a SQLite file path or a postgres:// URL')
    .option('--force', 'replace everything the target holds (without it, a target that is not empty is refused)')
    .addOption(
      new Option(
        '--config <file>',
        'JSON config file whose caps the copy must fit (else $ENGRAM_CONFIG, else ~/.config/engram/config.json)',
      ),
    )
    .addOption(
      new Option(
        '--sqlite-driver <driver>',
        'SQLite driver for a file: better-sqlite3 or node (node:sqlite, Node 22.16+); else $ENGRAM_SQLITE_DRIVER, else better-sqlite3 when it loads',
      ).choices(SQLITE_DRIVER_NAMES),
    )
    .option('--json', 'print JSON for scripts')
    .action(async (options: MigrateOptions) => finish(await migrate(options, environment, io)));
}
