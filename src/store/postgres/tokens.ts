/**
 * The PostgreSQL backend's tokens, in the `tokens` table of the same database as the
 * entries. Revoking deletes the row, so every server on the database refuses the token
 * from its next request on.
 */

import type { TokenRecord, TokenStore } from '../../core/store.js';
import type { Statement } from './pool.js';
import type { Runner } from './transaction.js';

interface TokenRow {
  id: string;
  user_id: string;
  label: string;
  read_only: boolean;
  hash: string;
  created: number;
  last_used: number | null;
}

const COLUMNS = 'id, user_id, label, read_only, hash, created, last_used';

const SQL = {
  add: `INSERT INTO tokens (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  list: `SELECT ${COLUMNS} FROM tokens ORDER BY created, id`,
  findByHash: `SELECT ${COLUMNS} FROM tokens WHERE hash = $1`,
  revoke: 'DELETE FROM tokens WHERE id = $1 RETURNING id',
  touch: 'UPDATE tokens SET last_used = $2 WHERE id = $1',
} as const;

function statement(key: keyof typeof SQL, ...values: unknown[]): Statement {
  return { name: `engram_tokens_${key}`, text: SQL[key], values };
}

function toRecord(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    user: row.user_id,
    label: row.label,
    readOnly: row.read_only,
    hash: row.hash,
    created: row.created,
    lastUsed: row.last_used ?? undefined,
  };
}

export class PostgresTokenStore implements TokenStore {
  constructor(private readonly db: Runner) {}

  /** In a transaction, so that a connection lost at commit is reported rather than retried into a duplicate. */
  async add(token: TokenRecord): Promise<void> {
    const { id, user, label, readOnly, hash, created, lastUsed } = token;
    await this.db.transaction((db) =>
      db.query(statement('add', id, user, label, readOnly, hash, created, lastUsed ?? null)),
    );
  }

  async list(): Promise<TokenRecord[]> {
    return (await this.db.query<TokenRow>(statement('list'))).map(toRecord);
  }

  async findByHash(hash: string): Promise<TokenRecord | undefined> {
    const [row] = await this.db.query<TokenRow>(statement('findByHash', hash));
    return row ? toRecord(row) : undefined;
  }

  async revoke(id: string): Promise<boolean> {
    return this.db.transaction(async (db) => (await db.query(statement('revoke', id))).rows.length > 0);
  }

  async touch(id: string, at: number): Promise<void> {
    await this.db.query(statement('touch', id, at));
  }
}
