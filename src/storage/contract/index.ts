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
 */

import { describeAccountContract } from './accounts.js';
import { describeActivityContract } from './activity.js';
import { describeDumpContract } from './dump.js';
import { describeEntryContract } from './entries.js';
import { describeGrantContract } from './grants.js';
import { describeMemoryContract } from './memory.js';
import { describeRecoveryContract } from './recovery.js';
import { describeSearchContract } from './search.js';
import type { OpenStore } from './setup.js';
import { describeTokenContract } from './tokens.js';

export type { OpenedStore, OpenStore } from './setup.js';
export {
  describeAccountContract,
  describeActivityContract,
  describeDumpContract,
  describeEntryContract,
  describeGrantContract,
  describeMemoryContract,
  describeRecoveryContract,
  describeSearchContract,
  describeTokenContract,
};

/**
 * The whole Store contract: one describe block per port (entries, recovery, activity, dump,
 * search, tokens, accounts, grants), then the Memory service over the store, whose policy and
 * clock must hold.
 */
export function describeStoreContract(name: string, open: OpenStore): void {
  describeEntryContract(name, open);
  describeRecoveryContract(name, open);
  describeActivityContract(name, open);
  describeDumpContract(name, open);
  describeSearchContract(name, open);
  describeTokenContract(name, open);
  describeAccountContract(name, open);
  describeGrantContract(name, open);
  describeMemoryContract(name, open);
}
