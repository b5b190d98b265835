/**
 * Word of changes across processes (storage/change-feed.ts): a change committed through
 * another store on the same database — another process — reaches a watcher of this one,
 * on SQLite (a second connection to the file) and on PostgreSQL (a second pool); another
 * user's never does. The feed itself, what it polls and when it stops, is
 * change-feed-polling.test.ts.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { MemoryChange } from '../../src/memory/activity.js';
import type { Caller, Store } from '../../src/memory/port.js';
import { appendLine } from '../../src/storage/contract/setup.js';
import { openPostgresStore } from '../../src/storage/postgres/index.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { createTestDatabase, findTestPostgres, type TestDatabase } from '../helpers/postgres.js';
import { rules } from '../helpers/rules.js';

const alice: Caller = { user: 'alice', label: 'other process' };
const bob: Caller = { user: 'bob', label: 'other process' };
const TOLD_WITHIN_MS = 10_000;

const server = await findTestPostgres();

/** Two stores on one database: `watched`, and `other`, which stands for another process. */
type Pair = { readonly watched: Store; readonly other: Store };

function describeAcrossStores(label: string, openPair: () => Promise<Pair>) {
  describe(`changes committed through another store: ${label}`, () => {
    let pair: Pair;
    const stopped: Array<() => void> = [];

    afterEach(async () => {
      for (const stop of stopped.splice(0)) stop();
      await pair.watched.close();
      await pair.other.close();
    });

    /**
     * Watches alice on the watched store, after a change of this store is told (so the
     * watch has its baseline): what is told from then on, and the version of that change.
     */
    async function watchAlice(): Promise<{ told: MemoryChange[]; ownVersion: number }> {
      pair = await openPair();
      const all: MemoryChange[] = [];
      stopped.push(await pair.watched.watch('alice', (change) => all.push(change)));
      await pair.watched.mutate({ user: 'alice', label: 'this process' }, 'notes/here', appendLine('here'), rules);
      await vi.waitFor(() => expect(all.some((change) => change.name === 'notes/here')).toBe(true), TOLD_WITHIN_MS);
      const own = all.find((change) => change.name === 'notes/here') as MemoryChange;
      expect(own).toMatchObject({ revision: 1, operation: 'create' });
      // A poll may have read the same change first (told without details); that is all it may have told.
      const told = all.splice(0);
      expect(new Set(told.map((change) => change.version))).toEqual(new Set([own.version]));
      return { told: all, ownVersion: own.version };
    }

    it('are told to a watcher of their user, with a greater version', async () => {
      const { told, ownVersion } = await watchAlice();
      await pair.other.mutate(alice, 'notes/there', appendLine('there'), rules);
      await vi.waitFor(() => expect(told).toHaveLength(1), TOLD_WITHIN_MS);
      expect((told[0] as MemoryChange).version).toBeGreaterThan(ownVersion);
    });

    it("of another user are never told: alice's watcher hears only alice's change after bob's", async () => {
      const { told, ownVersion } = await watchAlice();
      await pair.other.mutate(bob, 'notes/bob', appendLine('bob'), rules);
      await pair.other.mutate(bob, 'notes/bob', appendLine('bob again'), rules);
      await pair.other.mutate(alice, 'notes/there', appendLine('there'), rules);
      await vi.waitFor(() => expect(told.length).toBeGreaterThanOrEqual(1), TOLD_WITHIN_MS);
      // Bob's changes moved only bob's counter: alice's moved once since her own change.
      expect(told).toEqual([{ version: ownVersion + 1 }]);
    });
  });
}

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'engram-change-feed-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

let files = 0;
describeAcrossStores('SQLite, two connections to one file', async () => {
  const path = join(folder, `memory-${files++}.db`);
  return { watched: openSqliteStore({ path }), other: openSqliteStore({ path }) };
});

describe.skipIf(!server)('PostgreSQL', () => {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });
  describeAcrossStores('PostgreSQL, two pools on one database', async () => {
    const database = await createTestDatabase(server as string);
    databases.push(database);
    const watched = await openPostgresStore({ connectionString: database.url });
    const other = await openPostgresStore({ connectionString: database.url });
    return { watched, other };
  });
});
