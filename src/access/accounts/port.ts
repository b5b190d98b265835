/**
 * The port accounts and browser sessions are kept behind (accounts.ts and sessions.ts are
 * its services): a user's password hash, and each signed-in browser with its cookie's
 * secret kept hashed. A backend offers it beside the memory port, in the same database.
 * The store keeps no rule: expiry is the service's; the store only offers the atomic
 * steps it needs (an account goes with its sessions, and a session is kept only while its
 * user has an account, so that one opened as the user is removed cannot outlive them).
 */

/** A user's sign-in secret. Accounts are keyed by the normalised user name, like memory. */
export interface AccountRecord {
  readonly user: string;
  /** The encoded scrypt hash with its salt and parameters (passwords.ts); undefined: no password set. */
  readonly passwordHash: string | undefined;
  readonly created: number;
  readonly updated: number;
}

/** A signed-in browser (the consent page, the web UI): its cookie's secret is kept hashed. */
export interface SessionRecord {
  /** Short public id, to list and revoke a session without knowing its secret. */
  readonly id: string;
  /** Hex SHA-256 of the cookie's secret. */
  readonly hash: string;
  readonly user: string;
  /** What the browser said it was (User-Agent, folded and capped), to recognise it in a list. */
  readonly agent: string;
  readonly created: number;
  readonly expires: number;
  readonly lastUsed: number | undefined;
}

/** Signing in, and who is signed in where. */
export interface AccountStore {
  /** Creates or replaces the account of `account.user`. */
  put(account: AccountRecord): Promise<void>;
  get(user: string): Promise<AccountRecord | undefined>;
  /** Every account, by user name in code-point order. */
  list(): Promise<AccountRecord[]>;
  /** Removes the account and every session of its user; false when there was no account. */
  remove(user: string): Promise<boolean>;

  /**
   * Keeps a new session if its user has an account, in one atomic step with that check (a
   * removal of the account waits for it, or it sees the account gone); false, keeping
   * nothing, when they have none. A taken id or hash is refused with CONFLICT, changing nothing.
   */
  addSession(session: SessionRecord): Promise<boolean>;
  /** The session with this hash, expired or not (the service decides). */
  findSession(hash: string): Promise<SessionRecord | undefined>;
  /** The sessions of `user` (every user's when omitted), oldest first. */
  listSessions(user?: string): Promise<SessionRecord[]>;
  touchSession(id: string, at: number): Promise<void>;
  /** Ends one session; false when no such id. */
  removeSession(id: string): Promise<boolean>;
  /** Ends every session of `user`; returns how many. */
  removeSessionsOf(user: string): Promise<number>;
  /** Deletes sessions that expired at or before `now`; returns how many. */
  removeExpiredSessions(now: number): Promise<number>;
}
