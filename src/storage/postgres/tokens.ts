/**
 * The PostgreSQL backend's tokens: the one SQL implementation (sql/tokens.ts), with the
 * lookup by hash batched: every request with a token asks, and many at once go to the
 * database as one statement (batch.ts).
 */

import type { TokenRecord } from '../../access/tokens/port.js';
import { SqlTokenStore } from '../sql/tokens.js';
import { TOKEN_COLUMNS, type TokenRow, toTokenRecord } from '../sql-rows.js';
import { Batcher } from './batch.js';
import type { PostgresSqlDatabase } from './sql-database.js';

export class PostgresTokenStore extends SqlTokenStore {
  /** Live tokens by hash, looked up in batches. */
  private readonly byHash: Batcher<string, TokenRecord | undefined>;

  constructor(
    db: PostgresSqlDatabase,
    /** Lookups sent alone at once; more wait and go together. */
    alone: number,
  ) {
    super(db);
    const findByHashes = db.prepare(
      'tokens_find_by_hashes',
      `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE hash = ANY (?::text[])`,
    );
    this.byHash = new Batcher(async (hashes) => {
      const rows = await db.rows<TokenRow>(findByHashes, [hashes]);
      const found = new Map(rows.map((row) => [row.hash, toTokenRecord(row)]));
      return (hash) => found.get(hash);
    }, alone);
  }

  override async findByHash(hash: string): Promise<TokenRecord | undefined> {
    return this.byHash.load(hash);
  }
}
