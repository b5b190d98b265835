/**
 * The accounts port (access/accounts/port.ts) for both SQL backends, in the `accounts`
 * and `sessions` tables of the same database as the entries. An account goes with its
 * sessions, in one transaction. A session is added under a lock on its user's account
 * (shared, in PostgreSQL; SQLite's write transactions exclude each other), and removing an
 * account deletes the account first, then its sessions: a removal waits for a session
 * being added and takes it along, or the session sees the account gone and is not kept.
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
import { changes, rows } from './steps.js';

export class SqlAccountStore implements AccountStore {
  private readonly sql;

  constructor(private readonly db: SqlDatabase) {
    const prepare = (name: string, text: string) => db.prepare(`accounts_${name}`, text);
    const { byCodePoint, lockShared } = db.dialect;
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
      lockAccount: prepare('lock_account', `SELECT 1 AS found FROM accounts WHERE user_id = ?${lockShared}`),
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

  /**
   * The account and its user's sessions go together, in one transaction: the account first,
   * so that a session being added (holding the account) is waited for, then seen and deleted.
   */
  async remove(user: string): Promise<boolean> {
    const { removeSessionsOf, remove } = this.sql;
    return this.db.transaction(function* () {
      const removed = (yield* changes(remove, user)) > 0;
      yield* changes(removeSessionsOf, user);
      return removed;
    });
  }

  /** The account is looked up (and locked) in the same transaction as the session is added, so a removal cannot come between. */
  async addSession(session: SessionRecord): Promise<boolean> {
    const { lockAccount, addSession } = this.sql;
    try {
      return await this.db.transaction(function* () {
        if ((yield* rows(lockAccount, session.user)).length === 0) return false;
        yield* changes(addSession, ...sessionValues(session));
        return true;
      });
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
