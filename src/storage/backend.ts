/**
 * What each of Engram's backends (in-process, SQLite, PostgreSQL) offers: the memory port
 * and, beside it in the same database, the three access ports and the proposals. The services take only the
 * port they serve (createAccess a TokenStore, the OAuth services an OAuthStore); a backend
 * of someone else's may offer the memory alone (engram/store, engram/testing).
 */

import type { AccessStorage } from '../access/port.js';
import type { ProposalStore, Store } from '../memory/port.js';

export type StorageBackend = Store &
  AccessStorage & {
    /** Changes held for review (memory/review.ts), in the same database. */
    readonly proposals: ProposalStore;
  };
