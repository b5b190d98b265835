/**
 * StoreHealth.ready on each backend, what /readyz asks: it resolves while the store answers
 * with the schema this Engram writes, and rejects with a store error in words when the
 * store is closed or its schema version is another's.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openMemoryStore } from '../../src/storage/memory/index.js';
import { openPostgresStore } from '../../src/storage/postgres/index.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { createTestDatabase, findTestPostgres, queryPostgres } from '../helpers/postgres.js';

const postgres = await findTestPostgres();

const unavailable = (message: RegExp) =>
  expect.objectContaining({ code: 'STORE_UNAVAILABLE', message: expect.stringMatching(message) });

describe('StoreHealth.ready', () => {
  it('in-process: ready while open, not once closed', async () => {
    const store = openMemoryStore();
    await expect(store.ready()).resolves.toBeUndefined();
    await store.close();
    await expect(store.ready()).rejects.toEqual(unavailable(/closed/));
  });

  it("SQLite: ready while its schema is this Engram's, not when another's or once closed", async () => {
    const folder = mkdtempSync(join(tmpdir(), 'engram-health-'));
    onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
    const path = join(folder, 'memory.db');
    const store = openSqliteStore({ path });
    const other = new Database(path);
    await expect(store.ready()).resolves.toBeUndefined();

    other.exec('UPDATE schema_version SET version = version + 1');
    await expect(store.ready()).rejects.toEqual(unavailable(/a newer Engram upgraded it; upgrade this one$/));
    other.exec('DELETE FROM schema_version');
    await expect(store.ready()).rejects.toEqual(unavailable(/records no schema version/));
    other.close();
    await store.close();
    await expect(store.ready()).rejects.toThrow();
  });

  it.runIf(postgres)(
    "PostgreSQL: ready while its schema is this Engram's, not when another's or once closed",
    async () => {
      const database = await createTestDatabase(postgres!);
      onTestFinished(() => database.drop());
      const store = await openPostgresStore({ connectionString: database.url });
      await expect(store.ready()).resolves.toBeUndefined();

      await queryPostgres(database.url, 'UPDATE schema_version SET version = version - 1');
      await expect(store.ready()).rejects.toEqual(unavailable(/restart engram serve to upgrade it$/));
      await store.close();
      await expect(store.ready()).rejects.toThrow();
    },
  );
});
