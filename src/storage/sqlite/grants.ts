/**
 * The SQLite backend's OAuth clients, grants and their secrets, in the `oauth_clients`,
 * `grants` and `grant_secrets` tables of the same database file as the entries. Every
 * step of more than one statement is one immediate transaction, so that processes
 * sharing the file see a grant with its code or not at all, and exactly one of them
 * redeems a code or refresh token first. A grant's secrets go with it (ON DELETE CASCADE).
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
import type { Database } from './driver.js';
import { isDuplicateKey } from './errors.js';
import type { Guard } from './guard.js';
import { type Prepared, prepareAll } from './statements.js';

/** SQLite has no boolean: read_only is stored as 0 or 1. */
export type SqliteGrantRow = GrantRow<number>;

export function fromSqliteGrantRow(row: SqliteGrantRow): GrantRecord {
  return toGrantRecord({ ...row, read_only: row.read_only === 1 });
}

export function sqliteGrantValues(grant: GrantRecord): unknown[] {
  return grantValues(grant, grant.readOnly ? 1 : 0);
}

const SQL = {
  addClient: `INSERT INTO oauth_clients (${CLIENT_COLUMNS}) VALUES (?, ?, ?, ?, ?)`,
  getClient: `SELECT ${CLIENT_COLUMNS} FROM oauth_clients WHERE id = ?`,
  countClients: 'SELECT count(*) AS count FROM oauth_clients',
  markClientShown: 'UPDATE oauth_clients SET shown = ? WHERE id = ?',
  removeUnusedClients: `DELETE FROM oauth_clients WHERE created < ? AND (shown IS NULL OR shown < ?)
       AND NOT EXISTS (SELECT 1 FROM grants WHERE grants.client_id = oauth_clients.id)`,
  removeOldestUnusedClients: `DELETE FROM oauth_clients WHERE id IN (SELECT id FROM oauth_clients
       WHERE (shown IS NULL OR shown < ?) AND NOT EXISTS (SELECT 1 FROM grants WHERE grants.client_id = oauth_clients.id)
       ORDER BY created, id LIMIT ?)`,
  addGrant: `INSERT INTO grants (${GRANT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  getGrant: `SELECT ${GRANT_COLUMNS} FROM grants WHERE id = ?`,
  listGrants: `SELECT ${GRANT_COLUMNS} FROM grants ORDER BY created, id`,
  touchGrant: 'UPDATE grants SET last_used = ? WHERE id = ?',
  // Its secrets go with it (ON DELETE CASCADE).
  revokeGrant: 'DELETE FROM grants WHERE id = ?',
  revokeGrantsOf: 'DELETE FROM grants WHERE user_id = ?',
  grantExists: 'SELECT 1 FROM grants WHERE id = ?',
  addSecret: `INSERT INTO grant_secrets (${SECRET_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  findSecret: `SELECT ${SECRET_COLUMNS} FROM grant_secrets WHERE hash = ?`,
  markUsed: 'UPDATE grant_secrets SET used = ? WHERE hash = ? AND used IS NULL',
  removeExpiredSecrets: 'DELETE FROM grant_secrets WHERE expires <= ?',
  removeGrantsWithoutSecrets:
    'DELETE FROM grants WHERE NOT EXISTS (SELECT 1 FROM grant_secrets WHERE grant_secrets.grant_id = grants.id)',
} as const;

export class SqliteGrantStore implements GrantStore {
  private readonly statements: Prepared<typeof SQL>;
  private readonly addGrantWithCode;
  private readonly addSecretsToGrant;
  private readonly redeemOnce;
  private readonly removeExpiredWithGrants;

  constructor(
    db: Database,
    private readonly guard: Guard,
  ) {
    const s = prepareAll(db, SQL);
    this.statements = s;
    this.addGrantWithCode = db.transaction((grant: GrantRecord, code: GrantSecretRecord) => {
      s.addGrant.run(...sqliteGrantValues(grant));
      s.addSecret.run(...secretValues(code));
    });
    this.addSecretsToGrant = db.transaction((grantId: string, secrets: readonly GrantSecretRecord[]) => {
      if (!s.grantExists.get(grantId)) return false;
      for (const secret of secrets) s.addSecret.run(...secretValues(secret));
      return true;
    });
    // Only the first of any number of redemptions finds `used` still NULL and changes the row.
    this.redeemOnce = db.transaction((hash: string, at: number): Redemption | undefined => {
      const first = s.markUsed.run(at, hash).changes === 1;
      const row = s.findSecret.get(hash) as SecretRow | undefined;
      return row ? { secret: toSecretRecord(row), first } : undefined;
    });
    this.removeExpiredWithGrants = db.transaction(
      (now: number): ExpiredRemoval => ({
        secrets: s.removeExpiredSecrets.run(now).changes,
        grants: s.removeGrantsWithoutSecrets.run().changes,
      }),
    );
  }

  async addClient(client: ClientRecord): Promise<void> {
    await this.guard.write(() => {
      try {
        this.statements.addClient.run(...clientValues(client));
      } catch (error) {
        throw isDuplicateKey(error) ? duplicateKeyError('client') : error;
      }
    });
  }

  async getClient(id: string): Promise<ClientRecord | undefined> {
    return this.guard.read(() => {
      const row = this.statements.getClient.get(id) as ClientRow | undefined;
      return row ? toClientRecord(row) : undefined;
    });
  }

  async countClients(): Promise<number> {
    return this.guard.read(() => (this.statements.countClients.get() as { count: number }).count);
  }

  async markClientShown(id: string, at: number): Promise<void> {
    await this.guard.write(() => this.statements.markClientShown.run(at, id));
  }

  async removeUnusedClients(registeredBefore: number, shownBefore: number): Promise<number> {
    return this.guard.write(() => this.statements.removeUnusedClients.run(registeredBefore, shownBefore).changes);
  }

  async removeOldestUnusedClients(count: number, shownBefore: number): Promise<number> {
    return this.guard.write(
      () => this.statements.removeOldestUnusedClients.run(shownBefore, Math.max(0, count)).changes,
    );
  }

  /** A taken grant id or code hash is refused, and neither is kept. */
  async addGrant(grant: GrantRecord, code: GrantSecretRecord): Promise<void> {
    await this.guard.write(() => {
      try {
        this.addGrantWithCode.immediate(grant, code);
      } catch (error) {
        throw isDuplicateKey(error) ? duplicateKeyError('grant') : error;
      }
    });
  }

  async getGrant(id: string): Promise<GrantRecord | undefined> {
    return this.guard.read(() => {
      const row = this.statements.getGrant.get(id) as SqliteGrantRow | undefined;
      return row ? fromSqliteGrantRow(row) : undefined;
    });
  }

  async listGrants(): Promise<GrantRecord[]> {
    return this.guard.read(() => (this.statements.listGrants.all() as SqliteGrantRow[]).map(fromSqliteGrantRow));
  }

  async touchGrant(id: string, at: number): Promise<void> {
    await this.guard.write(() => this.statements.touchGrant.run(at, id));
  }

  async revokeGrant(id: string): Promise<boolean> {
    return this.guard.write(() => this.statements.revokeGrant.run(id).changes > 0);
  }

  async revokeGrantsOf(user: string): Promise<number> {
    return this.guard.write(() => this.statements.revokeGrantsOf.run(user).changes);
  }

  /** The grant is looked up in the same transaction as the secrets are added, so a revoke cannot come between. */
  async addSecrets(grantId: string, secrets: readonly GrantSecretRecord[]): Promise<boolean> {
    return this.guard.write(() => {
      try {
        return this.addSecretsToGrant.immediate(grantId, secrets);
      } catch (error) {
        throw isDuplicateKey(error) ? duplicateKeyError('grant') : error;
      }
    });
  }

  async findSecret(hash: string): Promise<GrantSecretRecord | undefined> {
    return this.guard.read(() => {
      const row = this.statements.findSecret.get(hash) as SecretRow | undefined;
      return row ? toSecretRecord(row) : undefined;
    });
  }

  async redeem(hash: string, at: number): Promise<Redemption | undefined> {
    return this.guard.write(() => this.redeemOnce.immediate(hash, at));
  }

  /** One immediate transaction: no process sees the secrets gone and their grant still there. */
  async removeExpired(now: number): Promise<ExpiredRemoval> {
    return this.guard.write(() => this.removeExpiredWithGrants.immediate(now));
  }
}
