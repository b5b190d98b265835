/**
 * The SQLite store on Node's built-in `node:sqlite` (Node 22.16 and newer: the first whose
 * SQLite has FTS5, which search needs, checked when the driver loads), for an install
 * with no native addon: DatabaseSync dressed as the slice of better-sqlite3 the store uses
 * (driver.ts), so that nothing above connection.ts knows which driver runs. What it
 * emulates: better-sqlite3's transactions (BEGIN, BEGIN IMMEDIATE, a savepoint inside
 * another), pluck/raw/bind, pragma(), `open` and `inTransaction`, undefined bound as NULL,
 * an object of named parameters that holds more than the statement names,
 * its cache size, and its error codes (SQLITE_BUSY, SQLITE_CONSTRAINT_UNIQUE, ...: named
 * from node:sqlite's numeric `errcode`, which errors.ts and busy.ts then read as before).
 * Both drivers keep the same file format, so a file written by one is read by the other.
 *
 * The search worker (search-worker.ts) runs the source text of nodeSqliteDriver, as it does
 * its other functions: so it uses nothing but its argument, `load` (a require).
 */

import type { Database, RunResult, Statement, Transaction } from './driver.js';

/** better-sqlite3's options, the few the store passes. */
export interface DriverOptions {
  /** The busy timeout, in ms (better-sqlite3's default: 5,000). */
  readonly timeout?: number;
  /** Refuse a path with no file (SQLITE_CANTOPEN) rather than create one. */
  readonly fileMustExist?: boolean;
  /** Open for reading only: nothing is written to the file, nor created beside it (a backup being verified). */
  readonly readonly?: boolean;
}

export type DriverConstructor = new (path: string, options?: DriverOptions) => Database;

/** Just what the adapter calls of node:sqlite (@types/node 20 has none of it). */
interface NodeStatement {
  run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  setReturnArrays(enabled: boolean): void;
  setAllowUnknownNamedParameters(enabled: boolean): void;
}
interface NodeDatabase {
  readonly isTransaction: boolean;
  prepare(source: string): NodeStatement;
  exec(source: string): void;
  close(): void;
}
interface NodeSqlite {
  DatabaseSync: new (path: string, options?: object) => NodeDatabase;
}

/**
 * The better-sqlite3-shaped database class over node:sqlite, loaded with `load`; throws
 * (ERR_UNKNOWN_BUILTIN_MODULE, or a TypeError) where this Node has no node:sqlite, and an
 * Error saying what is missing where its node:sqlite is older than Engram needs (before 22.16).
 */
