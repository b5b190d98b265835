/**
 * Where a memory may be created. A typo in --db (in a Claude Desktop config, say) must not
 * make folders and an empty database, then say "Memory is empty", which looks like lost
 * memory. So a memory is created only in a folder that exists (the SQLite store refuses
 * any other, naming the folder), or at the default path, whose folders Engram makes.
 * A command that only reads opens a memory that exists and never creates one. A dry run
 * (import --dry-run), which promises to change nothing, previews against an empty memory
 * held in memory when there is no database yet. Writing commands, stdio and serve create
 * the database.
 */

import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { EngramError } from '../memory/model/errors.js';
import { type Backend, folderMissing, noSuchFolderError } from '../open-store.js';

/**
 * Whether a command may create the database it opens, only reads one that exists, or
 * previews a change (a dry run): on one that exists, or else on an empty one it does not
 * create; or serves (creates, and keeps it open for long for many clients at once, as
 * `engram serve` does: the SQLite store then indexes for search in a worker thread, off the
 * event loop that answers requests).
 */
export type Opening = 'creates' | 'reads' | 'previews' | 'serves';

/**
 * Refuses a SQLite path with no database file (a PostgreSQL database is never created by
 * Engram). At the default path that is a new user's first read, not a typo: they are told
 * to write the first entry, never to check a path they did not give.
 */
export function assertMemoryExists(backend: Backend, defaultDatabasePath: string): void {
  if (backend.kind !== 'sqlite' || backend.path === ':memory:' || existsSync(backend.path)) return;
  if (isDefaultPath(backend.path, defaultDatabasePath)) {
    throw new EngramError(
      'STORE_UNAVAILABLE',
      `There is no memory yet at ${backend.path}, the default path: this command only reads, so it created ` +
        `nothing. To start your memory, write its first entry, for example: ${FIRST_WRITE}`,
    );
  }
  if (folderMissing(backend.path)) throw noSuchFolderError(backend.path);
  throw new EngramError(
    'STORE_UNAVAILABLE',
    `There is no memory at ${backend.path}: the file does not exist, and this command only reads, so it created ` +
      'nothing. Check the path (--db, ENGRAM_DB or "db" in the config file); to start a memory there, write its ' +
      `first entry with the same settings, for example: ${FIRST_WRITE}`,
  );
}

const FIRST_WRITE = 'engram write topics/me -d "Who I am" --new "Name: Ada."';

/**
 * Whether `path` is the default database path however it is spelt: a client may name it
 * (the Claude Desktop bundle passes `${HOME}/.local/share/engram/memory.db`, with forward
 * slashes on Windows too).
 */
function isDefaultPath(path: string, defaultDatabasePath: string): boolean {
  return resolve(path) === resolve(defaultDatabasePath);
}

/**
 * Readies the folder of a database that may be created: the default path's folders are
 * made (0700), the one place Engram makes folders; any other path's folder must exist, or
 * the command is refused now, naming it, as the SQLite store would refuse it on opening
 * (`engram stdio` opens its store only after answering the client's opening).
 */
export function prepareFolder(backend: Backend, defaultDatabasePath: string): void {
  if (backend.kind !== 'sqlite' || backend.path === ':memory:') return;
  if (isDefaultPath(backend.path, defaultDatabasePath)) {
    mkdirSync(dirname(backend.path), { recursive: true, mode: 0o700 });
  } else if (folderMissing(backend.path)) {
    throw noSuchFolderError(backend.path);
  }
}

/** What a dry run opens: the database when it exists, else an empty SQLite memory held in memory, created nowhere. */
export function previewBackend(backend: Backend): { readonly backend: Backend; readonly absent: boolean } {
  if (backend.kind !== 'sqlite' || backend.path === ':memory:' || existsSync(backend.path)) {
    return { backend, absent: false };
  }
  return { backend: { kind: 'sqlite', path: ':memory:' }, absent: true };
}
