/**
 * The access page in Debian's Chromium against a real `engram serve`: signed in with a
 * password, a person creates a token (shown once, copied, with the llama.cpp WebUI and
 * Claude Code lines; it works at once) and revokes it (it stops working), sees only their
 * own tokens; under --auth oauth they see the apps they connected, not another user's, and
 * disconnect one. On SQLite and on PostgreSQL. No page may open a dialog, request anything
 * from elsewhere, throw, or break the CSP.
 */

import { describe, expect, it } from 'vitest';
import { ensureAccount } from '../helpers/account-holder.js';
import {
  addUser,
  createToken,
  type Engram,
  type EngramOptions,
  startEngram,
  storeOf,
  watchedPages,
  webBackends,
} from './fixtures.js';

const PASSWORD = 'correct horse battery staple';

const openWatched = watchedPages();
const backends = await webBackends();

/** A page signed in as `user` with the password, on the access page. */
async function signedIn(engram: Engram, user: string) {
  const watched = await openWatched(engram);
  const { page } = watched;
  await page.goto(`${engram.origin}/`);
  await page.getByLabel('User').fill(user);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Access' }).click();
  await page.getByRole('heading', { name: 'Access' }).waitFor();
  return watched;
}

const entriesWith = (engram: Engram, token: string) =>
  fetch(`${engram.origin}/api/entries`, { headers: { Authorization: `Bearer ${token}` } });

describe.each(backends)('on %s', (_, options: () => Promise<EngramOptions>) => {
  describe('tokens', () => {
    it('creates a token shown once, with Copy and the client lines, and revokes it', async () => {
      const engram = await startEngram({ ...(await options()), auth: 'token' });
      await addUser(engram, 'alice', PASSWORD);
      await addUser(engram, 'bob', PASSWORD);
      await createToken(engram, 'bob');
      const { page, context } = await signedIn(engram, 'alice');
      await page.getByText('No tokens.').waitFor();
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: engram.origin });

      await page.getByLabel('Label').fill('llama.cpp <b>WebUI</b>');
      await page.getByRole('button', { name: 'Create token' }).click();
      const created = page.getByRole('region', { name: 'New token' });
      const secret = await created.getByLabel('New token').inputValue();
      expect(secret).toMatch(/^engram_/);
      expect(await created.textContent()).toContain(`Authorization: Bearer ${secret}`);
      expect(await created.textContent()).toContain(
        `claude mcp add --transport http engram ${engram.origin}/mcp --header "Authorization: Bearer ${secret}"`,
      );
      expect(await created.locator('b').count()).toBe(0);
      await created.getByRole('button', { name: 'Copy' }).click();
      await created.getByRole('button', { name: 'Copied' }).waitFor();
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
      expect((await entriesWith(engram, secret)).status).toBe(200);

      // Shown once: after a reload the token is listed by its label, its secret nowhere.
      await page.reload();
      const row = page.getByRole('listitem').filter({ hasText: 'llama.cpp <b>WebUI</b>' });
      await expect.poll(() => row.textContent()).toContain('last used');
      expect(await page.content()).not.toContain(secret);
      expect(await page.getByRole('listitem').count()).toBe(1);

      await row.getByRole('button', { name: 'Revoke token llama.cpp <b>WebUI</b>' }).click();
      await page
        .getByRole('status')
        .getByText(/Revoked the token/)
        .waitFor();
      await page.getByText('No tokens.').waitFor();
      expect((await entriesWith(engram, secret)).status).toBe(401);
    });
  });

  describe('connected apps', () => {
    it("lists the user's own connected apps, not another user's, and disconnects one", async () => {
      const engram = await startEngram({ ...(await options()), auth: 'oauth' });
      await addUser(engram, 'ada', PASSWORD);
      const store = await storeOf(engram);
      const now = Date.now();
      const grant = (id: string, user: string, clientName: string) =>
        store.oauth.saveGrant(
          {
            id,
            user,
            clientId: `https://${id}.example/client.json`,
            clientName,
            readOnly: false,
            resource: `${engram.origin}/mcp`,
            created: now,
            lastUsed: undefined,
            review: false,
          },
          {
            hash: `code-of-${id}`,
            grantId: id,
            kind: 'code',
            created: now,
            expires: now + 60_000,
            used: undefined,
            data: '{}',
          },
        );
      try {
        await ensureAccount(store.accounts, 'bob', now);
        await grant('claude', 'ada', 'Claude');
        await grant('chatgpt', 'bob', 'ChatGPT');
      } finally {
        await store.close();
      }
      const { page } = await signedIn(engram, 'ada');
      const row = page.getByRole('listitem').filter({ hasText: 'Claude' });
      await expect.poll(() => row.textContent()).toContain('reads and writes');
      expect(await page.getByText('ChatGPT').count()).toBe(0);
      await row.getByRole('button', { name: 'Revoke app Claude' }).click();
      await page
        .getByRole('status')
        .getByText('Disconnected Claude: it must be allowed again to reach this memory.')
        .waitFor();
      await page.getByText('No apps connected.').waitFor();
    });
  });
});
