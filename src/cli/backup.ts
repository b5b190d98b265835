/**
 * `engram backup [DEST]`, `engram backup verify FILE` and `engram restore-backup FILE`: the
 * backups of transfer/backup in a person's words and a script's JSON. A backup goes to
 * DEST (a file, or a folder to name it in), else to a `backups` folder beside the SQLite
 * memory (for PostgreSQL, beside the default memory path). Progress goes to stderr when it
 * is a terminal; the summary to stdout.
 */

import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { type Backups, openBackups } from '../app.js';
import { EngramError, isEngramError } from '../memory/model/errors.js';
import { countOf, formatCount } from '../memory/model/text.js';
import { type Backend, backendOf } from '../open-store.js';
import type { Destination } from '../transfer/backup/durable.js';
import { freeBackupNames } from '../transfer/backup/names.js';
import type { BackupCounts } from '../transfer/backup/port.js';
import type { BackupProgress, TakenBackup } from '../transfer/backup/take.js';
import type { VerifiedBackup } from '../transfer/backup/verify.js';
import { describeBackend } from './backend.js';
import { loadSettings } from './config.js';
import { type CommonOptions, chooseBackend, chooseSqliteDriver, VERSION } from './context.js';
import type { Environment } from './environment.js';
import { prepareFolder } from './existing-memory.js';
import { createOutput, EXIT_OK, type Io, reportFailure, UsageError } from './output.js';

interface BackupOptions extends CommonOptions {
  readonly to?: string;
  readonly force?: boolean;
}

/** Where backups go when no folder is named: `backups` beside the SQLite file, or beside the default memory path. */
export function defaultBackupFolder(backend: Backend, environment: Environment): string {
  return join(dirname(resolve(backend.kind === 'sqlite' ? backend.path : environment.defaultDatabasePath)), 'backups');
}

/**
 * The file a backup to `dest` is written to: DEST itself, or free names in the folder DEST
 * (or the default folder), the next taken should another backup take one meanwhile.
 */
function destinationFor(
  dest: string | undefined,
  backend: Backend,
  environment: Environment,
  now: number,
): Destination {
  if (dest === undefined) {
    const folder = defaultBackupFolder(backend, environment);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    return freeBackupNames(folder, now);
  }
  const path = resolve(dest);
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat?.isDirectory()) return freeBackupNames(path, now);
  if (stat !== undefined) {
    throw new UsageError(`${dest} already exists: a backup never replaces a file. Name a new file, or a folder.`);
  }
  if (dest.endsWith('/') || !existsSync(dirname(path))) {
    throw new UsageError(
      `${dest}: the folder ${dest.endsWith('/') ? path : dirname(path)} does not exist. Create it first, or name a folder that exists.`,
    );
  }
  return path;
}

/** The backend named by --db/--database-url (else the config and the default), with its driver; the SQLite file must exist. */
function chosen(options: CommonOptions, environment: Environment) {
  const settings = loadSettings(options.config, environment);
  const backend = chooseBackend(options, settings, environment);
  const sqliteDriver = chooseSqliteDriver(options, settings, environment);
  return { backend: backend.kind === 'sqlite' ? { ...backend, path: resolve(backend.path) } : backend, sqliteDriver };
}

/** Just the counts, of a summary that holds more. */
function countsOf({ users, entries, trash, revisions, tokens, accounts, apps }: BackupCounts): BackupCounts {
  return { users, entries, trash, revisions, tokens, accounts, apps };
}

function describeCounts(counts: BackupCounts): string {
  return [
    countOf(counts.users, 'user'),
    countOf(counts.entries, 'entry', 'entries'),
    `${formatCount(counts.trash)} in the trash`,
    countOf(counts.revisions, 'revision'),
    countOf(counts.tokens, 'token'),
    countOf(counts.accounts, 'account'),
    countOf(counts.apps, 'connected app'),
  ].join(', ');
}

