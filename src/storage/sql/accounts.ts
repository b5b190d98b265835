/**
 * The accounts port (access/accounts/port.ts) for both SQL backends, in the `accounts`
 * and `sessions` tables of the same database as the entries. An account goes with its
 * sessions, in one transaction.
 */

import type { AccountRecord, AccountStore, SessionRecord } from '../../access/accounts/port.js';
import { duplicateKeyError } from '../../access/port.js';
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
import type { SqlDatabase } from './database.js';
import { changes } from './steps.js';

export class SqlAccountStore implements AccountStore {
  private readonly sql;

  constructor(private readonly db: SqlDatabase) {
    const prepare = (name: string, text: string) => db.prepare(`accounts_${name}`, text);
    const { byCodePoint } = db.dialect;
    this.sql = {
      put: prepare(
        'put',
        `INSERT INTO accounts (${ACCOUNT_COLUMNS}) VALUES (?, ?, ?, ?)
         ON CONFLICT (user_id) DO UPDATE SET password_hash = excluded.password_hash, created = excluded.created,
           updated = excluded.updated`,
      ),
      get: prepare('get', `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE user_id = ?`),
      list: prepare('list', `SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY user_id${byCodePoint}`),
      remove: prepare('remove', 'DELETE FROM accounts WHERE user_id = ?'),
      addSession: prepare('add_session', `INSERT INTO sessions (${SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`),
      findSession: prepare('find_session', `SELECT ${SESSION_COLUMNS} FROM sessions WHERE hash = ?`),
      allSessions: prepare(
        'all_sessions',
        `SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY created, id${byCodePoint}`,
      ),
      sessionsOf: prepare(
        'sessions_of',
        `SELECT ${SESSION_COLUMNS} FROM sessions WHERE user_id = ? ORDER BY created, id${byCodePoint}`,
      ),
      touchSession: prepare('touch_session', 'UPDATE sessions SET last_used = ? WHERE id = ?'),
      removeSession: prepare('remove_session', 'DELETE FROM sessions WHERE id = ?'),
      removeSessionsOf: prepare('remove_sessions_of', 'DELETE FROM sessions WHERE user_id = ?'),
      removeExpiredSessions: prepare('remove_expired_sessions', 'DELETE FROM sessions WHERE expires <= ?'),
    };
  }

  async put(account: AccountRecord): Promise<void> {
    await this.db.update(this.sql.put, accountValues(account));
  }

  async get(user: string): Promise<AccountRecord | undefined> {
    const [row] = await this.db.rows<AccountRow>(this.sql.get, [user]);
    return row ? toAccountRecord(row) : undefined;
  }

  async list(): Promise<AccountRecord[]> {
    return (await this.db.rows<AccountRow>(this.sql.list, [])).map(toAccountRecord);
  }

  /** The account and its user's sessions go together, in one transaction. */
  async remove(user: string): Promise<boolean> {
    const { removeSessionsOf, remove } = this.sql;
    return this.db.transaction(function* () {
      yield* changes(removeSessionsOf, user);
      return (yield* changes(remove, user)) > 0;
    });
  }

  async addSession(session: SessionRecord): Promise<void> {
    const { addSession } = this.sql;
    try {
      await this.db.transaction(() => changes(addSession, ...sessionValues(session)));
    } catch (error) {
      throw this.db.dialect.duplicateKeyOf(error) ? duplicateKeyError('session') : error;
    }
  }

  async findSession(hash: string): Promise<SessionRecord | undefined> {
    const [row] = await this.db.rows<SessionRow>(this.sql.findSession, [hash]);
    return row ? toSessionRecord(row) : undefined;
  }

  async listSessions(user?: string): Promise<SessionRecord[]> {
    const rows =
      user === undefined
        ? await this.db.rows<SessionRow>(this.sql.allSessions, [])
        : await this.db.rows<SessionRow>(this.sql.sessionsOf, [user]);
    return rows.map(toSessionRecord);
  }

  async touchSession(id: string, at: number): Promise<void> {
    await this.db.update(this.sql.touchSession, [at, id]);
  }

  async removeSession(id: string): Promise<boolean> {
    const { removeSession } = this.sql;
    return (await this.db.transaction(() => changes(removeSession, id))) > 0;
  }

  async removeSessionsOf(user: string): Promise<number> {
    const { removeSessionsOf } = this.sql;
    return this.db.transaction(() => changes(removeSessionsOf, user));
  }

  async removeExpiredSessions(now: number): Promise<number> {
    const { removeExpiredSessions } = this.sql;
    return this.db.transaction(() => changes(removeExpiredSessions, now));
  }
}
