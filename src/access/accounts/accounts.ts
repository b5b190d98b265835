/**
 * Accounts (DESIGN §8): a user may have a password, to sign in to the consent page (and
 * later the web UI), never to /mcp. This service adds and removes accounts, sets
 * passwords, lists every user the store knows, checks a sign-in (slowed down after
 * failures, per user and per client address, and the same answer whether or not the user
 * exists), and keeps the browser sessions a sign-in opens (sessions.ts).
 *
 * Removing a user signs them out everywhere and revokes their tokens and connected apps;
 * their memory stays unless they are purged, which erases their entries, history and
 * trash for good, as `engram purge` does one entry at a time.
 */

import { randomUUID } from 'node:crypto';
import { EngramError } from '../../memory/model/errors.js';
import { normalizeUser, USER_CAP } from '../../memory/model/users.js';
import type { ProposalStore, Store } from '../../memory/port.js';
import type { AccessStorage } from '../port.js';
import { checkPasswordRules, hashPassword, type PasswordCost, verifyPassword } from './passwords.js';
import type { AccountRecord } from './port.js';
import { DEFAULT_SESSION_TTL_MS, type OpenedSession, type SessionInfo, Sessions } from './sessions.js';
import { DEFAULT_THROTTLE, SignInThrottle, type ThrottleRules } from './sign-in-throttle.js';

export type { OpenedSession, SessionInfo, ThrottleRules };

/** What accounts need of a backend: the access ports (accounts and sessions, tokens, OAuth) and each user's memory. */
export type AccountsStore = AccessStorage &
  Pick<Store, 'users' | 'index' | 'trash' | 'purge'> & { readonly proposals: ProposalStore };

/** One user the store knows of: an account, memory, tokens or connected apps. */
export interface AccountSummary {
  readonly user: string;
  readonly hasPassword: boolean;
  /** Live entries. */
  readonly entries: number;
  /** What the live entries take: names, descriptions and bodies, in UTF-8 bytes. */
  readonly bytes: number;
  /** Connected apps (OAuth grants). */
  readonly apps: number;
  /** Static bearer tokens. */
  readonly tokens: number;
}

/** What removing a user ended, revoked and erased. */
export interface RemovedUser {
  readonly sessions: number;
  readonly tokens: number;
  readonly apps: number;
  /** Entries erased for good (live and in the trash), with their history: 0 unless purged. */
  readonly entries: number;
}

export interface AccountsOptions {
  /** Clock in milliseconds; tests inject one. */
  readonly now?: () => number;
  /** Told of every refused sign-in, one line: user, client address and why — never the password. */
  readonly log?: (line: string) => void;
  /** How long a browser session lasts from sign-in (default 7 days; not extended by use). */
  readonly sessionTtlMs?: number;
  /** When sign-ins are slowed down; what is left out is DEFAULT_THROTTLE's. */
  readonly throttle?: Partial<ThrottleRules>;
  /** Told when recording a session's "last used" time failed; the request went on regardless. */
  readonly onTouchError?: (error: unknown) => void;
  /**
   * A test seam, set by no front door: cheaper scrypt parameters for the hashes this service
   * makes and for the one it checks when there is no account, so that tests that sign in
   * many times do not spend 0.1 s of CPU on each. Production always uses passwords.ts's.
   */
  readonly passwordCost?: PasswordCost;
}

/**
 * Checked instead when the user has no account or no password, so that a sign-in takes as
 * long whether or not the user exists. No password hashes to it (its password was random
 * and thrown away).
 */
const DUMMY_HASH = 'scrypt$N=32768,r=8,p=1$OJhj/0ZgtCnFLr+/TlyDsA==$MQoOYDbIoyNv567MsXDraHKn3nXVKDOhPn5r238PNgg=';
/** What a log line quotes of a name or address a client sent, at most. */
const LOGGED_CAP = 100;

const WRONG = 'wrong user name or password';

/** The user name `raw` stands for; INVALID_ARGUMENT, saying what a name must be, when it is not one. */
export function checkUserName(raw: string): string {
  const user = normalizeUser(raw);
  if (user === undefined) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `${JSON.stringify(raw)} is not a valid user name: use 1-${USER_CAP} characters without spaces, for example alice.`,
    );
  }
  return user;
}

/** A client's text as a log line may quote it: JSON-quoted, cut to LOGGED_CAP characters. */
function quoted(text: string): string {
  return JSON.stringify(text.length > LOGGED_CAP ? `${text.slice(0, LOGGED_CAP)}…` : text);
}

export class Accounts {
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private readonly throttle: SignInThrottle;
  private readonly sessions: Sessions;
  private readonly passwordCost: PasswordCost | undefined;
  /** DUMMY_HASH, or one made with passwordCost so that a sign-in without an account costs the same. */
  private readonly dummyHash: string | Promise<string>;