function megabytes(bytes: number): string {
  return bytes < 1024 * 1024 ? `${formatCount(Math.ceil(bytes / 1024))} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** How long ago, in words: "3 minutes", "2 hours", "5 days". */
function age(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return 'less than a minute';
  if (minutes < 120) return countOf(minutes, 'minute');
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? countOf(hours, 'hour') : countOf(Math.floor(hours / 24), 'day');
}

/** A line on stderr that rewrites itself, when stderr is a terminal; nothing otherwise. */
function progressLine(io: Io): { show: (progress: BackupProgress) => void; end: () => void } {
  if (io.stderrTerminal !== true) return { show: () => {}, end: () => {} };
  let shown = false;
  return {
    show(progress) {
      const text =
        progress.phase === 'copying'
          ? `copying: ${megabytes(progress.bytes)} of about ${megabytes(progress.total)}`
          : progress.phase === 'reading'
            ? 'opening one snapshot of the whole database'
            : `writing: ${formatCount(progress.entries)} of ${formatCount(progress.total)} entries`;
      io.stderr(`\rengram: ${text}\u001b[K`);
      shown = true;
    },
    end() {
      if (shown) io.stderr('\n');
    },
  };
}

/** The summary of a backup for scripts: `from` names the memory as people read it, `source` its backend, as verify says it. */
function takenJson(from: string, taken: TakenBackup) {
  const { metadata } = taken;
  return {
    path: taken.path,
    bytes: taken.bytes,
    from,
    source: metadata.source,
    takenAt: new Date(metadata.takenAt),
    engramVersion: metadata.engramVersion,
    schemaVersion: metadata.schemaVersion,
    counts: metadata.counts,
  };
}

async function takeCommand(dest: string | undefined, options: CommonOptions, environment: Environment, io: Io) {
  const output = createOutput(options.json === true, io);
  let backups: Backups | undefined;
  const progress = progressLine(io);
  try {
    const { backend, sqliteDriver } = chosen(options, environment);
    if (backend.kind === 'sqlite' && !existsSync(backend.path)) {
      throw new EngramError(
        'NOT_FOUND',
        `There is no memory at ${backend.path} to back up: check --db (or ENGRAM_DB, or "db" in the config file).`,
      );
    }
    const destination = destinationFor(dest, backend, environment, Date.now());
    backups = openBackups(backend.kind === 'postgres' ? { ...backend, statementTimeoutMs: 0 } : backend, {
      version: VERSION,
      sqliteDriver,
    });
    const taken = await backups.take(destination, progress.show);
    progress.end();
    const name = describeBackend(backend);
    output.result(
      `Backed up ${name} to ${taken.path} (${megabytes(taken.bytes)}): ${describeCounts(taken.metadata.counts)}.`,
      takenJson(name, taken),
    );
    return EXIT_OK;
  } catch (error) {
    progress.end();
    return reportFailure(explainFileError(error), output.json, io);
  } finally {
    await backups?.close();
  }
}

function verifiedJson(verified: VerifiedBackup) {
  const { metadata } = verified;
  return {
    ok: true,
    path: verified.path,
    bytes: verified.bytes,
    takenAt: new Date(metadata.takenAt),
    ageSeconds: Math.floor(verified.ageMs / 1000),
    source: metadata.source,
    engramVersion: metadata.engramVersion,
    schemaVersion: metadata.schemaVersion,
    restorable: verified.restorable,
    counts: metadata.counts,
  };
}

function describeVerified(verified: VerifiedBackup): string {
  const { metadata } = verified;
  const source = metadata.source === 'postgres' ? 'PostgreSQL' : 'SQLite';
  return (
    `${verified.path} is a good backup: taken ${new Date(metadata.takenAt).toISOString()} (${age(verified.ageMs)} ago) ` +
    `from ${source} by Engram ${metadata.engramVersion}, schema version ${metadata.schemaVersion}, ${megabytes(verified.bytes)}. ` +
    `It holds ${describeCounts(metadata.counts)}.` +
    (verified.restorable
      ? ''
      : '\nThis Engram is older than the one that wrote it and cannot restore it: upgrade Engram first.')
  );
}

async function verifyCommand(file: string, options: CommonOptions, environment: Environment, io: Io) {
  const output = createOutput(options.json === true, io);
  let backups: Backups | undefined;
  try {
    const { backend, sqliteDriver } = chosen(options, environment);
    backups = openBackups(backend, { version: VERSION, sqliteDriver });
    const verified = await backups.verify(resolve(file));
    output.result(describeVerified(verified), verifiedJson(verified));
    return EXIT_OK;
  } catch (error) {
    return reportFailure(error, output.json, io);
  } finally {
    await backups?.close();
  }
}

async function restoreCommand(file: string, options: BackupOptions, environment: Environment, io: Io) {
  const output = createOutput(options.json === true, io);
  let backups: Backups | undefined;
  const progress = progressLine(io);
  let target: string | undefined;
  try {
    const settings = loadSettings(options.config, environment);
    const sqliteDriver = chooseSqliteDriver(options, settings, environment);
    const given = options.to === undefined ? chooseBackend(options, settings, environment) : backendOf(options.to);
    const backend: Backend =
      given.kind === 'sqlite' ? { kind: 'sqlite', path: resolve(given.path) } : { ...given, statementTimeoutMs: 0 };
    const name = describeBackend(backend);
    target = name;
    const source = resolve(file);
    if (backend.kind === 'sqlite' && backend.path === source) {
      throw new UsageError(
        'The backup and the memory to restore it into are the same file: restore into another one (--to).',
      );
    }
    // On a new machine, the default memory's folders do not exist yet: made as any command makes them.
    prepareFolder(backend, environment.defaultDatabasePath);
    backups = openBackups(backend, { version: VERSION, sqliteDriver });
    const restored = await backups.restore(source, {
      name,
      force: options.force === true,
      onProgress: (entries, total) => progress.show({ phase: 'writing', entries, total }),
      keepPath: () => {
        const folder = defaultBackupFolder(backend, environment);
        mkdirSync(folder, { recursive: true, mode: 0o700 });
        return freeBackupNames(folder, Date.now(), 'engram-before-restore');
      },
    });
    progress.end();
    const kept = restored.kept === undefined ? '' : ` What it held before is kept in ${restored.kept.path}.`;
    output.result(
      `Restored ${source} (taken ${new Date(restored.backup.metadata.takenAt).toISOString()}) into ${name}` +
        `${restored.copied.replaced ? ', replacing what it held' : ''}: ${describeCounts(restored.copied)}.${kept}`,
      {
        backup: source,
        to: name,
        takenAt: new Date(restored.backup.metadata.takenAt),
        replaced: restored.copied.replaced,
        kept: restored.kept?.path ?? null,
        counts: countsOf(restored.copied),
      },
    );
    return EXIT_OK;
  } catch (error) {
    progress.end();
    return reportFailure(explainRestoreError(error, target), output.json, io);
  } finally {
    await backups?.close();
  }
}

/**
 * A restore's failure that no step worded (restore.ts words its temporary copy and the copy
 * it keeps; the target's store words its own): a file system refusal met making the
 * target's folders or writing it, said as the target's.
 */
function explainRestoreError(error: unknown, target: string | undefined): unknown {
  if (isEngramError(error)) return error;
  const { code, message } = error as NodeJS.ErrnoException;
  const into = target === undefined ? 'the memory' : target;
  if (code === 'ENOSPC') {
    return new EngramError(
      'STORE_FULL',
      `The disk of ${into} is full (${message}), so the restore stopped. Free space on that disk, then try again.`,
    );
  }
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOENT' || code === 'ENOTDIR') {
    return new EngramError(
      'STORE_READ_ONLY',
      `Cannot restore into ${into} (${message}). Let the user running Engram create and write the memory's file ` +
        'and its folder, or restore into another memory (--to), then try again.',
    );
  }
  return error;
}

