/**
 * Who may use a server that asks for tokens (`engram serve --auth token`): issuing,
 * listing, revoking and checking bearer tokens. A token is shown once when created;
 * only its SHA-256 is kept, and a presented token is checked against that hash in
 * constant time. Every check reads the store, so a revoked token fails at once; the
 * "last used" time it records is bookkeeping, written in the background, and never
 * delays or fails the request it records (a busy, full or read-only database).
 */

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Caller } from '../../memory/model/caller.js';
import { EngramError } from '../../memory/model/errors.js';
import { charLength, foldDescription } from '../../memory/model/text.js';
import { normalizeUser, USER_CAP } from '../../memory/model/users.js';
import type { TokenRecord, TokenStore } from './port.js';

/** A token as people see it: everything but the secret and its hash. */
export type TokenInfo = Omit<TokenRecord, 'hash'>;

export interface NewToken {
  readonly user: string;
  readonly label?: string | undefined;
  readonly readOnly?: boolean | undefined;
  /** Its changes are held for the user's review instead of applied (memory/review.ts); not with readOnly. */
  readonly review?: boolean | undefined;
}

export interface IssuedToken {
  readonly info: TokenInfo;
  /** The secret, to hand to the client once; it cannot be shown again. */
  readonly token: string;
}

export interface AccessOptions {
  /** Clock in milliseconds; tests inject one. */
  readonly now?: () => number;
  /** Told when recording a token's "last used" time failed; the request went on regardless. */
  readonly onTouchError?: (error: unknown) => void;
}

/** Tokens start with this, so a leaked one is easy to recognise and search for. */
export const TOKEN_PREFIX = 'engram_';
const LABEL_CAP = 100;
/** `lastUsed` is refreshed at most this often, so checking a token rarely writes. */
const TOUCH_INTERVAL_MS = 60_000;

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function checkUser(raw: string): string {
  const user = normalizeUser(raw);
  if (user === undefined) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `${JSON.stringify(raw)} is not a valid user name: use 1-${USER_CAP} characters without spaces, for example --user alice.`,
    );
  }
  return user;
}

function checkLabel(raw: string): string {
  const label = foldDescription(raw);
  if (label === '' || charLength(label) > LABEL_CAP) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `the label must be one line of 1-${LABEL_CAP} characters naming who uses the token, for example --label "llama.cpp WebUI".`,
    );
  }
  return label;
}

function infoOf(record: TokenRecord): TokenInfo {
  const { hash: _hash, ...info } = record;
  return info;
}

export class Access {
  private readonly tokens: TokenStore;
  private readonly now: () => number;
  private readonly onTouchError: (error: unknown) => void;
  /** Tokens whose "last used" is being written: one write at a time per token, however many requests. */
  private readonly touching = new Set<string>();

  constructor(tokens: TokenStore, options: AccessOptions = {}) {
    this.tokens = tokens;
    this.now = options.now ?? Date.now;
    this.onTouchError = options.onTouchError ?? (() => {});
  }

  /** Issues a token for `user`; its label (default `token <id>`) names the actor in history. */
  async create(request: NewToken): Promise<IssuedToken> {
    const user = checkUser(request.user);
    if (request.readOnly && request.review) throw readOnlyNotReviewed();
    const id = randomBytes(6).toString('hex');
    const label = request.label === undefined ? `token ${id}` : checkLabel(request.label);
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const record: TokenRecord = {
      id,
      user,
      label,
      readOnly: request.readOnly === true,
      hash: sha256(token),
      created: this.now(),
      lastUsed: undefined,
      review: request.review === true,
    };
    await this.tokens.add(record);
    return { info: infoOf(record), token };
  }

  /** Every live token, oldest first; never the secrets. */
  async list(): Promise<TokenInfo[]> {
    return oldestFirst(await this.tokens.list());
  }

  /** The live tokens of `user` alone, oldest first: what a person may see of access (the web UI). */
  async listOf(user: string): Promise<TokenInfo[]> {
    return oldestFirst(await this.tokens.list(user));
  }

  /**
   * Revokes one of `user`'s own tokens; a token of another user is NOT_FOUND, as if it did
   * not exist, so nobody learns or ends what is not theirs.
   */
  async revokeOf(user: string, id: string): Promise<void> {
    const owned = (await this.listOf(user)).some((token) => token.id === id.trim());
    if (!owned || !(await this.tokens.revoke(id.trim()))) {
      throw new EngramError('NOT_FOUND', `you have no token with the id ${JSON.stringify(id)}.`);
    }
  }

  /**
   * Puts one of `user`'s own tokens in review mode (its changes held for their review) or
   * out of it; NOT_FOUND for a token of another user, as for none; INVALID_ARGUMENT for a
   * read-only token, which changes nothing to review.
   */
  async setReviewOf(user: string, id: string, review: boolean): Promise<TokenInfo> {
    const missing = () => new EngramError('NOT_FOUND', `you have no token with the id ${JSON.stringify(id)}.`);
    const owned = (await this.listOf(user)).find((token) => token.id === id.trim());
    if (!owned) throw missing();
    if (owned.readOnly && review) throw readOnlyNotReviewed();
    if (!(await this.tokens.setReview(owned.id, review))) throw missing();
    return { ...owned, review };
  }

  /** Revokes a token; the next request that presents it is refused. */
  async revoke(id: string): Promise<void> {
    if (!(await this.tokens.revoke(id.trim()))) {
      throw new EngramError('NOT_FOUND', `no token has the id ${JSON.stringify(id)}; engram token list shows the ids.`);
    }
  }

  /**
   * Who presents this token: its user, its label (what history records) and whether it
   * is read-only or in review mode. UNAUTHORIZED when it is unknown or revoked.
   */
  async authenticate(presented: string): Promise<Caller> {
    const hash = sha256(presented);
    const record = await this.tokens.findByHash(hash);
    // The lookup is keyed by a hash the caller cannot steer; the final comparison is
    // constant-time all the same, so no backend's matching can leak how close a guess was.
    if (!record || !timingSafeEqual(Buffer.from(record.hash, 'hex'), Buffer.from(hash, 'hex'))) {
      throw new EngramError(
        'UNAUTHORIZED',
        'The token was not accepted: it is wrong or has been revoked. Ask the owner of this server for a token ' +
          '(engram token create --user NAME) and send it as "Authorization: Bearer <token>".',
      );
    }
    const at = this.now();
    if (record.lastUsed === undefined || at - record.lastUsed >= TOUCH_INTERVAL_MS) this.touch(record.id, at);
    return { user: record.user, label: record.label, readOnly: record.readOnly, review: record.review };
  }

  /** Records that the token was used, without waiting: a failure goes to onTouchError, never to the request. */
  private touch(id: string, at: number): void {
    if (this.touching.has(id)) return;
    this.touching.add(id);
    // Called inside the promise chain, so that a touch that throws synchronously is caught too.
    Promise.resolve()
      .then(() => this.tokens.touch(id, at))
      .catch((error: unknown) => this.onTouchError(error))
      .finally(() => this.touching.delete(id));
  }
}

function readOnlyNotReviewed(): EngramError {
  return new EngramError(
    'INVALID_ARGUMENT',
    'a token is read-only or has its changes reviewed, not both: a read-only token changes nothing to review. Choose one.',
  );
}

function oldestFirst(records: readonly TokenRecord[]): TokenInfo[] {
  return records.map(infoOf).sort((a, b) => a.created - b.created || (a.id < b.id ? -1 : 1));
}

export function createAccess(tokens: TokenStore, options: AccessOptions = {}): Access {
  return new Access(tokens, options);
}
