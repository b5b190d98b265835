/**
 * The in-process backend's accounts and browser sessions: maps, gone when the process ends.
 * Each step does its work synchronously, so no other step comes between its checks and
 * its changes: a session is kept only while its user has an account.
 */

import type { AccountRecord, AccountStore, SessionRecord } from '../../access/accounts/port.js';
import { duplicateKeyError } from '../../access/port.js';

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class MemoryAccountStore implements AccountStore {
  private readonly accounts = new Map<string, AccountRecord>();
  private readonly sessions = new Map<string, SessionRecord>();

  get size(): number {
    return this.accounts.size;
  }

  async put(account: AccountRecord): Promise<void> {
    this.accounts.set(account.user, account);
  }

  /** Whether `user` has an account, at once: for the OAuth store's grants (store.ts). */
  has(user: string): boolean {
    return this.accounts.has(user);
  }

  async get(user: string): Promise<AccountRecord | undefined> {
    return this.accounts.get(user);
  }

  async list(): Promise<AccountRecord[]> {
    return [...this.accounts.values()].sort((a, b) => byCodePoint(a.user, b.user));
  }

  async remove(user: string): Promise<boolean> {
    this.removeSessionsWhere((session) => session.user === user);
    return this.accounts.delete(user);
  }

  async addSession(session: SessionRecord): Promise<boolean> {
    if (!this.accounts.has(session.user)) return false;
    for (const kept of this.sessions.values()) {
      if (kept.id === session.id || kept.hash === session.hash) throw duplicateKeyError('session');
    }
    this.sessions.set(session.id, session);
    return true;
  }

  async findSession(hash: string): Promise<SessionRecord | undefined> {
    for (const session of this.sessions.values()) if (session.hash === hash) return session;
    return undefined;
  }

  async listSessions(user?: string): Promise<SessionRecord[]> {
    return [...this.sessions.values()]
      .filter((session) => user === undefined || session.user === user)
      .sort((a, b) => a.created - b.created || byCodePoint(a.id, b.id));
  }

  async touchSession(id: string, at: number): Promise<void> {
    const session = this.sessions.get(id);
    if (session) this.sessions.set(id, { ...session, lastUsed: at });
  }

  async removeSession(id: string): Promise<boolean> {
    return this.sessions.delete(id);
  }

  async removeSessionsOf(user: string): Promise<number> {
    return this.removeSessionsWhere((session) => session.user === user);
  }

  async removeExpiredSessions(now: number): Promise<number> {
    return this.removeSessionsWhere((session) => session.expires <= now);
  }

  /** Puts `accounts` in place of every account kept (load); sessions end. */
  replaceAll(accounts: readonly AccountRecord[]): void {
    this.accounts.clear();
    this.sessions.clear();
    for (const account of accounts) this.accounts.set(account.user, account);
  }

  private removeSessionsWhere(matches: (session: SessionRecord) => boolean): number {
    let removed = 0;
    for (const [id, session] of this.sessions) {
      if (matches(session)) removed += Number(this.sessions.delete(id));
    }
    return removed;
  }
}
