/**
 * The SQLite backend's tokens, in the `tokens` table of the same database file as the
 * entries. Revoking deletes the row, so every process sharing the file refuses the
 * token from its next request on. Statements run through the store's guard, as entries do.
 */

import type { EngramError } from '../../memory/model/errors.js';
import { duplicateTokenError, type TokenRecord, type TokenStore } from '../../memory/port.js';
import { TOKEN_COLUMNS, type TokenRow, toTokenRecord } from '../sql-rows.js';
import type { Database } from './driver.js';
import type { Guard } from './guard.js';

/** SQLite has no boolean: read_only is stored as 0 or 1. */
export type SqliteTokenRow = TokenRow<number>;

export function fromSqliteTokenRow(row: SqliteTokenRow): TokenRecord {
  return toTokenRecord({ ...row, read_only: row.read_only === 1 });
}

/** The named parameters a token is written with (@id, @user, @label, @readOnly, @hash, @created, @lastUsed). */
export function toSqliteTokenParameters(token: TokenRecord) {
  return { ...token, readOnly: token.readOnly ? 1 : 0, lastUsed: token.lastUsed ?? null };
}

export class SqliteTokenStore implements TokenStore {
  private readonly statements;

  constructor(
    db: Database,
    private readonly guard: Guard,
  ) {
    this.statements = {
      add: db.prepare(
        `INSERT INTO tokens (${TOKEN_COLUMNS}) VALUES (@id, @user, @label, @readOnly, @hash, @created, @lastUsed)`,
      ),
      list: db.prepare(`SELECT ${TOKEN_COLUMNS} FROM tokens ORDER BY created, id`),
      findByHash: db.prepare(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE hash = ?`),
      revoke: db.prepare('DELETE FROM tokens WHERE id = ?'),
      touch: db.prepare('UPDATE tokens SET last_used = @at WHERE id = @id'),
    };
  }

  /** A taken id (the primary key) or hash (a unique column) is refused in the words every store uses. */
  async add(token: TokenRecord): Promise<void> {
    await this.guard.write(() => {
      try {
        this.statements.add.run(toSqliteTokenParameters(token));
      } catch (error) {
        throw duplicateTokenOf(error) ?? error;
      }
    });
  }

  async list(): Promise<TokenRecord[]> {
    return this.guard.read(() => (this.statements.list.all() as SqliteTokenRow[]).map(fromSqliteTokenRow));
  }

  async findByHash(hash: string): Promise<TokenRecord | undefined> {
    return this.guard.read(() => {
      const row = this.statements.findByHash.get(hash) as SqliteTokenRow | undefined;
      return row ? fromSqliteTokenRow(row) : undefined;
    });
  }

  async revoke(id: string): Promise<boolean> {
    return this.guard.write(() => this.statements.revoke.run(id).changes > 0);
  }

  async touch(id: string, at: number): Promise<void> {
    await this.guard.write(() => this.statements.touch.run({ id, at }));
  }
}

/** The duplicate-token error for SQLite's constraint failure on tokens.id or tokens.hash, else undefined. */
export function duplicateTokenOf(error: unknown): EngramError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return duplicateTokenError('id');
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' && /tokens\.hash/.test((error as Error).message)) {
    return duplicateTokenError('hash');
  }
  return undefined;
}
