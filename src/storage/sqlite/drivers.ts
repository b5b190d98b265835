/**
 * Which SQLite driver opens the file: better-sqlite3 (a native addon, an optional
 * dependency) when it loads, else Node's built-in node:sqlite (Node 22.16 and newer,
 * node-driver.ts), so that an install with no compiler, or a Claude Desktop bundle that
 * cannot load a `.node` file, still runs. A caller may name one (`driver`); a driver named
 * but missing is refused in words, never swapped for the other. Both load lazily, once.
 */

import { createRequire } from 'node:module';
import { EngramError } from '../../memory/model/errors.js';
import { betterSqlite3Path } from '../better-sqlite3-path.js';
import { type DriverConstructor, nodeSqliteDriver } from './node-driver.js';

export const SQLITE_DRIVER_NAMES = ['better-sqlite3', 'node'] as const;
export type SqliteDriverName = (typeof SQLITE_DRIVER_NAMES)[number];

/** What the search worker loads to open its own connection (search-worker.ts). */
export type WorkerDriver = { readonly name: 'better-sqlite3'; readonly path: string } | { readonly name: 'node' };

export interface SqliteDriver {
  readonly name: SqliteDriverName;
  readonly Database: DriverConstructor;
  readonly worker: WorkerDriver;
}

const loaded = new Map<SqliteDriverName, SqliteDriver | Error>();

function load(name: SqliteDriverName): SqliteDriver | Error {
  let driver = loaded.get(name);
  if (driver === undefined) {
    try {
      driver = name === 'node' ? loadNode() : loadBetterSqlite3();
    } catch (error) {
      driver = error instanceof Error ? error : new Error(String(error));
    }
    loaded.set(name, driver);
  }
  return driver;
}

function loadBetterSqlite3(): SqliteDriver {
  const path = betterSqlite3Path();
  // Assigned to Engram's slice of it (driver.ts), so that tsc checks the real driver still fits.
  const Database: DriverConstructor = createRequire(path)(path) as typeof import('better-sqlite3');
  // The addon itself loads at the first open: open one here, so a build for another Node fails now.
  new Database(':memory:').close();
  return { name: 'better-sqlite3', Database, worker: { name: 'better-sqlite3', path } };
}

function loadNode(): SqliteDriver {
  // process.getBuiltinModule (Node 20.16+) gives undefined where there is no node:sqlite (Node 20, or 22 before 22.13 without a flag; node-driver.ts refuses one before 22.16).
  const Database = nodeSqliteDriver((id) => {
    const module = typeof process.getBuiltinModule === 'function' ? process.getBuiltinModule(id) : undefined;
    if (module === undefined) throw new Error(`this Node (${process.version}) has no ${id}`);
    return module;
  });
  return { name: 'node', Database, worker: { name: 'node' } };
}

/** The driver named, else better-sqlite3 when it loads, else node:sqlite; a STORE_UNAVAILABLE refusal when none does. */
export function sqliteDriver(requested?: SqliteDriverName): SqliteDriver {
  if (requested !== undefined) {
    const driver = load(requested);
    if (!(driver instanceof Error)) return driver;
    const reason = withoutFullStop(driver.message);
    throw new EngramError(
      'STORE_UNAVAILABLE',
      requested === 'node'
        ? `The SQLite driver node:sqlite cannot be used: ${reason}. It needs Node 22.16 or newer; ` +
            'on this Node, use the better-sqlite3 driver (--sqlite-driver better-sqlite3, or leave the choice to Engram).'
        : `The SQLite driver better-sqlite3 cannot be loaded: ${reason}. Install it (npm i better-sqlite3, ` +
            'built for this Node: npm rebuild better-sqlite3), or use the node driver on Node 22.16 or newer (--sqlite-driver node).',
    );
  }
  const native = load('better-sqlite3');
  if (!(native instanceof Error)) return native;
  const builtIn = load('node');
  if (!(builtIn instanceof Error)) return builtIn;
  throw new EngramError(
    'STORE_UNAVAILABLE',
    `SQLite needs better-sqlite3 (npm i better-sqlite3) or Node 22.16+ for node:sqlite: better-sqlite3 cannot be ` +
      `loaded (${withoutFullStop(native.message)}) and node:sqlite cannot be used (${withoutFullStop(builtIn.message)}).`,
  );
}

/** A loader's message, to be quoted inside a sentence. */
function withoutFullStop(message: string): string {
  return message.trim().replace(/\.$/, '');
}
