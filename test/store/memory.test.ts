/** The in-process store held to the shared Store contract and its history half. */

import { openMemoryStore } from '../../src/store/memory/index.js';
import { describeStoreContract } from './contract.js';
import { describeDumpContract } from './contract-dump.js';
import { describeHistoryContract } from './contract-history.js';

describeStoreContract('memory', async ({ now }) => ({ store: openMemoryStore({ now }) }));
describeHistoryContract('memory', async (options) => ({ store: openMemoryStore(options) }));
describeDumpContract('memory', async ({ now }) => ({ store: openMemoryStore({ now }) }));
