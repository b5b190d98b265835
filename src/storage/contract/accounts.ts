/**
 * The accounts part of the Store contract (AccountStore, as `store.accounts`: accounts
 * and browser sessions), written once and run against every backend by
 * `describeStoreContract` (index.ts), or alone. Nothing here may know which backend it is testing.
 */

import { describe, expect, it } from 'vitest';
import type { AccountStore } from '../../access/accounts/port.js';
import { accessPort, account, type OpenStore, START, session, storesPerTest } from './setup.js';

const DUPLICATE_SESSION = 'another session has the same id or hash, so nothing was added.';

export function describeAccountContract(label: string, open: OpenStore): void {
  describe(`AccountStore contract: ${label}`, () => {
    const { keep } = storesPerTest();

    /** The accounts of a fresh, empty store; the teardown closes the store. */
    async function accountStore(): Promise<AccountStore> {
      return accessPort(await keep(open()), 'accounts');
    }

    /** The accounts of a fresh store holding only those of alice and bob, whose sessions the tests keep. */
    async function sessionStore(): Promise<AccountStore> {
      const accounts = await accountStore();
      for (const user of ['alice', 'bob']) await accounts.put(account(user));
      return accounts;
    }

    describe('accounts', () => {
      it('start with none, and no sessions', async () => {
        const accounts = await accountStore();

        expect(await accounts.list()).toEqual([]);
        expect(await accounts.get('alice')).toBeUndefined();
        expect(await accounts.listSessions()).toEqual([]);
      });

      it('keep every field, a missing password included, listed by user name in code-point order', async () => {
        const accounts = await accountStore();
        const noPassword = account('bob', { passwordHash: undefined, created: START + 1, updated: START + 2 });
        for (const user of ['zed', 'émile', 'alice']) await accounts.put(account(user));
        await accounts.put(noPassword);

        expect(await accounts.get('bob')).toEqual(noPassword);
        expect(await accounts.get('alice')).toEqual(account('alice'));
        expect(await accounts.get('carol')).toBeUndefined();
        expect((await accounts.list()).map((kept) => kept.user)).toEqual(['alice', 'bob', 'zed', 'émile']);
        expect(await accounts.list()).toContainEqual(noPassword);
      });

      it('are replaced whole by a put of the same user', async () => {
        const accounts = await accountStore();
        await accounts.put(account('alice'));
        const replaced = account('alice', { passwordHash: 'scrypt$new', created: START + 5, updated: START + 9 });

        await accounts.put(replaced);

        expect(await accounts.get('alice')).toEqual(replaced);
        expect(await accounts.list()).toEqual([replaced]);
      });

      it('are removed with every session of their user, and no one else’s; an unknown user is false', async () => {
        const accounts = await accountStore();
        await accounts.put(account('alice'));
        await accounts.put(account('bob'));
        await accounts.addSession(session('a1'));
        await accounts.addSession(session('a2'));
        await accounts.addSession(session('b1', { user: 'bob' }));

        expect(await accounts.remove('alice')).toBe(true);
        expect(await accounts.remove('alice')).toBe(false);
        expect(await accounts.remove('carol')).toBe(false);

        expect(await accounts.get('alice')).toBeUndefined();
        expect(await accounts.list()).toEqual([account('bob')]);
        expect(await accounts.listSessions()).toEqual([session('b1', { user: 'bob' })]);
        expect(await accounts.findSession(session('a1').hash)).toBeUndefined();
      });
    });

    describe('sessions', () => {
      it('are kept only for a user with an account: for one without, or removed, false and nothing saved', async () => {
        const accounts = await accountStore();
        expect(await accounts.addSession(session('a1'))).toBe(false);
        await accounts.put(account('alice'));
        await accounts.remove('alice');
        expect(await accounts.addSession(session('a2'))).toBe(false);

        expect(await accounts.listSessions()).toEqual([]);
        expect(await accounts.findSession(session('a1').hash)).toBeUndefined();
        expect(await accounts.findSession(session('a2').hash)).toBeUndefined();
        await accounts.put(account('alice'));
        expect(await accounts.addSession(session('a1'))).toBe(true);
        expect(await accounts.listSessions()).toEqual([session('a1')]);
      });

      it('added while their account is removed are each refused or removed with it, none left', async () => {
        const accounts = await accountStore();
        await accounts.put(account('alice'));
        const ids = Array.from({ length: 10 }, (_, i) => `r${i}`);

        await Promise.all([
          ...ids.slice(0, 5).map((id) => accounts.addSession(session(id))),
          accounts.remove('alice'),
          ...ids.slice(5).map((id) => accounts.addSession(session(id))),
        ]);

        expect(await accounts.get('alice')).toBeUndefined();
        expect(await accounts.listSessions()).toEqual([]);
      });

      it('keep every field, found by hash whether expired or not; an unknown hash is undefined', async () => {
        const accounts = await sessionStore();
        const used = session('a1', { agent: 'Firefox "141", ✓', created: START + 1, lastUsed: START + 7 });
        const expired = session('a2', { expires: START - 1 });
        await accounts.addSession(used);
        await accounts.addSession(expired);

        expect(await accounts.findSession(used.hash)).toEqual(used);
        expect(await accounts.findSession(expired.hash)).toEqual(expired);
        expect(await accounts.findSession('f'.repeat(64))).toBeUndefined();
      });

      it('refuse a taken id with CONFLICT, changing nothing', async () => {
        const accounts = await sessionStore();
        await accounts.addSession(session('a1'));

        await expect(accounts.addSession(session('a1', { hash: 'e'.repeat(64) }))).rejects.toMatchObject({
          name: 'EngramError',
          code: 'CONFLICT',
          message: DUPLICATE_SESSION,
        });

        expect(await accounts.listSessions()).toEqual([session('a1')]);
        expect(await accounts.findSession('e'.repeat(64))).toBeUndefined();
      });

      it('refuse a taken hash with CONFLICT, changing nothing', async () => {
        const accounts = await sessionStore();
        await accounts.addSession(session('a1'));

        await expect(accounts.addSession(session('a2', { hash: session('a1').hash }))).rejects.toMatchObject({
          name: 'EngramError',
          code: 'CONFLICT',
          message: DUPLICATE_SESSION,
        });

        expect(await accounts.listSessions()).toEqual([session('a1')]);
        expect(await accounts.findSession(session('a1').hash)).toEqual(session('a1'));
      });

      it('are listed oldest first (then by id), every user’s or one user’s', async () => {
        const accounts = await sessionStore();
        const sessions = [
          session('a3', { created: START + 3 }),
          session('b1', { user: 'bob', created: START + 2 }),
          session('a2', { created: START + 1 }),
          session('a1', { created: START + 1 }),
        ];
        for (const kept of sessions) await accounts.addSession(kept);

        expect((await accounts.listSessions()).map((kept) => kept.id)).toEqual(['a1', 'a2', 'b1', 'a3']);
        expect(await accounts.listSessions('alice')).toEqual([sessions[3], sessions[2], sessions[0]]);
        expect(await accounts.listSessions('bob')).toEqual([sessions[1]]);
        expect(await accounts.listSessions('carol')).toEqual([]);
      });

      it('record when they were last used, an unknown id ignored', async () => {
        const accounts = await sessionStore();
        await accounts.addSession(session('a1'));
        await accounts.addSession(session('a2'));

        await accounts.touchSession('a1', START + 5_000);
        await accounts.touchSession('missing', START + 6_000);

        expect(await accounts.findSession(session('a1').hash)).toEqual(session('a1', { lastUsed: START + 5_000 }));
        expect(await accounts.listSessions()).toEqual([session('a1', { lastUsed: START + 5_000 }), session('a2')]);
      });

      it('end one by id: no longer found; an unknown id is false', async () => {
        const accounts = await sessionStore();
        await accounts.addSession(session('a1'));
        await accounts.addSession(session('a2'));

        expect(await accounts.removeSession('a1')).toBe(true);
        expect(await accounts.removeSession('a1')).toBe(false);
        expect(await accounts.removeSession('zz')).toBe(false);

        expect(await accounts.findSession(session('a1').hash)).toBeUndefined();
        expect(await accounts.listSessions()).toEqual([session('a2')]);
      });

      it('end every one of a user, counted, keeping the account and other users’ sessions', async () => {
        const accounts = await sessionStore();
        await accounts.put(account('alice'));
        for (const id of ['a1', 'a2', 'a3']) await accounts.addSession(session(id));
        await accounts.addSession(session('b1', { user: 'bob' }));

        expect(await accounts.removeSessionsOf('alice')).toBe(3);
        expect(await accounts.removeSessionsOf('alice')).toBe(0);

        expect(await accounts.listSessions()).toEqual([session('b1', { user: 'bob' })]);
        expect(await accounts.get('alice')).toEqual(account('alice'));
      });

      it('that expired at or before a time are deleted, counted; later ones stay', async () => {
        const accounts = await sessionStore();
        const now = START + 10_000;
        await accounts.addSession(session('past', { expires: now - 1 }));
        await accounts.addSession(session('now', { expires: now }));
        await accounts.addSession(session('later', { expires: now + 1, user: 'bob' }));

        expect(await accounts.removeExpiredSessions(now)).toBe(2);
        expect(await accounts.removeExpiredSessions(now)).toBe(0);

        expect(await accounts.listSessions()).toEqual([session('later', { expires: now + 1, user: 'bob' })]);
      });
    });
  });
}
