/**
 * Signed-in browsers (the consent page, later the web UI): a session is opened after a
 * sign-in and named by a random secret the browser keeps in a cookie. Only the secret's
 * SHA-256 is stored, as with tokens. A session lasts a fixed time from sign-in (7 days by
 * default) and is not extended by use: the store keeps when it was last used, for the
 * list, written at most once a minute and in the background, never failing the request.
 */

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { foldDescription } from '../../memory/model/text.js';
import type { AccountStore, SessionRecord } from './port.js';

/** A session as people see it: everything but its hash. */
export type SessionInfo = Omit<SessionRecord, 'hash'>;

export interface OpenedSession {
  /** The cookie's value, handed to the browser once; only its hash is kept. */
  readonly secret: string;
  readonly session: SessionRecord;
}

export interface SessionOptions {
  readonly now: () => number;
  /** How long a session lasts from sign-in. */
  readonly ttlMs: number;
  /** Told when recording a session's "last used" time failed; the request went on regardless. */
  readonly onTouchError: (error: unknown) => void;
}

export const DEFAULT_SESSION_TTL_MS = 7 * 24 * 60 * 60_000;
/** What a browser's User-Agent is cut to: enough to recognise it in a list. */
const AGENT_CAP = 200;
/** A presented secret longer than any we hand out is not looked up. */
const SECRET_CAP = 128;
/** `lastUsed` is refreshed at most this often, so checking a session rarely writes. */
const TOUCH_INTERVAL_MS = 60_000;

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function infoOf(record: SessionRecord): SessionInfo {
  const { hash: _hash, ...info } = record;
  return info;
}

/** One printable line of at most AGENT_CAP characters: what the browser said it was. */
function foldAgent(agent: string): string {
  // Cut before folding too, so that an oversized header costs no more than a short one.
  const folded = foldDescription(agent.slice(0, 4 * AGENT_CAP));
  return Array.from(folded).slice(0, AGENT_CAP).join('').trimEnd();
}

export class Sessions {
  /** Sessions whose "last used" is being written: one write at a time per session. */
  private readonly touching = new Set<string>();

  constructor(
    private readonly store: AccountStore,
    private readonly options: SessionOptions,
  ) {}

  /**
   * Opens a session for `user` (already signed in and normalised), from the browser
   * `agent`; undefined, keeping nothing, when they have no account (removed since).
   */
  async open(user: string, agent: string): Promise<OpenedSession | undefined> {
    const secret = randomBytes(32).toString('base64url');
    const created = this.options.now();
    const session: SessionRecord = {
      id: randomBytes(6).toString('hex'),
      hash: sha256(secret),
      user,
      agent: foldAgent(agent),
      created,
      expires: created + this.options.ttlMs,
      lastUsed: undefined,
    };
    return (await this.store.addSession(session)) ? { secret, session } : undefined;
  }

  /** Whose session `secret` opens; undefined when it is missing, unknown or expired. */
  async userOf(secret: string | undefined): Promise<string | undefined> {
    return (await this.find(secret))?.user;
  }

  /** The session `secret` opens, recorded as used; undefined when it is missing, unknown or expired. */
  async find(secret: string | undefined): Promise<SessionInfo | undefined> {
    if (secret === undefined || secret === '' || secret.length > SECRET_CAP) return undefined;
    const hash = sha256(secret);
    const session = await this.store.findSession(hash);
    if (!session || !timingSafeEqual(Buffer.from(session.hash, 'hex'), Buffer.from(hash, 'hex'))) return undefined;
    const at = this.options.now();
    if (session.expires <= at) return undefined;
    if (session.lastUsed === undefined || at - session.lastUsed >= TOUCH_INTERVAL_MS) this.touch(session.id, at);
    return infoOf(session);
  }

  /** Ends the session `secret` opens (signing out); nothing happens for an unknown one. */
  async end(secret: string): Promise<void> {
    if (secret === '' || secret.length > SECRET_CAP) return;
    const session = await this.store.findSession(sha256(secret));
    if (session) await this.store.removeSession(session.id);
  }

  /** Ends the session `id` if it is one of `user`'s (signing that browser out); whether it was. */
  async revoke(user: string, id: string): Promise<boolean> {
    const owned = (await this.store.listSessions(user)).some((session) => session.id === id);
    return owned && (await this.store.removeSession(id));
  }

  /** The live sessions of `user` (everyone's when omitted), oldest first; never their hashes. */
  async list(user?: string): Promise<SessionInfo[]> {
    const at = this.options.now();
    return (await this.store.listSessions(user)).filter((session) => session.expires > at).map(infoOf);
  }

  /** Deletes the sessions that have expired; returns how many. */
  removeExpired(): Promise<number> {
    return this.store.removeExpiredSessions(this.options.now());
  }

  /** Records that the session was used, without waiting: a failure goes to onTouchError, never to the request. */
  private touch(id: string, at: number): void {
    if (this.touching.has(id)) return;
    this.touching.add(id);
    Promise.resolve()
      .then(() => this.store.touchSession(id, at))
      .catch((error: unknown) => this.options.onTouchError(error))
      .finally(() => this.touching.delete(id));
  }
}
