/** The in-process store held to the whole Store contract (entries, recovery, dump, tokens). */

import { openMemoryStore } from '../../src/store/memory/index.js';
import { describeStoreContract } from '../../src/testing/index.js';

describeStoreContract('memory', async () => ({ store: openMemoryStore() }));
