/** The PostgreSQL backend's entry point: `await openPostgresStore({ connectionString })`. */

import { PostgresStore, type PostgresStoreOptions } from './store.js';

export { PostgresStore, type PostgresStoreOptions };

/** Connects, migrates, and resolves to a ready store; rejects with STORE_UNAVAILABLE when the database cannot be reached. */
export function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  return PostgresStore.open(options);
}
