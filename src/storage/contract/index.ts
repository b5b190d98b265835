/**
 * `engram/testing`: the Store contract, the suite every backend of Engram passes, for a
 * backend of your own. Call it in a vitest test file:
 *
 *   import { describeStoreContract } from 'engram/testing';
 *   describeStoreContract('my store', async () => ({ store: await openMyStore(), cleanup: dropMyDatabase }));
 *
 * `open` is called for each test (some tests open more than one store) and must give a
 * new, empty store; the suite closes it, then calls `cleanup`. It needs vitest (an
 * optional peer dependency of engram, needed only by this entry).
 *
 * The memory's parts are every backend's. The access ports (tokens, accounts, OAuth) are
 * offered beside the memory, as `store.tokens`, `store.accounts` and `store.oauth`; a
 * backend that does not offer one skips its part, saying why, as hono's and unstorage's suites
 * let a router or driver skip what it does not do:
 *
 *   describeStoreContract('my store', open, { skip: { oauth: 'this store serves --auth token only' } });
 *
 * The changes held for review are kept beside it too, as `store.proposals` (a backend
 * without them skips that part: `{ skip: { proposals: 'why' } }`).
 *
 * Each part may also be run alone (describeTokenContract, describeAccountContract,
 * describeOAuthContract and the others below).
 */

import { describe, it } from 'vitest';
import { describeAccountContract } from './accounts.js';
import { describeActivityContract } from './activity.js';
import { describeDumpContract } from './dump.js';
import { describeEntryContract } from './entries.js';
import { describeMemoryContract } from './memory.js';
import { describeOAuthContract } from './oauth.js';
import { describeRecoveryContract } from './recovery.js';
import { describeReviewContract } from './review.js';
import { describeSearchContract } from './search.js';
import type { OpenStore } from './setup.js';
import { describeTokenContract } from './tokens.js';

export type { OpenedStore, OpenStore } from './setup.js';
export {
  describeAccountContract,
  describeActivityContract,
  describeDumpContract,
  describeEntryContract,
  describeMemoryContract,
  describeOAuthContract,
  describeRecoveryContract,
  describeReviewContract,
  describeSearchContract,
  describeTokenContract,
};

/** The parts of the contract a backend may leave out: the ports beside the memory it does not offer. */
export type OptionalPart = 'tokens' | 'accounts' | 'oauth' | 'proposals';

export interface ContractOptions {
  /** The parts this backend does not offer, each with the reason, reported as a skipped test. */
  readonly skip?: Partial<Record<OptionalPart, string>>;
}

/**
 * The whole Store contract: one describe block per port (entries, recovery, activity, dump,
 * search, then the ports offered beside the memory: tokens, accounts, OAuth, proposals and
 * the review mode over them), then the Memory service
 * over the store, whose policy and clock must hold. The dump part needs every access
 * port (a dump copies their records), so it is skipped with any of them.
 */
export function describeStoreContract(name: string, open: OpenStore, options: ContractOptions = {}): void {
  const skip = options.skip ?? {};
  const missing = (Object.keys(skip) as OptionalPart[]).filter((part) => skip[part] !== undefined);
  describeEntryContract(name, open);
  describeRecoveryContract(name, open);
  describeActivityContract(name, open);
  if (missing.length === 0) describeDumpContract(name, open);
  else skipped('Store dump contract', name, `a dump copies the ${missing.join(', ')} records, not offered`);
  describeSearchContract(name, open);
  if (skip.tokens === undefined) describeTokenContract(name, open);
  else skipped('TokenStore contract', name, skip.tokens);
  if (skip.accounts === undefined) describeAccountContract(name, open);
  else skipped('AccountStore contract', name, skip.accounts);
  if (skip.oauth === undefined) describeOAuthContract(name, open);
  else skipped('OAuthStore contract', name, skip.oauth);
  if (skip.proposals === undefined) describeReviewContract(name, open);
  else skipped('ProposalStore contract', name, skip.proposals);
  describeMemoryContract(name, open);
}

/** A part left out, shown in the report as one skipped test that gives the reason. */
function skipped(part: string, name: string, reason: string): void {
  describe(`${part}: ${name}`, () => {
    it.skip(`skipped: ${reason}`, () => {});
  });
}
