/**
 * The PostgreSQL backend's tokens, in the `tokens` table of the same database as the
 * entries. Revoking deletes the row, so every server on the database refuses the token
 * from its next request on.
 */

import type { EngramError } from '../../memory/model/errors.js';
import { duplicateTokenError, type TokenRecord, type TokenStore } from '../../memory/port.js';
import { TOKEN_COLUMNS, type TokenRow, toTokenRecord } from '../sql-rows.js';
import { Batcher } from './batch.js';
import type { Statement } from './driver.js';
import type { Runner } from './transaction.js';

const SQL = {
  add: `INSERT INTO tokens (${TOKEN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  list: `SELECT ${TOKEN_COLUMNS} FROM tokens ORDER BY created, id`,
  // Several requests' tokens at once (a batch, batch.ts).
  findByHash: `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE hash = ANY ($1::text[])`,
  revoke: 'DELETE FROM tokens WHERE id = $1 RETURNING id',
  touch: 'UPDATE tokens SET last_used = $2 WHERE id = $1',
} as const;

function statement(key: keyof typeof SQL, ...values: unknown[]): Statement {
  return { name: `engram_tokens_${key}`, text: SQL[key], values };
}

/** The token's values in the order of TOKEN_COLUMNS. */
export function tokenValues(token: TokenRecord): unknown[] {
  const { id, user, label, readOnly, hash, created, lastUsed } = token;
  return [id, user, label, readOnly, hash, created, lastUsed ?? null];
}

export class PostgresTokenStore implements TokenStore {
  /** Live tokens by hash, looked up in batches: every request with a token asks. */
  private readonly byHash: Batcher<string, TokenRecord | undefined>;

  constructor(
    private readonly db: Runner,
    /** Lookups sent alone at once; more wait and go together. */
    alone: number,
  ) {
    this.byHash = new Batcher(async (hashes) => {
      const rows = await db.query<TokenRow>(statement('findByHash', hashes));
      const found = new Map(rows.map((row) => [row.hash, toTokenRecord(row)]));
      return (hash) => found.get(hash);
    }, alone);
  }

  /**
   * In a transaction, so that a connection lost at commit is reported rather than retried
   * into a duplicate. A taken id or hash is refused in the words every store uses.
   */
  async add(token: TokenRecord): Promise<void> {
    try {
      await this.db.transaction((db) => db.query(statement('add', ...tokenValues(token))));
    } catch (error) {
      throw duplicateTokenOf(error) ?? error;
    }
  }

  async list(): Promise<TokenRecord[]> {
    return (await this.db.query<TokenRow>(statement('list'))).map(toTokenRecord);
  }

  async findByHash(hash: string): Promise<TokenRecord | undefined> {
    return this.byHash.load(hash);
  }

  async revoke(id: string): Promise<boolean> {
    return this.db.transaction(async (db) => (await db.query(statement('revoke', id))).rows.length > 0);
  }

  async touch(id: string, at: number): Promise<void> {
    await this.db.query(statement('touch', id, at));
  }
}

/** unique_violation on the primary key or on the hash column: the duplicate-token error, else undefined. */
export function duplicateTokenOf(error: unknown): EngramError | undefined {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  if (code !== '23505') return undefined;
  if (constraint === 'tokens_pkey') return duplicateTokenError('id');
  if (constraint === 'tokens_hash_key') return duplicateTokenError('hash');
  return undefined;
}
