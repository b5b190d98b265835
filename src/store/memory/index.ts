/** The in-process backend's entry point: `openMemoryStore()`. */

import { MemoryStore, type MemoryStoreOptions } from './store.js';

export { MemoryStore, type MemoryStoreOptions };

export function openMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  return new MemoryStore(options);
}