export function nodeSqliteDriver(load: (id: string) => unknown): DriverConstructor {
  // node:sqlite says once per thread that it is experimental: Engram chose it knowingly, and
  // the warning on stderr reads as a fault in a client's log (Claude Desktop shows stderr).
  const emitWarning = process.emitWarning;
  let sqlite: NodeSqlite;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: unknown } | undefined)?.type;
    if (type === 'ExperimentalWarning' && String(warning).includes('SQLite')) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    sqlite = load('node:sqlite') as NodeSqlite;
  } finally {
    process.emitWarning = emitWarning;
  }
  if (typeof sqlite?.DatabaseSync !== 'function') throw new TypeError('node:sqlite has no DatabaseSync');
  // What Engram needs of node:sqlite arrived in Node 22.16: FTS5 in its SQLite (search) and the
  // statement and transaction API below. An older one is refused here, saying so, rather
  // than failing at the first search or transaction.
  const probe = new sqlite.DatabaseSync(':memory:');
  try {
    const statement = probe.prepare('SELECT 1');
    if (
      typeof probe.isTransaction !== 'boolean' ||
      typeof statement.setReturnArrays !== 'function' ||
      typeof statement.setAllowUnknownNamedParameters !== 'function'
    ) {
      throw new Error(`node:sqlite in Node ${process.version} lacks the statement API Engram uses`);
    }
    try {
      probe.exec('CREATE VIRTUAL TABLE temp.probe USING fts5(text)');
    } catch {
      throw new Error(`node:sqlite in Node ${process.version} has no FTS5, which Engram's search needs`);
    }
  } finally {
    probe.close();
  }
  const { existsSync } = load('node:fs') as typeof import('node:fs');

  // SQLite's result codes by number (sqlite3.h), primary then extended: better-sqlite3's `code`.
  const PRIMARY = [
    'OK',
    'ERROR',
    'INTERNAL',
    'PERM',
    'ABORT',
    'BUSY',
    'LOCKED',
    'NOMEM',
    'READONLY',
    'INTERRUPT',
    'IOERR',
    'CORRUPT',
    'NOTFOUND',
    'FULL',
    'CANTOPEN',
    'PROTOCOL',
    'EMPTY',
    'SCHEMA',
    'TOOBIG',
    'CONSTRAINT',
    'MISMATCH',
    'MISUSE',
    'NOLFS',
    'AUTH',
    'FORMAT',
    'RANGE',
    'NOTADB',
    'NOTICE',
    'WARNING',
  ];
  // Each primary code's extended codes, in order from (1 << 8): IOERR_READ is 10 | 1 << 8.
  const EXTENDED: Record<string, readonly (string | undefined)[]> = {
    ERROR: ['MISSING_COLLSEQ', 'RETRY', 'SNAPSHOT'],
    IOERR: [
      'READ',
      'SHORT_READ',
      'WRITE',
      'FSYNC',
      'DIR_FSYNC',
      'TRUNCATE',
      'FSTAT',
      'UNLOCK',
      'RDLOCK',
      'DELETE',
      'BLOCKED',
      'NOMEM',
      'ACCESS',
      'CHECKRESERVEDLOCK',
      'LOCK',
      'CLOSE',
      'DIR_CLOSE',
      'SHMOPEN',
      'SHMSIZE',
      'SHMLOCK',
      'SHMMAP',
      'SEEK',
      'DELETE_NOENT',
      'MMAP',
      'GETTEMPPATH',
      'CONVPATH',
      'VNODE',
      'AUTH',
      'BEGIN_ATOMIC',
      'COMMIT_ATOMIC',
      'ROLLBACK_ATOMIC',
      'DATA',
      'CORRUPTFS',
      'IN_PAGE',
    ],
    LOCKED: ['SHAREDCACHE', 'VTAB'],
    BUSY: ['RECOVERY', 'SNAPSHOT', 'TIMEOUT'],
    CANTOPEN: ['NOTEMPDIR', 'ISDIR', 'FULLPATH', 'CONVPATH', 'DIRTYWAL', 'SYMLINK'],
    CORRUPT: ['VTAB', 'SEQUENCE', 'INDEX'],
    READONLY: ['RECOVERY', 'CANTLOCK', 'ROLLBACK', 'DBMOVED', 'CANTINIT', 'DIRECTORY'],
    // SQLITE_ABORT_ROLLBACK is 4 | 2 << 8: there is no extended code 1 of ABORT.
    ABORT: [undefined, 'ROLLBACK'],
    CONSTRAINT: [
      'CHECK',
      'COMMITHOOK',
      'FOREIGNKEY',
      'FUNCTION',
      'NOTNULL',
      'PRIMARYKEY',
      'TRIGGER',
      'UNIQUE',
      'VTAB',
      'ROWID',
      'PINNED',
      'DATATYPE',
    ],
    NOTICE: ['RECOVER_WAL', 'RECOVER_ROLLBACK'],
    WARNING: ['AUTOINDEX'],
    AUTH: ['USER'],
  };
  const codeName = (errcode: number): string => {
    const primary = PRIMARY[errcode & 0xff] ?? 'ERROR';
    const extended = errcode >> 8 > 0 ? EXTENDED[primary]?.[(errcode >> 8) - 1] : undefined;
    return `SQLITE_${primary}${extended === undefined ? '' : `_${extended}`}`;
  };
  /** node:sqlite's error with better-sqlite3's `code`; any other error as it is. */
  const named = (error: unknown): unknown => {
    const errcode = (error as { errcode?: unknown } | null)?.errcode;
    if (typeof errcode === 'number' && (error as { code?: unknown }).code === 'ERR_SQLITE_ERROR') {
      (error as { code: string }).code = codeName(errcode);
    }
    return error;
  };
  const attempt = <T>(work: () => T): T => {
    try {
      return work();
    } catch (error) {
      throw named(error);
    }
  };
  /** better-sqlite3 binds undefined as NULL, in a list of parameters or an object of named ones; node:sqlite refuses it. */
  const bindable = (params: readonly unknown[]): unknown[] =>
    params.map((param) => {
      if (param === undefined) return null;
      if (param === null || typeof param !== 'object' || ArrayBuffer.isView(param)) return param;
      const named: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(param)) named[key] = value === undefined ? null : value;
      return named;
    });

  type Mode = 'rows' | 'pluck' | 'raw';

  class NodeSqliteStatement implements Statement {
    private mode: Mode = 'rows';
    private bound: unknown[] | undefined;

    constructor(private readonly statement: NodeStatement) {
      // better-sqlite3 takes an object of named parameters that holds more than the statement names.
      statement.setAllowUnknownNamedParameters(true);
    }

    run(...params: unknown[]): RunResult {
      const result = attempt(() => this.statement.run(...this.params(params)));
      return { changes: Number(result.changes), lastInsertRowid: result.lastInsertRowid };
    }

    get(...params: unknown[]): unknown {
      const row = attempt(() => this.statement.get(...this.params(params)));
      return row === undefined ? undefined : this.shape(row);
    }

    all(...params: unknown[]): unknown[] {
      const rows = attempt(() => this.statement.all(...this.params(params)));
      return this.mode === 'rows' ? rows : rows.map((row) => this.shape(row));
    }

    pluck(toggleState = true): this {
      return this.switchTo(toggleState ? 'pluck' : this.mode === 'pluck' ? 'rows' : this.mode);
    }

    raw(toggleState = true): this {
      return this.switchTo(toggleState ? 'raw' : this.mode === 'raw' ? 'rows' : this.mode);
    }

    bind(...params: unknown[]): this {
      if (this.bound) throw new TypeError('The bind() method can only be invoked once per statement object');
      this.bound = bindable(params);
      return this;
    }

    private switchTo(mode: Mode): this {
      this.mode = mode;
      this.statement.setReturnArrays(mode !== 'rows');
      return this;
    }

    private params(params: readonly unknown[]): unknown[] {
      if (!this.bound) return bindable(params);
      if (params.length > 0) throw new TypeError('This statement already has bound parameters');
      return this.bound;
    }

    private shape(row: unknown): unknown {
      if (this.mode === 'rows') return row;
      const columns = row as unknown[];
      return this.mode === 'pluck' ? columns[0] : columns;
    }
  }

  return class NodeSqliteDatabase implements Database {
    private readonly db: NodeDatabase;
    private opened = true;
    private readonly begin: NodeStatement;
    private readonly beginImmediate: NodeStatement;
    private readonly commit: NodeStatement;
    private readonly rollback: NodeStatement;
    private readonly savepoint: NodeStatement;
    private readonly release: NodeStatement;
    private readonly rollbackTo: NodeStatement;

    constructor(path: string, options: DriverOptions = {}) {
      if (options.fileMustExist && path !== ':memory:' && !existsSync(path)) {
        throw Object.assign(new Error('unable to open database file'), { code: 'SQLITE_CANTOPEN' });
      }
      const db = attempt(() => new sqlite.DatabaseSync(path, { readOnly: options.readonly === true }));
      this.db = db;
      try {
        attempt(() => {
          db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.trunc(options.timeout ?? 5_000))}`);
          // better-sqlite3 is built with a 16 MB page cache; SQLite's own default is 2 MB.
          db.exec('PRAGMA cache_size = -16000');
        });
        const prepared = (source: string) => attempt(() => db.prepare(source));
        this.begin = prepared('BEGIN');
        this.beginImmediate = prepared('BEGIN IMMEDIATE');
        this.commit = prepared('COMMIT');
        this.rollback = prepared('ROLLBACK');
        this.savepoint = prepared('SAVEPOINT "\t_engram."');
        this.release = prepared('RELEASE "\t_engram."');
        this.rollbackTo = prepared('ROLLBACK TO "\t_engram."');
      } catch (error) {
        db.close();
        throw error;
      }
    }

    get open(): boolean {
      return this.opened;
    }

    /** SQLite's autocommit flag, turned around. */
    get inTransaction(): boolean {
      return this.db.isTransaction;
    }

    prepare(source: string): Statement {
      return new NodeSqliteStatement(attempt(() => this.db.prepare(source)));
    }

    exec(source: string): void {
      attempt(() => this.db.exec(source));
    }

    pragma(source: string, options: { readonly simple?: boolean } = {}): unknown {
      const statement = this.prepare(`PRAGMA ${source}`);
      return options.simple ? statement.pluck().get() : statement.all();
    }

    /** As better-sqlite3's: BEGIN (or BEGIN IMMEDIATE) and COMMIT, or a savepoint inside a transaction; undone on a throw. */
    transaction<F extends (...params: never[]) => unknown>(fn: F): Transaction<F> {
      const run = (begin: NodeStatement, params: Parameters<F>): ReturnType<F> => {
        const nested = this.inTransaction;
        attempt(() => (nested ? this.savepoint : begin).run());
        try {
          const result = fn(...params) as ReturnType<F>;
          if (typeof (result as { then?: unknown } | null)?.then === 'function') {
            throw new TypeError('Transaction function cannot return a promise');
          }
          attempt(() => (nested ? this.release : this.commit).run());
          return result;
        } catch (error) {
          if (this.inTransaction) {
            attempt(() => (nested ? this.rollbackTo : this.rollback).run());
            if (nested) attempt(() => this.release.run());
          }
          throw error;
        }
      };
      const transaction = (...params: Parameters<F>) => run(this.begin, params);
      transaction.immediate = (...params: Parameters<F>) => run(this.beginImmediate, params);
      return transaction as unknown as Transaction<F>;
    }

    close(): void {
      if (!this.opened) return;
      this.db.close();
      this.opened = false;
    }
  };
}
