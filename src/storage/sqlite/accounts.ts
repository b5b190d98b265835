/**
 * The SQLite backend's accounts and browser sessions, in the `accounts` and `sessions`
 * tables of the same database file as the entries. Statements run through the store's
 * guard, as tokens do: writes are refused on a replaced file, retried while another
 * process holds the lock, and their failures put in words.
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
import type { Database } from './driver.js';
import { isDuplicateKey } from './errors.js';
import type { Guard } from './guard.js';
import { type Prepared, prepareAll } from './statements.js';

const SQL = {
  put: `INSERT INTO accounts (${ACCOUNT_COLUMNS}) VALUES (?, ?, ?, ?)
     ON CONFLICT (user_id) DO UPDATE SET password_hash = excluded.password_hash, created = excluded.created,
       updated = excluded.updated`,
  get: `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE user_id = ?`,
  list: `SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY user_id`,
  remove: 'DELETE FROM accounts WHERE user_id = ?',
  addSession: `INSERT INTO sessions (${SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  findSession: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE hash = ?`,
  allSessions: `SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY created, id`,
  sessionsOf: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE user_id = ? ORDER BY created, id`,
  touchSession: 'UPDATE sessions SET last_used = ? WHERE id = ?',
  removeSession: 'DELETE FROM sessions WHERE id = ?',
  removeSessionsOf: 'DELETE FROM sessions WHERE user_id = ?',
  removeExpiredSessions: 'DELETE FROM sessions WHERE expires <= ?',
} as const;

export class SqliteAccountStore implements AccountStore {
  private readonly statements: Prepared<typeof SQL>;
  private readonly removeAccount;

  constructor(
    db: Database,
    private readonly guard: Guard,
  ) {
    this.statements = prepareAll(db, SQL);
    this.removeAccount = db.transaction((user: string) => {
      this.statements.removeSessionsOf.run(user);
      return this.statements.remove.run(user).changes > 0;
    });
  }

  async put(account: AccountRecord): Promise<void> {
    await this.guard.write(() => this.statements.put.run(...accountValues(account)));
  }

  async get(user: string): Promise<AccountRecord | undefined> {
    return this.guard.read(() => {
      const row = this.statements.get.get(user) as AccountRow | undefined;
      return row ? toAccountRecord(row) : undefined;
    });
  }

  async list(): Promise<AccountRecord[]> {
    return this.guard.read(() => (this.statements.list.all() as AccountRow[]).map(toAccountRecord));
  }

  /** The account and its user's sessions go together, in one transaction. */
  async remove(user: string): Promise<boolean> {
    return this.guard.write(() => this.removeAccount.immediate(user));
  }

  async addSession(session: SessionRecord): Promise<void> {
    await this.guard.write(() => {
      try {
        this.statements.addSession.run(...sessionValues(session));
      } catch (error) {
        throw isDuplicateKey(error) ? duplicateKeyError('session') : error;
      }
    });
  }

  async findSession(hash: string): Promise<SessionRecord | undefined> {
    return this.guard.read(() => {
      const row = this.statements.findSession.get(hash) as SessionRow | undefined;
      return row ? toSessionRecord(row) : undefined;
    });
  }

  async listSessions(user?: string): Promise<SessionRecord[]> {
    return this.guard.read(() => {
      const rows = user === undefined ? this.statements.allSessions.all() : this.statements.sessionsOf.all(user);
      return (rows as SessionRow[]).map(toSessionRecord);
    });
  }

  async touchSession(id: string, at: number): Promise<void> {
    await this.guard.write(() => this.statements.touchSession.run(at, id));
  }

  async removeSession(id: string): Promise<boolean> {
    return this.guard.write(() => this.statements.removeSession.run(id).changes > 0);
  }

  async removeSessionsOf(user: string): Promise<number> {
    return this.guard.write(() => this.statements.removeSessionsOf.run(user).changes);
  }

  async removeExpiredSessions(now: number): Promise<number> {
    return this.guard.write(() => this.statements.removeExpiredSessions.run(now).changes);
  }
}
