/**
 * The SQLite side of the access tables' one SQL implementation (storage/sql): statements
 * prepared once on the store's connection, every statement run through the store's guard
 * (writes refused on a replaced file, retried while another process holds the lock,
 * failures put in words), and a transaction's steps run to their end synchronously inside
 * one immediate transaction, as better-sqlite3 runs everything.
 */

import type { SqlDatabase, SqlDialect, SqlStatement } from '../sql/database.js';
import { runSteps, type SqlCall, type Steps } from '../sql/steps.js';
import type { Database, Statement } from './driver.js';
import type { Guard } from './guard.js';
import { CHANGE_FLOOR } from './statements.js';

export const sqliteDialect: SqlDialect = {
  boolean: (value) => (value ? 1 : 0),
  byCodePoint: '',
  lockShared: '',
  lockSkippingLocked: '',
  changeFloor: CHANGE_FLOOR,
  duplicateKeyOf(error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return 'primary';
    if (code === 'SQLITE_CONSTRAINT_UNIQUE') return 'unique';
    return undefined;
  },
};

export class SqliteSqlDatabase implements SqlDatabase {
  readonly dialect = sqliteDialect;
  private readonly prepared = new Map<string, Statement>();
  private readonly inTransaction;

  constructor(
    private readonly db: Database,
    private readonly guard: Guard,
  ) {
    this.inTransaction = db.transaction((steps: Steps<unknown>) => runSteps(steps, (call) => this.perform(call)));
  }

  prepare(name: string, text: string): SqlStatement {
    this.prepared.set(name, this.db.prepare(text));
    return { name, text };
  }

  rows<Row>(statement: SqlStatement, params: readonly unknown[]): Promise<Row[]> {
    return this.guard.read(() => this.statement(statement).all(...params) as Row[]);
  }

  async update(statement: SqlStatement, params: readonly unknown[]): Promise<void> {
    await this.guard.write(() => this.statement(statement).run(...params));
  }

  transaction<T>(work: () => Steps<T>): Promise<T> {
    return this.guard.write(() => this.inTransaction.immediate(work()) as T);
  }

  private perform(call: SqlCall): unknown {
    const statement = this.statement(call.statement);
    return call.want === 'rows' ? statement.all(...call.params) : statement.run(...call.params).changes;
  }

  private statement({ name }: SqlStatement): Statement {
    const statement = this.prepared.get(name);
    if (statement === undefined) throw new Error(`statement ${name} was not prepared on this database`);
    return statement;
  }
}
