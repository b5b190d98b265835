/**
 * A backend that offers the memory alone, without the access ports: the Store contract
 * runs its memory parts and reports the tokens, accounts, OAuth and dump parts skipped,
 * each with its reason, as a backend of someone else's would use engram/testing.
 */

import type { Store } from '../../src/memory/port.js';
import { describeStoreContract } from '../../src/storage/contract/index.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';

const ACCESS_PORTS = new Set<PropertyKey>(['tokens', 'accounts', 'oauth', 'proposals']);

/** The in-process store with its access ports hidden from the suite (not from its own methods): a memory-only backend. */
function memoryOnly(): Store {
  const store = openMemoryStore();
  return new Proxy(store, {
    get(target, property) {
      if (ACCESS_PORTS.has(property)) return undefined;
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describeStoreContract('memory only', async () => ({ store: memoryOnly() }), {
  skip: {
    tokens: 'a memory-only backend serves --auth none',
    accounts: 'a memory-only backend serves --auth none',
    oauth: 'a memory-only backend serves --auth none',
    proposals: 'a memory-only backend holds no changes for review',
  },
});
