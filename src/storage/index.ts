/**
 * `engram/store`: the Store port, for a backend of your own. Implement `Store` (the union
 * of EntryStore, RecoveryStore, DumpStore, SearchStore, ActivityStore, ChangeStore, with a
 * TokenStore, an AccountStore, a OAuthStore and a ProposalStore beside them, and
 * RateCounters if several servers share it), persist what `applyChange` and
 * `applyUndrop` return, build each search hit with `searchHit` (words as `searchWords`
 * reads them), keep each user's history under WriteRules.historyCap with `Trim`, tell
 * watchers of changes with a `ChangeFeed`, refuse with the errors below, and prove it with
 * `describeStoreContract` from `engram/testing`. Nothing here opens a database: the
 * backends are in the main entry.
 */

export type { AccountRecord, AccountStore, SessionRecord } from '../access/accounts/port.js';
export type {
  ClientRecord,
  ExpiredRemoval,
  GrantRecord,
  GrantSecretKind,
  GrantSecretRecord,
  OAuthStore,
  Redemption,
} from '../access/oauth/port.js';
export { type AccessStorage, duplicateKeyError } from '../access/port.js';
export type { RateCount, RateCounter, RateCounters } from '../access/rate-limits/port.js';
export type { RateRule } from '../access/rate-limits/rules.js';
export { duplicateTokenError, type TokenRecord, type TokenStore } from '../access/tokens/port.js';
export type {
  ActivityPosition,
  ActivityQuery,
  ActivityRecord,
  ActorCount,
  ChangeListener,
  MemoryChange,
} from '../memory/activity.js';
export {
  type AppliedChange,
  applyChange,
  applyUndrop,
  type ChangeInput,
  entryAfter,
  type UsageDelta,
  writeRules,
} from '../memory/model/apply.js';
export type { Caller } from '../memory/model/caller.js';
export { EngramError, type ErrorCode, isEngramError } from '../memory/model/errors.js';
export type { IndexRow } from '../memory/model/format.js';
export { foldWord, searchText, searchWords } from '../memory/model/search-words.js';
export { entryBytes, revisionBytes } from '../memory/model/usage.js';
export {
  type ActivityStore,
  type Change,
  type ChangeStore,
  type Decide,
  type DecideAll,
  type DumpedEntry,
  type DumpStore,
  type EntryStore,
  type LoadOptions,
  type MutationResult,
  type NamedChange,
  notEmptyError,
  type OpenedEntry,
  type Overview,
  type OverviewRow,
  type ProposalRecord,
  type ProposalStore,
  type RecoveryStore,
  type RevisionOperation,
  type RevisionRecord,
  type SearchStore,
  type Store,
  type StoreDump,
  type StoredEntry,
  type TrashedEntry,
  type UndropCheck,
  type UndropResult,
  type Usage,
  type UserUsage,
  type WriteRules,
} from '../memory/port.js';
export {
  type SearchedEntry,
  type SearchField,
  type SearchHit,
  type SearchSnippet,
  type SearchTerms,
  searchHit,
  searchRank,
} from '../memory/search.js';
export type { StorageBackend, StoreHealth } from './backend.js';
export {
  type ChangeDetails,
  ChangeFeed,
  type ChangeFeedOptions,
  mutationDetails,
  type ReadVersions,
  recordingDecide,
} from './change-feed.js';
export { TRIM_BATCH, Trim } from './history-cap.js';
