/**
 * What each of Engram's backends (in-process, SQLite, PostgreSQL) offers: the memory port
 * and, beside it in the same database, the three access ports and the proposals, and what a server watching
 * its store asks of it (StoreHealth). The services take only the port they serve
 * (createAccess a TokenStore, the OAuth services an OAuthStore); a backend of someone
 * else's may offer the memory alone (engram/store, engram/testing).
 */

import type { AccessStorage } from '../access/port.js';
import type { ProposalStore, Store } from '../memory/port.js';

/** What `engram serve` asks of its store to tell whether it can serve (/readyz) and how it commits (/metrics). */
export interface StoreHealth {
  /**
   * Resolves when the store answers a real query and its schema is the version this Engram
   * writes; rejects otherwise, with an EngramError (STORE_UNAVAILABLE, STORE_REPLACED…) in words.
   */
  ready(): Promise<void>;
  /**
   * Tells `observer` the number of writes of each group commit (SQLite's accelerator,
   * group-commit.ts); undefined stops telling. Backends without group commit have none.
   */
  observeCommitBatches?(observer: ((writes: number) => void) | undefined): void;
}

export type StorageBackend = Store &
  AccessStorage &
  StoreHealth & {
    /** Changes held for review (memory/review.ts), in the same database. */
    readonly proposals: ProposalStore;
  };
