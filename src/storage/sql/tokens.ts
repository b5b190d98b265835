/**
 * The tokens port (access/tokens/port.ts) for both SQL backends, in the `tokens` table of
 * the same database as the entries. Revoking deletes the row, so every process sharing
 * the database refuses the token from its next request on.
 */

import { duplicateTokenError, type TokenRecord, type TokenStore } from '../../access/tokens/port.js';
import { TOKEN_COLUMNS, type TokenRow, toTokenRecord } from '../sql-rows.js';
import type { SqlDatabase, SqlDialect } from './database.js';
import { changes } from './steps.js';

export class SqlTokenStore implements TokenStore {
  private readonly sql;

  constructor(protected readonly db: SqlDatabase) {
    const prepare = (name: string, text: string) => db.prepare(`tokens_${name}`, text);
    this.sql = {
      add: prepare('add', `INSERT INTO tokens (${TOKEN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
      list: prepare('list', `SELECT ${TOKEN_COLUMNS} FROM tokens ORDER BY created, id`),
      listOf: prepare('list_of', `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE user_id = ? ORDER BY created, id`),
      findByHash: prepare('find_by_hash', `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE hash = ?`),
      revoke: prepare('revoke', 'DELETE FROM tokens WHERE id = ?'),
      revokeAllOf: prepare('revoke_all_of', 'DELETE FROM tokens WHERE user_id = ?'),
      touch: prepare('touch', 'UPDATE tokens SET last_used = ? WHERE id = ?'),
      setReview: prepare('set_review', 'UPDATE tokens SET review = ? WHERE id = ?'),
    };
  }

  /** In a transaction, so that a commit cut off is reported rather than retried into a duplicate. */
  async add(token: TokenRecord): Promise<void> {
    const { add } = this.sql;
    try {
      await this.db.transaction(() => changes(add, ...tokenValues(token, this.db.dialect)));
    } catch (error) {
      throw duplicateTokenOf(error, this.db.dialect) ?? error;
    }
  }

  async list(user?: string): Promise<TokenRecord[]> {
    const rows =
      user === undefined
        ? await this.db.rows<TokenRow<boolean | number>>(this.sql.list, [])
        : await this.db.rows<TokenRow<boolean | number>>(this.sql.listOf, [user]);
    return rows.map(toTokenRecord);
  }

  async findByHash(hash: string): Promise<TokenRecord | undefined> {
    const [row] = await this.db.rows<TokenRow<boolean | number>>(this.sql.findByHash, [hash]);
    return row ? toTokenRecord(row) : undefined;
  }

  async revoke(id: string): Promise<boolean> {
    const { revoke } = this.sql;
    return (await this.db.transaction(() => changes(revoke, id))) > 0;
  }

  async revokeAllOf(user: string): Promise<number> {
    const { revokeAllOf } = this.sql;
    return this.db.transaction(() => changes(revokeAllOf, user));
  }

  async touch(id: string, at: number): Promise<void> {
    await this.db.update(this.sql.touch, [at, id]);
  }

  async setReview(id: string, review: boolean): Promise<boolean> {
    const { setReview } = this.sql;
    const value = this.db.dialect.boolean(review);
    return (await this.db.transaction(() => changes(setReview, value, id))) > 0;
  }
}

/** The token's values in the order of TOKEN_COLUMNS, read_only and review as the dialect keeps a boolean. */
export function tokenValues(token: TokenRecord, dialect: SqlDialect): unknown[] {
  const { id, user, label, readOnly, hash, created, lastUsed, review } = token;
  return [id, user, label, dialect.boolean(readOnly), hash, created, lastUsed ?? null, dialect.boolean(review)];
}

/** The duplicate-token error for a taken id (the primary key) or hash (a unique column), else undefined. */
export function duplicateTokenOf(
  error: unknown,
  dialect: SqlDialect,
): ReturnType<typeof duplicateTokenError> | undefined {
  const key = dialect.duplicateKeyOf(error);
  return key === undefined ? undefined : duplicateTokenError(key === 'primary' ? 'id' : 'hash');
}
