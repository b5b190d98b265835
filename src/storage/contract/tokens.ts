/**
 * The tokens part of the Store contract (TokenStore, as `store.tokens`: add, list, find
 * by hash, touch, revoke one or all of a user's), written once and run against every
 * backend by `describeStoreContract` (index.ts), or alone. Nothing here may know which
 * backend it is testing.
 */

import { describe, expect, it } from 'vitest';
import type { TokenStore } from '../../access/tokens/port.js';
import { accessPort, type OpenStore, START, storesPerTest, token } from './setup.js';

export function describeTokenContract(label: string, open: OpenStore): void {
  describe(`TokenStore contract: ${label}`, () => {
    const { keep } = storesPerTest();

    /** The tokens of a fresh, empty store; the teardown closes the store. */
    async function tokenStore(): Promise<TokenStore> {
      return accessPort(await keep(open()), 'tokens');
    }

    it('starts with no tokens', async () => {
      expect(await (await tokenStore()).list()).toEqual([]);
    });

    it('keeps every field of an added token, listed in order of creation', async () => {
      const tokens = await tokenStore();
      const readOnly = token('b1', { user: 'bob', readOnly: true, created: START + 2_000, lastUsed: START + 2_500 });
      await tokens.add(token('a1'));
      await tokens.add(readOnly);
      expect(await tokens.list()).toEqual([token('a1'), readOnly]);
      expect(await tokens.findByHash(readOnly.hash)).toEqual(readOnly);
      expect(await tokens.findByHash('f'.repeat(64))).toBeUndefined();
    });

    it('refuses a second token with the same id, keeping the first', async () => {
      const tokens = await tokenStore();
      await tokens.add(token('a1'));
      await expect(tokens.add(token('a1', { label: 'other', hash: 'e'.repeat(64) }))).rejects.toMatchObject({
        name: 'EngramError',
        code: 'CONFLICT',
        message: "another token has the same id: each token's id and hash must be unique, so nothing was added.",
      });
      expect(await tokens.list()).toEqual([token('a1')]);
    });

    it('refuses a second token with the same hash, keeping the first', async () => {
      const tokens = await tokenStore();
      await tokens.add(token('a1'));
      await expect(tokens.add(token('b1', { hash: token('a1').hash }))).rejects.toMatchObject({
        name: 'EngramError',
        code: 'CONFLICT',
        message: "another token has the same hash: each token's id and hash must be unique, so nothing was added.",
      });
      expect(await tokens.list()).toEqual([token('a1')]);
      expect(await tokens.findByHash(token('a1').hash)).toEqual(token('a1'));
    });

    it('records when a token was last used, ignoring an unknown id', async () => {
      const tokens = await tokenStore();
      await tokens.add(token('a1'));
      await tokens.touch('a1', START + 5_000);
      await tokens.touch('missing', START + 6_000);
      expect(await tokens.findByHash(token('a1').hash)).toEqual(token('a1', { lastUsed: START + 5_000 }));
      expect(await tokens.list()).toEqual([token('a1', { lastUsed: START + 5_000 })]);
    });

    it('revokes by id: the token is no longer found or listed; an unknown id is false', async () => {
      const tokens = await tokenStore();
      await tokens.add(token('a1'));
      await tokens.add(token('b1'));
      expect(await tokens.revoke('a1')).toBe(true);
      expect(await tokens.revoke('a1')).toBe(false);
      expect(await tokens.revoke('zz')).toBe(false);
      expect(await tokens.findByHash(token('a1').hash)).toBeUndefined();
      expect(await tokens.list()).toEqual([token('b1')]);
    });

    it("lists one user's tokens alone", async () => {
      const tokens = await tokenStore();
      const bobs = [
        token('b1', { user: 'bob', created: START + 1_000 }),
        token('b2', { user: 'bob', created: START + 3_000 }),
      ];
      await tokens.add(bobs[1]!);
      await tokens.add(token('a1', { created: START + 2_000 }));
      await tokens.add(bobs[0]!);
      expect(await tokens.list('bob')).toEqual(expect.arrayContaining(bobs));
      expect(await tokens.list('bob')).toHaveLength(2);
      expect(await tokens.list('carol')).toEqual([]);
    });

    it("revokes every token of one user at once, and no one else's; how many", async () => {
      const tokens = await tokenStore();
      await tokens.add(token('b1', { user: 'bob' }));
      await tokens.add(token('a1'));
      await tokens.add(token('b2', { user: 'bob' }));
      expect(await tokens.revokeAllOf('bob')).toBe(2);
      expect(await tokens.revokeAllOf('bob')).toBe(0);
      expect(await tokens.findByHash(token('b1', { user: 'bob' }).hash)).toBeUndefined();
      expect(await tokens.list()).toEqual([token('a1')]);
    });
  });
}
