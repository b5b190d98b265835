/** The in-process store held to the shared Store contract and its history, dump and token halves. */

import { openMemoryStore } from '../../src/store/memory/index.js';
import { describeStoreContract } from './contract.js';
import { describeDumpContract } from './contract-dump.js';
import { describeHistoryContract } from './contract-history.js';
import { describeTokenContract } from './contract-tokens.js';

describeStoreContract('memory', async ({ now }) => ({ store: openMemoryStore({ now }) }));
describeHistoryContract('memory', async (options) => ({ store: openMemoryStore(options) }));
describeDumpContract('memory', async ({ now }) => ({ store: openMemoryStore({ now }) }));
describeTokenContract('memory', async ({ now }) => ({ store: openMemoryStore({ now }) }));
