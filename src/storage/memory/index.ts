/** The in-process backend's entry point: `openMemoryStore()`. */

import { MemoryStore } from './store.js';

export { MemoryStore };

export function openMemoryStore(): MemoryStore {
  return new MemoryStore();
}