  constructor(
    private readonly store: AccountsStore,
    options: AccountsOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.log = options.log ?? (() => {});
    this.throttle = new SignInThrottle({ ...DEFAULT_THROTTLE, ...options.throttle });
    this.passwordCost = options.passwordCost;
    this.dummyHash = options.passwordCost === undefined ? DUMMY_HASH : hashPassword(randomUUID(), options.passwordCost);
    this.sessions = new Sessions(store.accounts, {
      now: this.now,
      ttlMs: options.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS,
      onTouchError: options.onTouchError ?? (() => {}),
    });
  }

  /** Adds an account for `user`, with a password or none yet (then nobody can sign in as them until one is set). */
  async create(rawUser: string, password?: string): Promise<void> {
    const user = checkUserName(rawUser);
    if (password !== undefined) checkPasswordRules(password);
    if (await this.store.accounts.get(user)) {
      throw new EngramError('CONFLICT', `user ${user} already has an account; set a new password for it instead.`, {
        reason: 'account-exists',
        user,
      });
    }
    const passwordHash = password === undefined ? undefined : await hashPassword(password, this.passwordCost);
    const at = this.now();
    await this.store.accounts.put({ user, passwordHash, created: at, updated: at });
  }

  /**
   * Sets the password of `user`, adding their account if they have memory, tokens or apps
   * but no account yet; NOT_FOUND for a user the store knows nothing of. Every browser
   * signed in as them is signed out.
   */
  async setPassword(rawUser: string, password: string): Promise<void> {
    const user = checkUserName(rawUser);
    const account = await this.store.accounts.get(user);
    if (!account && !(await this.holdsAnything(user))) throw userNotFound(user);
    checkPasswordRules(password);
    const passwordHash = await hashPassword(password, this.passwordCost);
    const at = this.now();
    await this.store.accounts.put({ user, passwordHash, created: account?.created ?? at, updated: at });
    await this.store.accounts.removeSessionsOf(user);
  }

  /** Every user with an account, memory, tokens or connected apps, by name in code-point order. */
  async list(): Promise<AccountSummary[]> {
    const [accounts, users, tokens, grants] = await Promise.all([
      this.store.accounts.list(),
      this.store.users(),
      this.store.tokens.list(),
      this.store.oauth.listGrants(),
    ]);
    const summaries = new Map<string, { -readonly [K in keyof AccountSummary]: AccountSummary[K] }>();
    const of = (user: string) => {
      let summary = summaries.get(user);
      if (!summary) {
        summary = { user, hasPassword: false, entries: 0, bytes: 0, apps: 0, tokens: 0 };
        summaries.set(user, summary);
      }
      return summary;
    };
    for (const account of accounts) of(account.user).hasPassword = account.passwordHash !== undefined;
    for (const usage of users) Object.assign(of(usage.user), { entries: usage.entries, bytes: usage.totalBytes });
    for (const token of tokens) of(token.user).tokens++;
    for (const grant of grants) of(grant.user).apps++;
    return [...summaries.values()].sort((a, b) => (a.user < b.user ? -1 : a.user > b.user ? 1 : 0));
  }

  /**
   * Removes `user`: ends their sessions, revokes their tokens and connected apps, removes
   * their account; with `purge`, erases their memory too (entries, history, trash), for
   * good. NOT_FOUND, changing nothing, for a user the store knows nothing of.
   *
   * The three access ports share no transaction, so this is three atomic steps, one per
   * port, in the order that takes the most away first: the account with its sessions (no
   * sign-in from then on), the tokens, the connected apps. A failure part way leaves the
   * user with less access, never more, and still known by what is left: removing them
   * again finishes the work. A sign-in or consent racing the removal gets nothing that
   * lasts: the store keeps a session or grant only while the account exists, checked in
   * the step that keeps it, so it is refused, or kept first and then taken along here.
   */
  async remove(rawUser: string, options: { readonly purge: boolean }): Promise<RemovedUser> {
    const user = checkUserName(rawUser);
    const account = await this.store.accounts.get(user);
    if (!account && !(await this.holdsAnything(user))) throw userNotFound(user);
    const sessions = await this.store.accounts.removeSessionsOf(user);
    await this.store.accounts.remove(user);
    const tokens = await this.store.tokens.revokeAllOf(user);
    const apps = await this.store.oauth.revokeByUser(user);
    const entries = options.purge ? await this.erase(user) : 0;
    return { sessions, tokens, apps, entries };
  }

