/**
 * The SQLite store while another process holds the write lock (here a second connection
 * in BEGIN IMMEDIATE): a write waits on a timer, not on the event loop, so the process
 * keeps answering — the event loop is never held (HELD_LOOP_MS) and reads complete; once
 * the lock is released the write lands; held past the deadline, every kind of write is
 * refused with STORE_BUSY and changes nothing. On each SQLite driver this Node loads
 * (test/helpers/sqlite-drivers.ts).
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/memory/port.js';
import type { StorageBackend } from '../../src/storage/backend.js';
import {
  account,
  appendLine,
  drop,
  grant,
  grantSecret,
  put,
  session,
  token,
} from '../../src/storage/contract/setup.js';
import type { Database } from '../../src/storage/sqlite/driver.js';
import { sqliteDriver } from '../../src/storage/sqlite/drivers.js';
import { openSqliteStore, type SqliteStore, type SqliteStoreOptions } from '../../src/storage/sqlite/index.js';
import { HELD_LOOP_MS, withEventLoopDelay } from '../helpers/event-loop.js';
import { rules } from '../helpers/rules.js';
import { driversUnderTest } from '../helpers/sqlite-drivers.js';

const alice: Caller = { user: 'alice', label: 'busy-test' };

const BUSY_MESSAGE =
  /^The memory's database is busy: another program is writing to it \(.+memory\.db\) and did not finish within 300 ms\. Nothing was changed; try again in a moment\.$/;

/** Whether `promise` has settled by now. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  const marker = Symbol('pending');
  return (
    (await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      Promise.resolve(marker),
    ])) !== marker
  );
}

/** Each SQLite driver (skipped, saying why, where it does not load), with group commit and without. */
const VARIANTS = driversUnderTest().flatMap(({ name: driver, missing }) =>
  [true, false].map((groupCommit) => ({
    title: `SqliteStore on ${driver}, ${groupCommit ? 'with' : 'without'} group commit, while another process holds the write lock${missing === undefined ? '' : ` (skipped: ${missing})`}`,
    driver,
    groupCommit,
    missing,
  })),
);

/** Every write path of the store, on a store holding one live and one dropped entry, a token, an account with a session, and a grant with its code. */
const WRITES: Record<string, (store: StorageBackend) => Promise<unknown>> = {
  mutateAll: (store) =>
    store.mutateAll(alice, (entries) => entries.map(({ name }) => ({ name, change: { kind: 'drop' } })), rules),
  undrop: (store) => store.undrop(alice, 'topics/dropped', rules),
  purge: (store) => store.purge('alice', 'topics/dropped', { includeLive: false }),
  purgeTrash: (store) => store.purgeTrash(Number.MAX_SAFE_INTEGER),
  load: (store) =>
    store.load(
      { entries: [], users: [], tokens: [], accounts: [], clients: [], grants: [], grantSecrets: [], proposals: [] },
      { replace: true },
    ),
  'tokens.add': (store) => store.tokens.add(token('t2')),
  'tokens.revoke': (store) => store.tokens.revoke('t1'),
  'tokens.touch': (store) => store.tokens.touch('t1', 42),
  'accounts.put': (store) => store.accounts.put(account('bob')),
  'accounts.remove': (store) => store.accounts.remove('alice'),
  'accounts.addSession': (store) => store.accounts.addSession(session('s2')),
  'grants.addGrant': (store) => store.oauth.saveGrant(grant('g2'), grantSecret('c2', 'g2')),
  'grants.addSecrets': (store) => store.oauth.saveSecrets('g1', [grantSecret('a1', 'g1', { kind: 'access' })]),
  'grants.redeem': (store) => store.oauth.consume(grantSecret('c1', 'g1').hash, 42),
  'grants.revokeGrant': (store) => store.oauth.revokeByGrantId('g1'),
};

