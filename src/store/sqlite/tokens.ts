/**
 * The SQLite backend's tokens, in the `tokens` table of the same database file as the
 * entries. Revoking deletes the row, so every process sharing the file refuses the
 * token from its next request on.
 */

import type Database from 'better-sqlite3';
import type { TokenRecord, TokenStore } from '../../core/store.js';

interface TokenRow {
  id: string;
  user_id: string;
  label: string;
  read_only: number;
  hash: string;
  created: number;
  last_used: number | null;
}

const COLUMNS = 'id, user_id, label, read_only, hash, created, last_used';

function toRecord(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    user: row.user_id,
    label: row.label,
    readOnly: row.read_only === 1,
    hash: row.hash,
    created: row.created,
    lastUsed: row.last_used ?? undefined,
  };
}

export class SqliteTokenStore implements TokenStore {
  private readonly statements;

  constructor(db: Database.Database) {
    this.statements = {
      add: db.prepare(
        `INSERT INTO tokens (${COLUMNS}) VALUES (@id, @user, @label, @readOnly, @hash, @created, @lastUsed)`,
      ),
      list: db.prepare(`SELECT ${COLUMNS} FROM tokens ORDER BY created, id`),
      findByHash: db.prepare(`SELECT ${COLUMNS} FROM tokens WHERE hash = ?`),
      revoke: db.prepare('DELETE FROM tokens WHERE id = ?'),
      touch: db.prepare('UPDATE tokens SET last_used = @at WHERE id = @id'),
    };
  }

  async add(token: TokenRecord): Promise<void> {
    this.statements.add.run({ ...token, readOnly: token.readOnly ? 1 : 0, lastUsed: token.lastUsed ?? null });
  }

  async list(): Promise<TokenRecord[]> {
    return (this.statements.list.all() as TokenRow[]).map(toRecord);
  }

  async findByHash(hash: string): Promise<TokenRecord | undefined> {
    const row = this.statements.findByHash.get(hash) as TokenRow | undefined;
    return row ? toRecord(row) : undefined;
  }

  async revoke(id: string): Promise<boolean> {
    return this.statements.revoke.run(id).changes > 0;
  }

  async touch(id: string, at: number): Promise<void> {
    this.statements.touch.run({ id, at });
  }
}
