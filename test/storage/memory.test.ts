/** The in-process store held to the whole Store contract (entries, recovery, dump, tokens). */

import { describeStoreContract } from '../../src/storage/contract/index.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';

describeStoreContract('memory', async () => ({ store: openMemoryStore() }));
