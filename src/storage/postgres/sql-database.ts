/**
 * The PostgreSQL side of the access tables' one SQL implementation (storage/sql): each
 * statement named, so that a connection prepares it once, its `?` numbered `$1`, `$2`…;
 * a read or an update that may be repeated goes to any connection of the pool and is
 * tried again while the database is unreachable (transaction.ts); a transaction's steps
 * are awaited one by one on the connection holding it.
 */

import type { SqlDatabase, SqlDialect, SqlStatement } from '../sql/database.js';
import { runStepsAsync, type Steps } from '../sql/steps.js';
import { isDuplicateKey } from './errors.js';
import { CHANGE_FLOOR } from './statements.js';
import type { Runner } from './transaction.js';

export const postgresDialect: SqlDialect = {
  boolean: (value) => value,
  byCodePoint: ' COLLATE "C"',
  lockShared: ' FOR SHARE',
  lockSkippingLocked: ' FOR UPDATE SKIP LOCKED',
  changeFloor: CHANGE_FLOOR,
  duplicateKeyOf(error) {
    if (!isDuplicateKey(error)) return undefined;
    const constraint = (error as { constraint?: unknown }).constraint;
    return typeof constraint === 'string' && constraint.endsWith('_pkey') ? 'primary' : 'unique';
  },
};

export class PostgresSqlDatabase implements SqlDatabase {
  readonly dialect = postgresDialect;

  constructor(private readonly db: Runner) {}

  prepare(name: string, text: string): SqlStatement {
    let number = 0;
    return { name: `engram_access_${name}`, text: text.replace(/\?/g, () => `$${++number}`) };
  }

  rows<Row>(statement: SqlStatement, params: readonly unknown[]): Promise<Row[]> {
    return this.db.query<Row>({ ...statement, values: params });
  }

  async update(statement: SqlStatement, params: readonly unknown[]): Promise<void> {
    await this.db.query({ ...statement, values: params });
  }

  transaction<T>(work: () => Steps<T>): Promise<T> {
    return this.db.transaction((connection) =>
      runStepsAsync(work(), async ({ want, statement, params }) => {
        const result = await connection.query({ ...statement, values: params });
        return want === 'rows' ? result.rows : (result.rowCount ?? 0);
      }),
    );
  }
}
