/**
 * The OAuth port (access/oauth/port.ts) for both SQL backends, in the `oauth_clients`,
 * `grants` and `grant_secrets` tables of the same database as the entries. Every step of
 * more than one statement is one transaction, so that processes sharing the database see
 * a grant with its code or not at all. Secrets are added under a lock on their grant
 * (shared, in PostgreSQL; SQLite's write transactions exclude each other), so a revoke
 * waits for them and takes them along (ON DELETE CASCADE). A grant is added under a lock
 * on its user's account in the same way, so removing the account (accounts.ts) waits for
 * it, and revoking the user's grants afterwards finds it. Of any number of processes
 * consuming one code or refresh token, exactly one sees it unused: UPDATE … WHERE used IS
 * NULL changes the row once.
 */

import type {
  ClientRecord,
  ExpiredRemoval,
  GrantRecord,
  GrantSecretRecord,
  OAuthStore,
  Redemption,
} from '../../access/oauth/port.js';
import { duplicateKeyError } from '../../access/port.js';
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
import type { SqlDatabase } from './database.js';
import { changes, first, rows } from './steps.js';

type StoredGrantRow = GrantRow<boolean | number>;

export class SqlOAuthStore implements OAuthStore {
  private readonly sql;

  constructor(private readonly db: SqlDatabase) {
    const prepare = (name: string, text: string) => db.prepare(`oauth_${name}`, text);
    const { byCodePoint, lockShared, lockSkippingLocked } = db.dialect;
    const unused = '(c.shown IS NULL OR c.shown < ?) AND NOT EXISTS (SELECT 1 FROM grants g WHERE g.client_id = c.id)';
    this.sql = {
      addClient: prepare('add_client', `INSERT INTO oauth_clients (${CLIENT_COLUMNS}) VALUES (?, ?, ?, ?, ?)`),
      getClient: prepare('get_client', `SELECT ${CLIENT_COLUMNS} FROM oauth_clients WHERE id = ?`),
      countClients: prepare('count_clients', 'SELECT CAST(count(*) AS INTEGER) AS count FROM oauth_clients'),
      markClientShown: prepare('mark_client_shown', 'UPDATE oauth_clients SET shown = ? WHERE id = ?'),
      removeUnusedClients: prepare(
        'remove_unused_clients',
        `DELETE FROM oauth_clients WHERE id IN (SELECT c.id FROM oauth_clients c WHERE c.created < ? AND ${unused})`,
      ),
      // A client another registration is removing is left to it (PostgreSQL: SKIP LOCKED).
      removeOldestUnusedClients: prepare(
        'remove_oldest_unused_clients',
        `DELETE FROM oauth_clients WHERE id IN (SELECT c.id FROM oauth_clients c WHERE ${unused}
           ORDER BY c.created, c.id${byCodePoint} LIMIT ?${lockSkippingLocked})`,
      ),
      lockAccount: prepare('lock_account', `SELECT 1 AS found FROM accounts WHERE user_id = ?${lockShared}`),
      addGrant: prepare('add_grant', `INSERT INTO grants (${GRANT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      getGrant: prepare('get_grant', `SELECT ${GRANT_COLUMNS} FROM grants WHERE id = ?`),
      listGrants: prepare('list_grants', `SELECT ${GRANT_COLUMNS} FROM grants ORDER BY created, id${byCodePoint}`),
      touchGrant: prepare('touch_grant', 'UPDATE grants SET last_used = ? WHERE id = ?'),
      setGrantReview: prepare('set_grant_review', 'UPDATE grants SET review = ? WHERE id = ?'),
      // Its secrets go with it (ON DELETE CASCADE).
      revokeGrant: prepare('revoke_grant', 'DELETE FROM grants WHERE id = ?'),
      revokeGrantsOf: prepare('revoke_grants_of', 'DELETE FROM grants WHERE user_id = ?'),
      lockGrant: prepare('lock_grant', `SELECT 1 AS found FROM grants WHERE id = ?${lockShared}`),
      addSecret: prepare('add_secret', `INSERT INTO grant_secrets (${SECRET_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`),
      findSecret: prepare('find_secret', `SELECT ${SECRET_COLUMNS} FROM grant_secrets WHERE hash = ?`),
      markUsed: prepare(
        'mark_used',
        `UPDATE grant_secrets SET used = ? WHERE hash = ? AND used IS NULL RETURNING ${SECRET_COLUMNS}`,
      ),
      removeExpiredSecrets: prepare('remove_expired_secrets', 'DELETE FROM grant_secrets WHERE expires <= ?'),
      // A grant that saveSecrets holds (PostgreSQL: FOR SHARE) is skipped: its new secrets are not yet visible here.
      removeGrantsWithoutSecrets: prepare(
        'remove_grants_without_secrets',
        `DELETE FROM grants WHERE id IN (SELECT g.id FROM grants g
           WHERE NOT EXISTS (SELECT 1 FROM grant_secrets s WHERE s.grant_id = g.id)${lockSkippingLocked})`,
      ),
    };
  }

  async saveClient(client: ClientRecord): Promise<void> {
    const { addClient } = this.sql;
    try {
      await this.db.transaction(() => changes(addClient, ...clientValues(client)));
    } catch (error) {
      throw this.db.dialect.duplicateKeyOf(error) ? duplicateKeyError('client') : error;
    }
  }

  async findClient(id: string): Promise<ClientRecord | undefined> {
    const [row] = await this.db.rows<ClientRow>(this.sql.getClient, [id]);
    return row ? toClientRecord(row) : undefined;
  }

  async countClients(): Promise<number> {
    const [row] = await this.db.rows<{ count: number }>(this.sql.countClients, []);
    return row?.count ?? 0;
  }

  async markClientShown(id: string, at: number): Promise<void> {
    await this.db.update(this.sql.markClientShown, [at, id]);
  }

  async removeUnusedClients(registeredBefore: number, shownBefore: number): Promise<number> {
    const { removeUnusedClients } = this.sql;
    return this.db.transaction(() => changes(removeUnusedClients, registeredBefore, shownBefore));
  }

  async removeOldestUnusedClients(count: number, shownBefore: number): Promise<number> {
    const { removeOldestUnusedClients } = this.sql;
    return this.db.transaction(() => changes(removeOldestUnusedClients, shownBefore, Math.max(0, count)));
  }

  /**
   * The user's account is looked up (and locked) in the same transaction as the grant is
   * added, so a removal cannot come between. A taken grant id or code hash is refused, and
   * neither is kept.
   */
  async saveGrant(grant: GrantRecord, code: GrantSecretRecord): Promise<boolean> {
    const { lockAccount, addGrant, addSecret } = this.sql;
    const values = grantValues(grant, this.db.dialect.boolean);
    try {
      return await this.db.transaction(function* () {
        if ((yield* rows(lockAccount, grant.user)).length === 0) return false;
        yield* changes(addGrant, ...values);
        yield* changes(addSecret, ...secretValues(code));
        return true;
      });
    } catch (error) {
      throw this.db.dialect.duplicateKeyOf(error) ? duplicateKeyError('grant') : error;
    }
  }

  async findGrant(id: string): Promise<GrantRecord | undefined> {
    const [row] = await this.db.rows<StoredGrantRow>(this.sql.getGrant, [id]);
    return row ? toGrantRecord(row) : undefined;
  }

  async listGrants(): Promise<GrantRecord[]> {
    return (await this.db.rows<StoredGrantRow>(this.sql.listGrants, [])).map(toGrantRecord);
  }

  async touchGrant(id: string, at: number): Promise<void> {
    await this.db.update(this.sql.touchGrant, [at, id]);
  }

  async setGrantReview(id: string, review: boolean): Promise<boolean> {
    const { setGrantReview } = this.sql;
    const value = this.db.dialect.boolean(review);
    return (await this.db.transaction(() => changes(setGrantReview, value, id))) > 0;
  }

  async revokeByGrantId(id: string): Promise<boolean> {
    const { revokeGrant } = this.sql;
    return (await this.db.transaction(() => changes(revokeGrant, id))) > 0;
  }

  async revokeByUser(user: string): Promise<number> {
    const { revokeGrantsOf } = this.sql;
    return this.db.transaction(() => changes(revokeGrantsOf, user));
  }

  /** The grant is looked up (and locked) in the same transaction as the secrets are added, so a revoke cannot come between. */
  async saveSecrets(grantId: string, secrets: readonly GrantSecretRecord[]): Promise<boolean> {
    const { lockGrant, addSecret } = this.sql;
    try {
      return await this.db.transaction(function* () {
        if ((yield* rows(lockGrant, grantId)).length === 0) return false;
        for (const secret of secrets) yield* changes(addSecret, ...secretValues(secret));
        return true;
      });
    } catch (error) {
      throw this.db.dialect.duplicateKeyOf(error) ? duplicateKeyError('grant') : error;
    }
  }

  async findSecret(hash: string): Promise<GrantSecretRecord | undefined> {
    const [row] = await this.db.rows<SecretRow>(this.sql.findSecret, [hash]);
    return row ? toSecretRecord(row) : undefined;
  }

  /** In a transaction: a commit cut off is reported, never retried into a second, "reused" redemption. */
  async consume(hash: string, at: number): Promise<Redemption | undefined> {
    const { markUsed, findSecret } = this.sql;
    return this.db.transaction(function* () {
      const used = yield* first<SecretRow>(markUsed, at, hash);
      if (used) return { secret: toSecretRecord(used), first: true };
      const row = yield* first<SecretRow>(findSecret, hash);
      return row ? { secret: toSecretRecord(row), first: false } : undefined;
    });
  }

  /** One transaction: the expired secrets, then the grants left without any. */
  async removeExpired(now: number): Promise<ExpiredRemoval> {
    const { removeExpiredSecrets, removeGrantsWithoutSecrets } = this.sql;
    return this.db.transaction(function* () {
      const secrets = yield* changes(removeExpiredSecrets, now);
      return { secrets, grants: yield* changes(removeGrantsWithoutSecrets) };
    });
  }
}