/** A file system refusal (a folder that cannot be written) in words, with the path it names. */
function explainFileError(error: unknown): unknown {
  const { code, message } = error as NodeJS.ErrnoException;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOENT' || code === 'ENOTDIR') {
    return new EngramError(
      'STORE_READ_ONLY',
      `Cannot write the backup there: ${message}. Choose a folder you may write.`,
    );
  }
  if (code === 'EEXIST') {
    return new EngramError(
      'CONFLICT',
      `${message}. Nothing was written there: name a new file, or a folder (Engram then picks a free name in it).`,
    );
  }
  if (code === 'ENOSPC')
    return new EngramError('STORE_FULL', `The disk is full: ${message}. Free some space, or back up elsewhere.`);
  if (typeof message === 'string' && /unable to open database file/.test(message)) {
    return new EngramError(
      'STORE_READ_ONLY',
      `Cannot write the backup there (${message}): choose a folder you may write.`,
    );
  }
  return error;
}

export function registerBackupCommands(
  program: Command,
  common: (command: Command) => Command,
  environment: Environment,
  io: Io,
  finish: (exitCode: number) => void,
): void {
  const backup = common(program.command('backup'))
    .argument('[dest]', 'a file to write, or a folder to write engram-<UTC time>.db into')
    .description(
      'Back up the whole memory (every user’s entries, trash, history, tokens, accounts and connected apps) into ' +
        'one SQLite file, while servers keep writing. Without DEST: a backups folder beside the SQLite memory ' +
        '(for PostgreSQL, the backups folder beside the default memory path, ~/.local/share/engram/backups). Restore with engram restore-backup.',
    )
    .action(async (dest: string | undefined, options: CommonOptions) =>
      finish(await takeCommand(dest, options, environment, io)),
    );
  common(backup.command('verify'))
    .argument('<file>', 'the backup file to check')
    .description('Check a backup: every page, its stamp and its counts; say what it holds and how old it is')
    // The flags may come after `verify`, or between `backup` and it: the two commands' together.
    .action(async (file: string, _options: CommonOptions, command: Command) =>
      finish(await verifyCommand(file, command.optsWithGlobals<CommonOptions>(), environment, io)),
    );
  common(program.command('restore-backup'))
    .argument('<file>', 'the backup file (engram-….db) to restore')
    .description(
      'Restore a backup into the memory (or --to another): refused over a memory that holds anything unless --force, ' +
        'which first backs up what it replaces; all or nothing',
    )
    .option(
      '--to <database>',
      'the memory to restore into: a SQLite file path or a postgres:// URL (else --db / the configured one)',
    )
    .option('--force', 'replace everything the memory holds, after backing it up')
    .action(async (file: string, options: BackupOptions) =>
      finish(await restoreCommand(file, options, environment, io)),
    );
}
