/**
 * The port the static tokens of `--auth token` are kept behind (access.ts is its one
 * service). A backend offers it beside the memory port, in the same database, so that a
 * revoke reaches every process sharing it. Only the SHA-256 of a secret is kept; the store
 * keeps no rule (the service decides what a token may do and when it was last used).
 */

import { EngramError } from '../../memory/model/errors.js';

/** A bearer token as stored: only the SHA-256 of the secret is kept. */
export interface TokenRecord {
  readonly id: string;
  readonly user: string;
  readonly label: string;
  readonly readOnly: boolean;
  /** Hex SHA-256 of the token secret. */
  readonly hash: string;
  readonly created: number;
  readonly lastUsed: number | undefined;
  /** True when the token's changes are held for the user's review (memory/review.ts) instead of applied. */
  readonly review: boolean;
}

/** The tokens of `--auth token`, kept beside the entries in the same database. */
export interface TokenStore {
  /** Keeps a new token; one whose id or hash is taken already is refused with duplicateTokenError, changing nothing. */
  add(token: TokenRecord): Promise<void>;
  /** The live tokens; with `user`, that user's alone. */
  list(user?: string): Promise<TokenRecord[]>;
  /** The live (not revoked) token with this hash. */
  findByHash(hash: string): Promise<TokenRecord | undefined>;
  /** Removes the token; false when no such id. Takes effect for the next request. */
  revoke(id: string): Promise<boolean>;
  /** Removes every token of `user` in one atomic step; returns how many. */
  revokeAllOf(user: string): Promise<number>;
  touch(id: string, at: number): Promise<void>;
  /** Puts the token in review mode or out of it; false when no such id. Takes effect for the next request. */
  setReview(id: string, review: boolean): Promise<boolean>;
}

/** What `tokens.add` throws, on every backend, for a token whose id or hash another token has. */
export function duplicateTokenError(field: 'id' | 'hash'): EngramError {
  return new EngramError(
    'CONFLICT',
    `another token has the same ${field}: each token's id and hash must be unique, so nothing was added.`,
  );
}