  /**
   * Checks a sign-in from the client at `from`, and returns the user's normalised name.
   * UNAUTHORIZED with the same words whether the name is unknown, has no password, or the
   * password is wrong; TOO_MANY_ATTEMPTS, without checking the password, while the user
   * or the address must wait after too many failures. A success forgets the user's failures.
   */
  async signIn(rawUser: string, password: string, from: string): Promise<string> {
    const user = normalizeUser(rawUser);
    const keys = [...(user === undefined ? [] : [`user:${user}`]), `address:${from}`];
    const who = `user ${quoted(user ?? rawUser)} from ${quoted(from)}`;
    const at = this.now();
    const wait = Math.max(...keys.map((key) => this.throttle.waitSeconds(key, at)));
    if (wait > 0) {
      this.log(`sign-in refused for ${who}: too many failed attempts, ${wait} s to wait`);
      throw new EngramError(
        'TOO_MANY_ATTEMPTS',
        `too many failed sign-ins lately; try again in ${wait} second${wait === 1 ? '' : 's'}.`,
        { reason: 'sign-in-throttled', retryAfterSeconds: wait },
      );
    }
    // Counted as a failure before the password is checked, so that guesses sent all at once
    // see each other; taken back if it succeeds, or if the store fails to answer.
    for (const key of keys) this.throttle.fail(key, at);
    let account: AccountRecord | undefined;
    let matches: boolean;
    try {
      account = user === undefined ? undefined : await this.store.accounts.get(user);
      matches = await verifyPassword(password, account?.passwordHash ?? (await this.dummyHash));
    } catch (error) {
      for (const key of keys) this.throttle.forgive(key);
      throw error;
    }
    const hash = account?.passwordHash;
    if (user !== undefined && hash !== undefined && matches) {
      this.throttle.reset(`user:${user}`);
      this.throttle.forgive(`address:${from}`);
      return user;
    }
    const reason =
      user === undefined
        ? 'not a valid user name'
        : !account
          ? 'no such account'
          : hash === undefined
            ? 'no password set'
            : 'wrong password';
    this.log(`sign-in failed for ${who}: ${reason}`);
    throw new EngramError('UNAUTHORIZED', WRONG);
  }

  /**
   * Opens a browser session for `user`, who has just signed in; `agent` is the browser's
   * User-Agent. Refused as a sign-in without an account is (UNAUTHORIZED, the same words)
   * when `user` has none, as when they were removed since signing in: the store keeps a
   * session only while its user has an account, checked in the step that keeps it.
   */
  async openSession(rawUser: string, agent: string): Promise<OpenedSession> {
    const user = checkUserName(rawUser);
    const opened = await this.sessions.open(user, agent);
    if (opened === undefined) {
      this.log(`session refused for user ${quoted(user)}: no such account`);
      throw new EngramError('UNAUTHORIZED', WRONG);
    }
    return opened;
  }

  /** Who is signed in with the cookie `secret`; undefined when it is missing, unknown or expired. */
  sessionUser(secret: string | undefined): Promise<string | undefined> {
    return this.sessions.userOf(secret);
  }

  /** The session the cookie `secret` opens (its id and user); undefined when it is missing, unknown or expired. */
  session(secret: string | undefined): Promise<SessionInfo | undefined> {
    return this.sessions.find(secret);
  }

  /** Ends `user`'s session `id` (signing that browser out); false when they have no such session. */
  revokeSession(rawUser: string, id: string): Promise<boolean> {
    return this.sessions.revoke(checkUserName(rawUser), id);
  }

  /** Signs the browser holding `secret` out; nothing happens for an unknown secret. */
  endSession(secret: string): Promise<void> {
    return this.sessions.end(secret);
  }

  /** The live sessions of `user` (everyone's when omitted), oldest first. */
  listSessions(rawUser?: string): Promise<SessionInfo[]> {
    return this.sessions.list(rawUser === undefined ? undefined : checkUserName(rawUser));
  }

  /** Deletes expired sessions; returns how many. */
  removeExpiredSessions(): Promise<number> {
    return this.sessions.removeExpired();
  }

  /** Whether the store keeps memory, tokens or connected apps of `user`. */
  private async holdsAnything(user: string): Promise<boolean> {
    const [users, tokens, grants] = await Promise.all([
      this.store.users(),
      this.store.tokens.list(user),
      this.store.oauth.listGrants(),
    ]);
    return [...users, ...tokens, ...grants].some((item) => item.user === user);
  }

  /**
   * Erases every entry of `user`, live and in the trash, with all its history, and the
   * changes waiting for their review (expired or not); returns how many entries.
   */
  private async erase(user: string): Promise<number> {
    const [live, trash] = await Promise.all([this.store.index(user), this.store.trash(user)]);
    const names = new Set([...live.map((row) => row.name), ...trash.map((entry) => entry.name)]);
    let erased = 0;
    for (const name of names) erased += await this.store.purge(user, name, { includeLive: true });
    for (const proposal of await this.store.proposals.list(user, -1))
      await this.store.proposals.take(user, proposal.id);
    return erased;
  }
}

/** The refusal for a name the store knows nothing of (no account, memory, token or app). */
export function userNotFound(user: string): EngramError {
  return new EngramError(
    'NOT_FOUND',
    `there is no user ${user}: no account, memory, token or connected app belongs to that name.`,
    { reason: 'user-not-found', user },
  );
}

export function createAccounts(store: AccountsStore, options: AccountsOptions = {}): Accounts {
  return new Accounts(store, options);
}
