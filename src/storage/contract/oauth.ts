/**
 * The OAuth part of the Store contract (OAuthStore, as `store.oauth`: OAuth clients,
 * grants and their codes and tokens), written once and run against every backend by
 * `describeStoreContract` (index.ts), or alone. Consuming once is raced here within one
 * process; a backend shared by processes must hold it across them too. The token
 * service's refresh, raced over the store, ends the file: what it needs of consume and
 * saveSecrets.
 * Nothing here may know which backend it is testing.
 */

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AccountStore } from '../../access/accounts/port.js';
import type { OAuthStore } from '../../access/oauth/port.js';
import { hashSecret, newSecret } from '../../access/oauth/secrets.js';
import { OAuthTokens, REFRESH_REUSE_GRACE_MS } from '../../access/oauth/tokens.js';
import { accessPort, account, client, grant, grantSecret, type OpenStore, START, storesPerTest } from './setup.js';

const DUPLICATE_CLIENT = 'another client has the same id or hash, so nothing was added.';
const DUPLICATE_GRANT = 'another grant has the same id or hash, so nothing was added.';

export function describeOAuthContract(label: string, open: OpenStore): void {
  describe(`OAuthStore contract: ${label}`, () => {
    const { keep } = storesPerTest();

    /** The OAuth port of a fresh store holding only the accounts of alice and bob, whose grants the tests keep; the teardown closes the store. */
    async function grantStore(): Promise<OAuthStore> {
      return (await storeWithAccounts()).grants;
    }

    /** A fresh store's accounts and OAuth ports, with the accounts of alice and bob. */
    async function storeWithAccounts(): Promise<{ accounts: AccountStore; grants: OAuthStore }> {
      const store = await keep(open());
      const accounts = accessPort(store, 'accounts');
      for (const user of ['alice', 'bob']) await accounts.put(account(user));
      return { accounts, grants: accessPort(store, 'oauth') };
    }

    describe('clients', () => {
      it('keep every field, found by id and counted; an unknown id is undefined', async () => {
        const grants = await grantStore();
        expect(await grants.countClients()).toBe(0);
        const awkward = client('c2', { name: 'App "two", ✓', redirectUris: [], created: START + 1 });

        await grants.saveClient(client('c1'));
        await grants.saveClient(awkward);

        expect(await grants.findClient('c1')).toEqual(client('c1'));
        expect(await grants.findClient('c2')).toEqual(awkward);
        expect(await grants.findClient('c3')).toBeUndefined();
        expect(await grants.countClients()).toBe(2);
      });

      it('refuse a taken id with CONFLICT, keeping the first', async () => {
        const grants = await grantStore();
        await grants.saveClient(client('c1'));

        await expect(grants.saveClient(client('c1', { name: 'Other' }))).rejects.toMatchObject({
          name: 'EngramError',
          code: 'CONFLICT',
          message: DUPLICATE_CLIENT,
        });

        expect(await grants.findClient('c1')).toEqual(client('c1'));
        expect(await grants.countClients()).toBe(1);
      });

      it('that registered before a time and that no grant names are removed, counted; the others stay', async () => {
        const grants = await grantStore();
        const cutoff = START + 10_000;
        await grants.saveClient(client('c1', { created: cutoff - 1 }));
        await grants.saveClient(client('old', { created: cutoff - 1 }));
        await grants.saveClient(client('recent', { created: cutoff }));
        await grants.saveGrant(grant('g1'), grantSecret('k1', 'g1'));

        expect(await grants.removeUnusedClients(cutoff, cutoff)).toBe(1);
        expect(await grants.removeUnusedClients(cutoff, cutoff)).toBe(0);

        expect(await grants.findClient('old')).toBeUndefined();
        expect(await grants.findClient('c1')).toEqual(client('c1', { created: cutoff - 1 }));
        expect(await grants.findClient('recent')).toEqual(client('recent', { created: cutoff }));
        expect(await grants.countClients()).toBe(2);
        expect(await grants.listGrants()).toEqual([grant('g1')]);
      });

      it('no grant names give way oldest first (then by id), counted, whenever they registered; a used one never', async () => {
        const grants = await grantStore();
        await grants.saveClient(client('c1', { created: START - 10 }));
        await grants.saveClient(client('b', { created: START }));
        await grants.saveClient(client('a', { created: START }));
        await grants.saveClient(client('newest', { created: START + 1 }));
        await grants.saveGrant(grant('g1'), grantSecret('k1', 'g1'));

        expect(await grants.removeOldestUnusedClients(0, START)).toBe(0);
        expect(await grants.removeOldestUnusedClients(1, START)).toBe(1);
        expect(await grants.findClient('a')).toBeUndefined();
        expect(await grants.findClient('b')).toBeDefined();
        expect(await grants.removeOldestUnusedClients(5, START)).toBe(2);
        expect(await grants.removeOldestUnusedClients(5, START)).toBe(0);

        expect(await grants.findClient('c1')).toEqual(client('c1', { created: START - 10 }));
        expect(await grants.countClients()).toBe(1);
        expect(await grants.listGrants()).toEqual([grant('g1')]);
      });

      it('whose consent page was shown since a time are kept, by age and at the cap alike; shown before it, they go', async () => {
        const grants = await grantStore();
        const cutoff = START + 10_000;
        await grants.saveClient(client('deciding', { created: START - 10 }));
        await grants.saveClient(client('shown-long-ago', { created: START - 5 }));
        await grants.saveClient(client('flood', { created: START }));
        await grants.markClientShown('deciding', cutoff);
        await grants.markClientShown('shown-long-ago', cutoff - 1);
        // An unknown id changes nothing.
        await grants.markClientShown('nobody', cutoff);

        expect(await grants.removeOldestUnusedClients(1, cutoff)).toBe(1);
        expect(await grants.findClient('shown-long-ago')).toBeUndefined();
        expect(await grants.removeUnusedClients(cutoff, cutoff)).toBe(1);
        expect(await grants.findClient('flood')).toBeUndefined();
        expect(await grants.removeOldestUnusedClients(5, cutoff)).toBe(0);
        expect(await grants.removeUnusedClients(cutoff, cutoff)).toBe(0);
        expect(await grants.findClient('deciding')).toEqual(client('deciding', { created: START - 10 }));
        expect(await grants.countClients()).toBe(1);

        // Shown again later, the later time counts; once it is past, the client goes like any other.
        await grants.markClientShown('deciding', cutoff + 5);
        expect(await grants.removeOldestUnusedClients(1, cutoff + 5)).toBe(0);
        expect(await grants.removeOldestUnusedClients(1, cutoff + 6)).toBe(1);
        expect(await grants.countClients()).toBe(0);
      });

      it('are removed once the last grant naming them is revoked', async () => {
        const grants = await grantStore();
        await grants.saveClient(client('c1'));
        await grants.saveGrant(grant('g1'), grantSecret('k1', 'g1'));
        await grants.saveGrant(grant('g2'), grantSecret('k2', 'g2'));

        await grants.revokeByGrantId('g1');
        expect(await grants.removeUnusedClients(START + 1, START + 1)).toBe(0);
        await grants.revokeByGrantId('g2');
        expect(await grants.removeUnusedClients(START + 1, START + 1)).toBe(1);
        expect(await grants.countClients()).toBe(0);
      });
    });

    describe('grants', () => {
      it('start with none', async () => {
        const grants = await grantStore();

        expect(await grants.listGrants()).toEqual([]);
        expect(await grants.findGrant('g1')).toBeUndefined();
      });

      it('are kept with their code, every field of both', async () => {
        const grants = await grantStore();
        const readOnly = grant('g1', { readOnly: true, clientName: 'App "one", ✓', lastUsed: START + 3 });
        const code = grantSecret('c1', 'g1', { data: JSON.stringify({ redirectUri: 'http://127.0.0.1:8123/cb' }) });

        await grants.saveGrant(readOnly, code);

        expect(await grants.findGrant('g1')).toEqual(readOnly);
        expect(await grants.listGrants()).toEqual([readOnly]);
        expect(await grants.findSecret(code.hash)).toEqual(code);
        expect(await grants.findGrant('g2')).toBeUndefined();
      });

      it('are kept only for a user with an account: for one without, or removed, false and nothing saved', async () => {
        const { accounts, grants } = await storeWithAccounts();
        expect(await grants.saveGrant(grant('g1', { user: 'carol' }), grantSecret('c1', 'g1'))).toBe(false);
        await accounts.remove('alice');
        expect(await grants.saveGrant(grant('g2'), grantSecret('c2', 'g2'))).toBe(false);

        expect(await grants.listGrants()).toEqual([]);
        expect(await grants.findSecret(grantSecret('c1', 'g1').hash)).toBeUndefined();
        expect(await grants.findSecret(grantSecret('c2', 'g2').hash)).toBeUndefined();
        expect(await grants.saveGrant(grant('g3', { user: 'bob' }), grantSecret('c3', 'g3'))).toBe(true);
        expect(await grants.listGrants()).toEqual([grant('g3', { user: 'bob' })]);
      });

      it('saved while their user is removed (account, then grants) are each refused or revoked, none left', async () => {
        const { accounts, grants } = await storeWithAccounts();
        const ids = Array.from({ length: 10 }, (_, i) => `r${i}`);
        const save = (id: string) => grants.saveGrant(grant(id), grantSecret(`c-${id}`, id));

        await Promise.all([
          ...ids.slice(0, 5).map(save),
          accounts.remove('alice').then(() => grants.revokeByUser('alice')),
          ...ids.slice(5).map(save),
        ]);

        expect(await grants.listGrants()).toEqual([]);
      });

      it('refuse a taken id with CONFLICT, adding neither the grant nor its code', async () => {
        const grants = await grantStore();
        await grants.saveGrant(grant('g1'), grantSecret('c1', 'g1'));

        const again = grant('g1', { user: 'bob' });
        await expect(grants.saveGrant(again, grantSecret('c2', 'g1'))).rejects.toMatchObject({
          name: 'EngramError',
          code: 'CONFLICT',
          message: DUPLICATE_GRANT,
        });

        expect(await grants.findSecret(grantSecret('c2', 'g1').hash)).toBeUndefined();
        expect(await grants.listGrants()).toEqual([grant('g1')]);
      });

      it('refuse a code whose hash is taken with CONFLICT, adding neither', async () => {
        const grants = await grantStore();
        await grants.saveGrant(grant('g1'), grantSecret('c1', 'g1'));

        await expect(grants.saveGrant(grant('g2'), grantSecret('c1', 'g2'))).rejects.toMatchObject({
          name: 'EngramError',
          code: 'CONFLICT',
          message: DUPLICATE_GRANT,
        });

        expect(await grants.findGrant('g2')).toBeUndefined();
        expect(await grants.findSecret(grantSecret('c1', 'g1').hash)).toEqual(grantSecret('c1', 'g1'));
      });

      it('are listed oldest first (then by id)', async () => {
        const grants = await grantStore();
        await grants.saveGrant(grant('g3', { created: START + 1 }), grantSecret('c3', 'g3'));
        await grants.saveGrant(grant('g2', { created: START + 2, user: 'bob' }), grantSecret('c2', 'g2'));
        await grants.saveGrant(grant('g1', { created: START + 1 }), grantSecret('c1', 'g1'));

        expect((await grants.listGrants()).map((kept) => kept.id)).toEqual(['g1', 'g3', 'g2']);
      });

      it('record when they were last used, an unknown id ignored', async () => {
        const grants = await grantStore();
        await grants.saveGrant(grant('g1'), grantSecret('c1', 'g1'));

        await grants.touchGrant('g1', START + 5_000);
        await grants.touchGrant('missing', START + 6_000);

        expect(await grants.findGrant('g1')).toEqual(grant('g1', { lastUsed: START + 5_000 }));
        expect(await grants.listGrants()).toEqual([grant('g1', { lastUsed: START + 5_000 })]);
      });

      it('are revoked with every secret they hold, and no other grant’s; an unknown id is false', async () => {
        const grants = await grantStore();
        await grants.saveGrant(grant('g1'), grantSecret('c1', 'g1'));
        await grants.saveSecrets('g1', [grantSecret('r1', 'g1', { kind: 'refresh' })]);
        await grants.saveGrant(grant('g2'), grantSecret('c2', 'g2'));

        expect(await grants.revokeByGrantId('g1')).toBe(true);
        expect(await grants.revokeByGrantId('g1')).toBe(false);
        expect(await grants.revokeByGrantId('zz')).toBe(false);

        expect(await grants.findGrant('g1')).toBeUndefined();
        expect(await grants.findSecret(grantSecret('c1', 'g1').hash)).toBeUndefined();
        expect(await grants.findSecret(grantSecret('r1', 'g1').hash)).toBeUndefined();
        expect(await grants.consume(grantSecret('r1', 'g1').hash, START + 1)).toBeUndefined();
        expect(await grants.listGrants()).toEqual([grant('g2')]);
        expect(await grants.findSecret(grantSecret('c2', 'g2').hash)).toEqual(grantSecret('c2', 'g2'));
      });

      it('of one user are revoked together, counted, with their secrets; other users’ stay', async () => {
        const grants = await grantStore();
        await grants.saveGrant(grant('g1'), grantSecret('c1', 'g1'));
        await grants.saveGrant(grant('g2', { created: START + 1 }), grantSecret('c2', 'g2'));
        await grants.saveGrant(grant('g3', { user: 'bob' }), grantSecret('c3', 'g3'));

        expect(await grants.revokeByUser('alice')).toBe(2);
        expect(await grants.revokeByUser('alice')).toBe(0);

        expect(await grants.listGrants()).toEqual([grant('g3', { user: 'bob' })]);
        expect(await grants.findSecret(grantSecret('c2', 'g2').hash)).toBeUndefined();
        expect(await grants.findSecret(grantSecret('c3', 'g3').hash)).toEqual(grantSecret('c3', 'g3'));
      });
    });

    describe('secrets', () => {
      it('are added to a live grant together, every field kept', async () => {
        const grants = await grantStore();
        await grants.saveGrant(grant('g1'), grantSecret('c1', 'g1'));
        const access = grantSecret('a1', 'g1', { kind: 'access', created: START + 1, expires: START + 3_600_000 });
        const refresh = grantSecret('r1', 'g1', { kind: 'refresh', created: START + 1, expires: START + 7_200_000 });

        expect(await grants.saveSecrets('g1', [access, refresh])).toBe(true);

        expect(await grants.findSecret(access.hash)).toEqual(access);
        expect(await grants.findSecret(refresh.hash)).toEqual(refresh);
        expect(await grants.findSecret('f'.repeat(64))).toBeUndefined();
      });

      it('are refused, none added, when the grant is gone', async () => {
        const grants = await grantStore();
        await grants.saveGrant(grant('g1'), grantSecret('c1', 'g1'));
        await grants.revokeByGrantId('g1');

        expect(await grants.saveSecrets('g1', [grantSecret('a1', 'g1', { kind: 'access' })])).toBe(false);
        expect(await grants.saveSecrets('never', [grantSecret('a2', 'never', { kind: 'access' })])).toBe(false);

        expect(await grants.findSecret(grantSecret('a1', 'g1').hash)).toBeUndefined();
        expect(await grants.findSecret(grantSecret('a2', 'never').hash)).toBeUndefined();
      });

      it('whose hash is taken are refused with CONFLICT, none of the batch added', async () => {
        const grants = await grantStore();
        await grants.saveGrant(grant('g1'), grantSecret('c1', 'g1'));
        const fresh = grantSecret('a1', 'g1', { kind: 'access' });

        await expect(
          grants.saveSecrets('g1', [fresh, grantSecret('c1', 'g1', { kind: 'refresh' })]),
        ).rejects.toMatchObject({ name: 'EngramError', code: 'CONFLICT', message: DUPLICATE_GRANT });

        expect(await grants.findSecret(fresh.hash)).toBeUndefined();
        expect(await grants.findSecret(grantSecret('c1', 'g1').hash)).toEqual(grantSecret('c1', 'g1'));
      });

      it('are redeemed once: first true, marked used at that time; then false, still used at the first time', async () => {
        const grants = await grantStore();
        const code = grantSecret('c1', 'g1');
        await grants.saveGrant(grant('g1'), code);

        expect(await grants.consume(code.hash, START + 10)).toEqual({
          secret: { ...code, used: START + 10 },
          first: true,
        });
        expect(await grants.consume(code.hash, START + 20)).toEqual({
          secret: { ...code, used: START + 10 },
          first: false,
        });
        expect(await grants.findSecret(code.hash)).toEqual({ ...code, used: START + 10 });
      });

      it('that are unknown redeem to undefined', async () => {
        const grants = await grantStore();

        expect(await grants.consume('f'.repeat(64), START)).toBeUndefined();
      });

      it('redeemed by ten callers at once are redeemed first by exactly one', async () => {
        const grants = await grantStore();
        const refresh = grantSecret('r1', 'g1', { kind: 'refresh' });
        await grants.saveGrant(grant('g1'), grantSecret('c1', 'g1'));
        await grants.saveSecrets('g1', [refresh]);

        const redemptions = await Promise.all(
          Array.from({ length: 10 }, (_, i) => grants.consume(refresh.hash, START + 100 + i)),
        );

        const firsts = redemptions.filter((redemption) => redemption?.first);
        expect(firsts).toHaveLength(1);
        const used = firsts[0]!.secret.used;
        expect(redemptions.map((redemption) => redemption?.secret)).toEqual(
          Array.from({ length: 10 }, () => ({ ...refresh, used })),
        );
        expect(await grants.findSecret(refresh.hash)).toEqual({ ...refresh, used });
      });

      it('that expired at or before a time are deleted, counted; later ones and their grant stay', async () => {
        const grants = await grantStore();
        const now = START + 10_000;
        const later = grantSecret('r1', 'g1', { kind: 'refresh', expires: now + 1 });
        await grants.saveGrant(grant('g1'), grantSecret('c1', 'g1', { expires: now - 1 }));
        await grants.saveSecrets('g1', [grantSecret('a1', 'g1', { kind: 'access', expires: now }), later]);

        expect(await grants.removeExpired(now)).toEqual({ secrets: 2, grants: 0 });
        expect(await grants.removeExpired(now)).toEqual({ secrets: 0, grants: 0 });

        expect(await grants.findSecret(grantSecret('c1', 'g1').hash)).toBeUndefined();
        expect(await grants.findSecret(grantSecret('a1', 'g1').hash)).toBeUndefined();
        expect(await grants.findSecret(later.hash)).toEqual(later);
        expect(await grants.listGrants()).toEqual([grant('g1')]);
      });

      it('that all expired take their grant along, in the same step, counted; a grant with a live secret stays', async () => {
        const grants = await grantStore();
        const now = START + 10_000;
        // A code never exchanged; tokens that all expired (the code redeemed); one live refresh token among dead ones.
        await grants.saveGrant(grant('unexchanged'), grantSecret('c1', 'unexchanged', { expires: now - 1 }));
        await grants.saveGrant(grant('lapsed'), grantSecret('c2', 'lapsed', { expires: now - 1, used: START + 1 }));
        await grants.saveSecrets('lapsed', [
          grantSecret('a2', 'lapsed', { kind: 'access', expires: now - 1 }),
          grantSecret('r2', 'lapsed', { kind: 'refresh', expires: now }),
        ]);
        const live = grantSecret('r3', 'live', { kind: 'refresh', expires: now + 1 });
        await grants.saveGrant(grant('live', { created: START + 1 }), grantSecret('c3', 'live', { expires: now - 1 }));
        await grants.saveSecrets('live', [live]);

        expect(await grants.removeExpired(now)).toEqual({ secrets: 5, grants: 2 });
        expect(await grants.removeExpired(now)).toEqual({ secrets: 0, grants: 0 });

        expect(await grants.findGrant('unexchanged')).toBeUndefined();
        expect(await grants.findGrant('lapsed')).toBeUndefined();
        expect(await grants.listGrants()).toEqual([grant('live', { created: START + 1 })]);
        expect(await grants.findSecret(live.hash)).toEqual(live);
        expect(await grants.saveSecrets('lapsed', [grantSecret('a9', 'lapsed', { kind: 'access' })])).toBe(false);
      });
    });

    describe('under the token service', () => {
      /** A grant connected through the token service (its code exchanged), on a clock the test moves. */
      async function connected() {
        const grants = await grantStore();
        let clock = START;
        const tokens = new OAuthTokens(grants, { now: () => clock });
        const verifier = 'v'.repeat(43);
        const code = newSecret('code');
        const challenge = createHash('sha256').update(verifier).digest('base64url');
        const data = JSON.stringify({ redirectUri: 'http://127.0.0.1/cb', codeChallenge: challenge });
        await grants.saveGrant(grant('g1'), {
          ...grantSecret('c', 'g1', { expires: START + 60_000, data }),
          hash: hashSecret(code),
        });
        const first = await tokens.exchangeCode({
          code,
          codeVerifier: verifier,
          redirectUri: 'http://127.0.0.1/cb',
          clientId: 'c1',
        });
        const refresh = (refreshToken: string) => tokens.refresh({ refreshToken, clientId: 'c1' });
        return { grants, tokens, first, refresh, advance: (ms: number) => (clock += ms) };
      }

      it('answers refreshes racing with one refresh token with one same pair and keeps the grant', async () => {
        const { grants, tokens, first, refresh } = await connected();

        const answers = await Promise.all(Array.from({ length: 4 }, () => refresh(first.refresh_token)));

        expect(answers.map((answer) => answer.refresh_token)).toEqual(Array(4).fill(answers[0]!.refresh_token));
        expect(answers.map((answer) => answer.access_token)).toEqual(Array(4).fill(answers[0]!.access_token));
        expect(await grants.findGrant('g1')).toEqual(grant('g1'));
        expect(await tokens.authenticate(answers[0]!.access_token, grant('g1').resource)).toMatchObject({
          user: 'alice',
        });
        expect((await refresh(answers[0]!.refresh_token)).token_type).toBe('Bearer');
      });

      it('revoke the grant on a repeat past the grace window, or of a token whose successor rotated too', async () => {
        const late = await connected();
        await late.refresh(late.first.refresh_token);
        late.advance(REFRESH_REUSE_GRACE_MS);
        await expect(late.refresh(late.first.refresh_token)).rejects.toMatchObject({ error: 'invalid_grant' });
        expect(await late.grants.findGrant('g1')).toBeUndefined();

        const older = await connected();
        const second = await older.refresh(older.first.refresh_token);
        await older.refresh(second.refresh_token);
        await expect(older.refresh(older.first.refresh_token)).rejects.toMatchObject({ error: 'invalid_grant' });
        expect(await older.grants.findGrant('g1')).toBeUndefined();
      });
    });
  });
}
