/**
 * The storage remote sign-in needs (DESIGN §8), offered by a backend beside the memory
 * port (memory/port.ts) and in the same database: three small ports, each defined in the
 * folder of the feature it serves — static tokens (tokens/port.ts), accounts and browser
 * sessions (accounts/port.ts), OAuth clients, grants and their secrets (oauth/port.ts).
 * A backend of someone else's may offer any of them, or none (then only `--auth none`).
 */

import { EngramError } from '../memory/model/errors.js';
import type { AccountStore } from './accounts/port.js';
import type { OAuthStore } from './oauth/port.js';
import type { RateCounters } from './rate-limits/port.js';
import type { TokenStore } from './tokens/port.js';

export type { AccountRecord, AccountStore, SessionRecord } from './accounts/port.js';
export type {
  ClientRecord,
  ExpiredRemoval,
  GrantRecord,
  GrantSecretKind,
  GrantSecretRecord,
  OAuthStore,
  Redemption,
} from './oauth/port.js';
export { duplicateTokenError, type TokenRecord, type TokenStore } from './tokens/port.js';

/** The access ports a backend offers beside its memory, as Engram's three backends do. */
export interface AccessStorage {
  /** The bearer tokens of `--auth token`. */
  readonly tokens: TokenStore;
  /** Accounts (passwords) and signed-in browsers. */
  readonly accounts: AccountStore;
  /** OAuth clients, grants (connected apps) and their codes and tokens. */
  readonly oauth: OAuthStore;
  /**
   * Rate-limit counters shared by every server on this database (PostgreSQL); a backend
   * that only one server uses leaves them out, and the server counts in its own memory.
   */
  readonly rateCounters?: RateCounters;
}

/** What addSession, saveClient and saveGrant throw, on every backend, for a key already taken. */
export function duplicateKeyError(what: 'session' | 'client' | 'grant'): EngramError {
  return new EngramError('CONFLICT', `another ${what} has the same id or hash, so nothing was added.`);
}
