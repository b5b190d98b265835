/**
 * The PostgreSQL backend's accounts and browser sessions, in the `accounts` and
 * `sessions` tables of the same database as the entries. What adds a row or removes more
 * than one runs in a transaction, so that a connection lost at commit is reported rather
 * than retried into a duplicate or a half-done removal.
 */

import { type AccountRecord, type AccountStore, duplicateKeyError, type SessionRecord } from '../../access/port.js';
import {
  ACCOUNT_COLUMNS,
  type AccountRow,
  accountValues,
  SESSION_COLUMNS,
  type SessionRow,
  sessionValues,
  toAccountRecord,
  toSessionRecord,
} from '../sql-account-rows.js';
import type { Statement } from './driver.js';
import { isDuplicateKey } from './errors.js';
import { countDeleted } from './statements.js';
import type { Runner } from './transaction.js';

const SQL = {
  put: `INSERT INTO accounts (${ACCOUNT_COLUMNS}) VALUES ($1, $2, $3, $4)
     ON CONFLICT (user_id) DO UPDATE SET password_hash = excluded.password_hash, created = excluded.created,
       updated = excluded.updated`,
  get: `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE user_id = $1`,
  list: `SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY user_id COLLATE "C"`,
  remove: 'DELETE FROM accounts WHERE user_id = $1 RETURNING user_id',
  addSession: `INSERT INTO sessions (${SESSION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  findSession: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE hash = $1`,
  allSessions: `SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY created, id COLLATE "C"`,
  sessionsOf: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE user_id = $1 ORDER BY created, id COLLATE "C"`,
  touchSession: 'UPDATE sessions SET last_used = $2 WHERE id = $1',
  removeSession: 'DELETE FROM sessions WHERE id = $1 RETURNING id',
  removeSessionsOf: countDeleted('DELETE FROM sessions WHERE user_id = $1'),
  removeExpiredSessions: countDeleted('DELETE FROM sessions WHERE expires <= $1'),
} as const;

function statement(key: keyof typeof SQL, ...values: unknown[]): Statement {
  return { name: `engram_accounts_${key}`, text: SQL[key], values };
}

export class PostgresAccountStore implements AccountStore {
  constructor(private readonly db: Runner) {}

  async put(account: AccountRecord): Promise<void> {
    await this.db.query(statement('put', ...accountValues(account)));
  }

  async get(user: string): Promise<AccountRecord | undefined> {
    const [row] = await this.db.query<AccountRow>(statement('get', user));
    return row ? toAccountRecord(row) : undefined;
  }

  async list(): Promise<AccountRecord[]> {
    return (await this.db.query<AccountRow>(statement('list'))).map(toAccountRecord);
  }

  /** The account and its user's sessions go together, in one transaction. */
  async remove(user: string): Promise<boolean> {
    return this.db.transaction(async (db) => {
      await db.query(statement('removeSessionsOf', user));
      return (await db.query(statement('remove', user))).rows.length > 0;
    });
  }

  async addSession(session: SessionRecord): Promise<void> {
    try {
      await this.db.transaction((db) => db.query(statement('addSession', ...sessionValues(session))));
    } catch (error) {
      throw isDuplicateKey(error) ? duplicateKeyError('session') : error;
    }
  }

  async findSession(hash: string): Promise<SessionRecord | undefined> {
    const [row] = await this.db.query<SessionRow>(statement('findSession', hash));
    return row ? toSessionRecord(row) : undefined;
  }

  async listSessions(user?: string): Promise<SessionRecord[]> {
    const query = user === undefined ? statement('allSessions') : statement('sessionsOf', user);
    return (await this.db.query<SessionRow>(query)).map(toSessionRecord);
  }

  async touchSession(id: string, at: number): Promise<void> {
    await this.db.query(statement('touchSession', id, at));
  }

  async removeSession(id: string): Promise<boolean> {
    return this.db.transaction(async (db) => (await db.query(statement('removeSession', id))).rows.length > 0);
  }

  async removeSessionsOf(user: string): Promise<number> {
    return this.count(statement('removeSessionsOf', user));
  }

  async removeExpiredSessions(now: number): Promise<number> {
    return this.count(statement('removeExpiredSessions', now));
  }

  private async count(deletion: Statement): Promise<number> {
    return this.db.transaction(async (db) => (await db.query<{ count: number }>(deletion)).rows[0]?.count ?? 0);
  }
}
