/**
 * What the access tables' one SQL implementation (tokens.ts, accounts.ts, oauth.ts) asks
 * of a backend: a database to run its statements on, and the dialect they are written
 * in. Statements are written with `?` placeholders; a backend numbers them if it must.
 * Each backend implements this once (sqlite/sql-database.ts, postgres/sql-database.ts),
 * with its own way of retrying, refusing and putting failures in words.
 */

import type { Steps } from './steps.js';

/** A statement prepared by `SqlDatabase.prepare`: a name unique among the access tables' statements, and its text. */
export interface SqlStatement {
  readonly name: string;
  readonly text: string;
}

/** Where SQLite and PostgreSQL differ, for these tables. */
export interface SqlDialect {
  /** A boolean column's value: SQLite has no boolean and keeps 0 or 1. */
  boolean(value: boolean): boolean | number;
  /** Appended to an ORDER BY of text to order it by code point (PostgreSQL's default collation may not); '' in SQLite. */
  readonly byCodePoint: string;
  /** Appended to a SELECT to lock the rows it reads until the transaction ends, letting others read them; '' in SQLite, whose write transactions exclude each other. */
  readonly lockShared: string;
  /** Appended to a SELECT to lock the rows it reads, skipping rows another transaction holds; '' in SQLite. */
  readonly lockSkippingLocked: string;
  /**
   * A user's change counter when their row is made: the floor the last load left past every
   * counter it replaced (dump.ts). SQLite keeps it in its user_version (0 before any load),
   * PostgreSQL in change_floor (from its migration 12, the highest counter then).
   */
  readonly changeFloor: string;
  /** Which key a failed insert took: its primary key, another unique key, or none (another failure). */
  duplicateKeyOf(error: unknown): 'primary' | 'unique' | undefined;
}

export interface SqlDatabase {
  readonly dialect: SqlDialect;
  /** Prepares `text` (with `?` placeholders) under `name`, once, when a store is built. */
  prepare(name: string, text: string): SqlStatement;
  /** The rows of one read. */
  rows<Row>(statement: SqlStatement, params: readonly unknown[]): Promise<Row[]>;
  /** One write whose repeating changes nothing more (an upsert, a "last used" time): it may be tried again. */
  update(statement: SqlStatement, params: readonly unknown[]): Promise<void>;
  /**
   * The steps `work` makes, in one transaction: committed whole or not at all, and never
   * repeated once it may have committed. `work` may be called again (a busy or lost
   * database): it must make the same steps afresh.
   */
  transaction<T>(work: () => Steps<T>): Promise<T>;
}
