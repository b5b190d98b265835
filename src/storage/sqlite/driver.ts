/**
 * The slice of better-sqlite3 the SQLite store uses, as Engram's own types: the store's
 * published declarations name these, never the driver's, so a program that type-checks
 * its dependencies needs no @types/better-sqlite3. Only drivers.ts loads better-sqlite3;
 * it assigns the driver to a constructor of `Database`, so tsc checks there that the real
 * driver still fits this slice. node-driver.ts gives node:sqlite the same shape.
 */

export interface RunResult {
  readonly changes: number;
  readonly lastInsertRowid: number | bigint;
}

/** A prepared statement; `pluck`, `raw` and `bind` change it in place and return it. */
export interface Statement {
  run(...params: unknown[]): RunResult;
  /** The first row, or undefined when there is none. */
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  /** Rows are read as their first column alone. */
  pluck(toggleState?: boolean): this;
  /** Rows are read as arrays of columns, not objects. */
  raw(toggleState?: boolean): this;
  bind(...params: unknown[]): this;
}

/** The parameters of `F`, spelt as the driver spells them so that tsc can match the two. */
type ArgumentTypes<F> = F extends (...args: infer A) => unknown ? A : never;

/** `fn` wrapped in a transaction (a savepoint inside another): BEGIN when called, BEGIN IMMEDIATE by `immediate`. */
export interface Transaction<F extends (...params: never[]) => unknown> {
  (...params: ArgumentTypes<F>): ReturnType<F>;
  immediate(...params: ArgumentTypes<F>): ReturnType<F>;
}

export interface Database {
  readonly open: boolean;
  readonly inTransaction: boolean;
  prepare(source: string): Statement;
  transaction<F extends (...params: never[]) => unknown>(fn: F): Transaction<F>;
  exec(source: string): void;
  /** With `simple`, the first column of the first row; else every row. */
  pragma(source: string, options?: { readonly simple?: boolean }): unknown;
  close(): void;
}