for (const { title, driver, groupCommit, missing } of VARIANTS)
  describe.skipIf(missing !== undefined)(title, () => {
    let folder: string;
    let path: string;
    let other: Database;
    const opened: SqliteStore[] = [];

    function open(options: Partial<SqliteStoreOptions> = {}): SqliteStore {
      const store = openSqliteStore({ path, accelerators: { groupCommit }, driver, ...options });
      opened.push(store);
      return store;
    }

    beforeEach(async () => {
      folder = await mkdtemp(join(tmpdir(), 'engram-sqlite-busy-'));
      path = join(folder, 'memory.db');
      other = new (sqliteDriver(driver).Database)(path);
    });

    afterEach(async () => {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
      for (const store of opened.splice(0)) await store.close();
      await rm(folder, { recursive: true, force: true });
    });

    it('waits without blocking the event loop, answers reads meanwhile, and writes once the lock is released', async () => {
      const store = open();
      await store.mutate(alice, 'topics/a', appendLine('one'), rules);
      other.exec('BEGIN IMMEDIATE');

      const write = store.mutate(alice, 'topics/a', appendLine('two'), rules);
      const { maxDelayMs: delay } = await withEventLoopDelay(async () => {
        expect(await store.get('alice', ['topics/a'])).toEqual([expect.objectContaining({ body: 'one\n' })]);
        expect(await store.index('alice')).toEqual([{ name: 'topics/a', size: 4, description: 'appended lines' }]);
        await sleep(200);
      });

      expect(await settled(write)).toBe(false);
      expect(delay).toBeLessThan(HELD_LOOP_MS);
      other.exec('COMMIT');
      expect((await write).after).toMatchObject({ body: 'one\ntwo\n', revision: 2 });
    });

    it('opens a database already at the newest schema without waiting for the lock', async () => {
      const first = open();
      await first.mutate(alice, 'topics/a', appendLine('one'), rules);
      other.exec('BEGIN IMMEDIATE');

      const { result: second, maxDelayMs } = await withEventLoopDelay(async () => open({ busyTimeoutMs: 5_000 }));

      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
      expect(await second.index('alice')).toEqual([{ name: 'topics/a', size: 4, description: 'appended lines' }]);
      other.exec('COMMIT');
    });

    /** Starts six appends to topics/log while the lock is held (the last while the first five wait), then releases it. */
    async function appendSixWhileLocked(store: SqliteStore): Promise<number> {
      other.exec('BEGIN IMMEDIATE');
      const writes = Array.from({ length: 5 }, (_, i) =>
        store.mutate(alice, 'topics/log', appendLine(`line ${i}`), rules),
      );
      const { maxDelayMs: delay } = await withEventLoopDelay(() => sleep(100));
      writes.push(store.mutate(alice, 'topics/log', appendLine('line 5'), rules));
      other.exec('COMMIT');
      await Promise.all(writes);
      return delay;
    }

    const sixLines = Array.from({ length: 6 }, (_, i) => `line ${i}`);

    it('loses none of several writes that wait together', async () => {
      const store = open();
      expect(await appendSixWhileLocked(store)).toBeLessThan(HELD_LOOP_MS);
      const [entry] = await store.get('alice', ['topics/log']);
      expect(entry?.body.split('\n').filter(Boolean).sort()).toEqual(sixLines);
      expect(entry?.revision).toBe(6);
    });

    // Only a group commit has a waiting batch: declared in that variant alone, so that no run reports it skipped.
    if (groupCommit) {
      it('retries the waiting batch whole, joined by later writes, in their order of arrival', async () => {
        const store = open();
        await appendSixWhileLocked(store);
        expect((await store.get('alice', ['topics/log']))[0]?.body).toBe(sixLines.map((line) => `${line}\n`).join(''));
      });
    }

    it('refuses a write still waiting at the deadline with STORE_BUSY, changing nothing', async () => {
      const store = open({ busyTimeoutMs: 300 });
      await store.mutate(alice, 'topics/a', appendLine('one'), rules);
      other.exec('BEGIN IMMEDIATE');

      let refusal: unknown;
      const { maxDelayMs: delay } = await withEventLoopDelay(async () => {
        refusal = await store.mutate(alice, 'topics/a', appendLine('two'), rules).catch((error: unknown) => error);
      });

      expect(refusal).toMatchObject({
        name: 'EngramError',
        code: 'STORE_BUSY',
        message: expect.stringMatching(BUSY_MESSAGE),
      });
      expect(delay).toBeLessThan(HELD_LOOP_MS);
      other.exec('COMMIT');
      expect(await store.get('alice', ['topics/a'])).toEqual([expect.objectContaining({ body: 'one\n', revision: 1 })]);
    });
  });

for (const { title, driver, groupCommit, missing } of VARIANTS)
  describe.skipIf(missing !== undefined)(title, () => {
    describe('refuses past the deadline, with STORE_BUSY and changing nothing:', () => {
      /**
       * Each write path (WRITES) waits out a deadline longer than HELD_LOOP_MS, or a loop held
       * until the deadline would go unseen; each on a database and a lock holder of its own, so
       * that the tests wait at once.
       */
      it.concurrent.for(Object.keys(WRITES))('%s', async (operation, { expect, onTestFinished }) => {
        const folder = await mkdtemp(join(tmpdir(), 'engram-sqlite-busy-'));
        const path = join(folder, 'memory.db');
        const other = new (sqliteDriver(driver).Database)(path);
        const store = openSqliteStore({ path, accelerators: { groupCommit }, driver, busyTimeoutMs: 300 });
        onTestFinished(async () => {
          if (other.inTransaction) other.exec('ROLLBACK');
          other.close();
          await store.close();
          await rm(folder, { recursive: true, force: true });
        });
        await store.mutate(alice, 'topics/live', put('live\n'), rules);
        await store.mutate(alice, 'topics/dropped', put('dropped\n'), rules);
        await store.mutate(alice, 'topics/dropped', drop, rules);
        await store.tokens.add(token('t1'));
        await store.accounts.put(account('alice'));
        await store.accounts.addSession(session('s1'));
        await store.oauth.saveGrant(grant('g1'), grantSecret('c1', 'g1'));
        const before = await store.dump();
        const sessions = await store.accounts.listSessions();
        other.exec('BEGIN IMMEDIATE');

        let refusal: unknown;
        const { maxDelayMs: delay } = await withEventLoopDelay(async () => {
          refusal = await WRITES[operation]!(store).catch((error: unknown) => error);
        });

        expect(refusal).toMatchObject({ code: 'STORE_BUSY', message: expect.stringMatching(BUSY_MESSAGE) });
        expect(delay).toBeLessThan(HELD_LOOP_MS);
        other.exec('COMMIT');
        expect(await store.dump()).toEqual(before);
        expect(await store.accounts.listSessions()).toEqual(sessions);
      });
    });
  });
