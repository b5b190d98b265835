/**
 * The PostgreSQL backend's OAuth clients, grants and their secrets, in the
 * `oauth_clients`, `grants` and `grant_secrets` tables of the same database as the
 * entries. A grant is added with its code in one transaction; secrets are added under a
 * share lock on their grant, so a revoke waits for them and takes them along (ON DELETE
 * CASCADE); and of any number of servers redeeming one code or refresh token, exactly
 * one sees it unused (UPDATE … WHERE used IS NULL takes the row's lock and rechecks).
 */

import {
  type ClientRecord,
  duplicateKeyError,
  type ExpiredRemoval,
  type GrantRecord,
  type GrantSecretRecord,
  type GrantStore,
  type Redemption,
} from '../../access/port.js';
import {
  CLIENT_COLUMNS,
  type ClientRow,
  clientValues,
  GRANT_COLUMNS,
  type GrantRow,
  grantValues,
  SECRET_COLUMNS,
  type SecretRow,
  secretValues,
  toClientRecord,
  toGrantRecord,
  toSecretRecord,
} from '../sql-account-rows.js';
import type { Queryable, Statement } from './driver.js';
import { isDuplicateKey } from './errors.js';
import { countDeleted } from './statements.js';
import type { Runner } from './transaction.js';

const SQL = {
  addClient: `INSERT INTO oauth_clients (${CLIENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5)`,
  getClient: `SELECT ${CLIENT_COLUMNS} FROM oauth_clients WHERE id = $1`,
  countClients: 'SELECT count(*)::integer AS count FROM oauth_clients',
  markClientShown: 'UPDATE oauth_clients SET shown = $2 WHERE id = $1',
  removeUnusedClients:
    countDeleted(`DELETE FROM oauth_clients c WHERE c.created < $1 AND (c.shown IS NULL OR c.shown < $2)
       AND NOT EXISTS (SELECT 1 FROM grants g WHERE g.client_id = c.id)`),
  // A client another registration is removing (FOR UPDATE SKIP LOCKED) is left to it.
  removeOldestUnusedClients: countDeleted(`DELETE FROM oauth_clients WHERE id IN (SELECT c.id FROM oauth_clients c
       WHERE (c.shown IS NULL OR c.shown < $2) AND NOT EXISTS (SELECT 1 FROM grants g WHERE g.client_id = c.id)
       ORDER BY c.created, c.id COLLATE "C" LIMIT $1 FOR UPDATE SKIP LOCKED)`),
  addGrant: `INSERT INTO grants (${GRANT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  getGrant: `SELECT ${GRANT_COLUMNS} FROM grants WHERE id = $1`,
  listGrants: `SELECT ${GRANT_COLUMNS} FROM grants ORDER BY created, id COLLATE "C"`,
  touchGrant: 'UPDATE grants SET last_used = $2 WHERE id = $1',
  // Its secrets go with it (ON DELETE CASCADE).
  revokeGrant: 'DELETE FROM grants WHERE id = $1 RETURNING id',
  revokeGrantsOf: countDeleted('DELETE FROM grants WHERE user_id = $1'),
  lockGrant: 'SELECT 1 FROM grants WHERE id = $1 FOR SHARE',
  addSecret: `INSERT INTO grant_secrets (${SECRET_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  findSecret: `SELECT ${SECRET_COLUMNS} FROM grant_secrets WHERE hash = $1`,
  markUsed: `UPDATE grant_secrets SET used = $2 WHERE hash = $1 AND used IS NULL RETURNING ${SECRET_COLUMNS}`,
  removeExpiredSecrets: countDeleted('DELETE FROM grant_secrets WHERE expires <= $1'),
  // A grant that addSecrets holds (FOR SHARE) is skipped: its new secrets are not yet visible here.
  removeGrantsWithoutSecrets: countDeleted(`DELETE FROM grants WHERE id IN (SELECT g.id FROM grants g
       WHERE NOT EXISTS (SELECT 1 FROM grant_secrets s WHERE s.grant_id = g.id) FOR UPDATE SKIP LOCKED)`),
} as const;

function statement(key: keyof typeof SQL, ...values: unknown[]): Statement {
  return { name: `engram_grants_${key}`, text: SQL[key], values };
}

export class PostgresGrantStore implements GrantStore {
  constructor(private readonly db: Runner) {}

  async addClient(client: ClientRecord): Promise<void> {
    try {
      await this.db.transaction((db) => db.query(statement('addClient', ...clientValues(client))));
    } catch (error) {
      throw isDuplicateKey(error) ? duplicateKeyError('client') : error;
    }
  }

  async getClient(id: string): Promise<ClientRecord | undefined> {
    const [row] = await this.db.query<ClientRow>(statement('getClient', id));
    return row ? toClientRecord(row) : undefined;
  }

  async countClients(): Promise<number> {
    const [row] = await this.db.query<{ count: number }>(statement('countClients'));
    return row?.count ?? 0;
  }

  async markClientShown(id: string, at: number): Promise<void> {
    await this.db.query(statement('markClientShown', id, at));
  }

  async removeUnusedClients(registeredBefore: number, shownBefore: number): Promise<number> {
    return this.db.transaction(async (db) =>
      count(db, statement('removeUnusedClients', registeredBefore, shownBefore)),
    );
  }

  async removeOldestUnusedClients(limit: number, shownBefore: number): Promise<number> {
    return this.db.transaction(async (db) =>
      count(db, statement('removeOldestUnusedClients', Math.max(0, limit), shownBefore)),
    );
  }

  /** A taken grant id or code hash is refused, and neither is kept. */
  async addGrant(grant: GrantRecord, code: GrantSecretRecord): Promise<void> {
    try {
      await this.db.transaction(async (db) => {
        await db.query(statement('addGrant', ...grantValues(grant)));
        await db.query(statement('addSecret', ...secretValues(code)));
      });
    } catch (error) {
      throw isDuplicateKey(error) ? duplicateKeyError('grant') : error;
    }
  }

  async getGrant(id: string): Promise<GrantRecord | undefined> {
    const [row] = await this.db.query<GrantRow>(statement('getGrant', id));
    return row ? toGrantRecord(row) : undefined;
  }

  async listGrants(): Promise<GrantRecord[]> {
    return (await this.db.query<GrantRow>(statement('listGrants'))).map(toGrantRecord);
  }

  async touchGrant(id: string, at: number): Promise<void> {
    await this.db.query(statement('touchGrant', id, at));
  }

  async revokeGrant(id: string): Promise<boolean> {
    return this.db.transaction(async (db) => (await db.query(statement('revokeGrant', id))).rows.length > 0);
  }

  async revokeGrantsOf(user: string): Promise<number> {
    return this.db.transaction(
      async (db) => (await db.query<{ count: number }>(statement('revokeGrantsOf', user))).rows[0]?.count ?? 0,
    );
  }

  async addSecrets(grantId: string, secrets: readonly GrantSecretRecord[]): Promise<boolean> {
    try {
      return await this.db.transaction(async (db) => {
        if ((await db.query(statement('lockGrant', grantId))).rows.length === 0) return false;
        for (const secret of secrets) await db.query(statement('addSecret', ...secretValues(secret)));
        return true;
      });
    } catch (error) {
      throw isDuplicateKey(error) ? duplicateKeyError('grant') : error;
    }
  }

  async findSecret(hash: string): Promise<GrantSecretRecord | undefined> {
    const [row] = await this.db.query<SecretRow>(statement('findSecret', hash));
    return row ? toSecretRecord(row) : undefined;
  }

  /** In a transaction: a connection lost at commit is reported, never retried into a second, "reused" redemption. */
  async redeem(hash: string, at: number): Promise<Redemption | undefined> {
    return this.db.transaction(async (db) => {
      const used = await first<SecretRow>(db, statement('markUsed', hash, at));
      if (used) return { secret: toSecretRecord(used), first: true };
      const row = await first<SecretRow>(db, statement('findSecret', hash));
      return row ? { secret: toSecretRecord(row), first: false } : undefined;
    });
  }

  /** One transaction: the expired secrets, then the grants left without any. */
  async removeExpired(now: number): Promise<ExpiredRemoval> {
    return this.db.transaction(async (db) => {
      const secrets = await count(db, statement('removeExpiredSecrets', now));
      return { secrets, grants: await count(db, statement('removeGrantsWithoutSecrets')) };
    });
  }
}

async function count(db: Queryable, query: Statement): Promise<number> {
  return (await first<{ count: number }>(db, query))?.count ?? 0;
}

async function first<Row>(db: Queryable, query: Statement): Promise<Row | undefined> {
  return (await db.query<Row>(query)).rows[0];
}
