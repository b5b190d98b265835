/**
 * Signing in to the web UI of `engram serve --auth token` in Chromium: a user added with
 * `engram user add --password-stdin` signs in with their password (a wrong one is told
 * so), sees their memory and only theirs, lists their signed-in browsers, signs another
 * one out, and signs out; a pasted token works for the tab; the session cookie is
 * HttpOnly, SameSite=Strict; past the sign-in rate limit, the page says so and how long to wait.
 * Run on SQLite, and on PostgreSQL when one is reachable.
 */

import { describe, expect, it } from 'vitest';
import { addUser, createToken, type Engram, mcpWrite, startEngram, watchedPages, webBackends } from './fixtures.js';

const PASSWORD = 'correct horse battery staple';

const openWatched = watchedPages();
const backends = await webBackends();

async function open(engram: Engram) {
  const watched = await openWatched(engram);
  await watched.page.goto(`${engram.origin}/`);
  return watched;
}

describe.each(backends)('on %s', (_, options) => {
  async function server(): Promise<Engram> {
    const engram = await startEngram({ ...(await options()), auth: 'token' });
    await addUser(engram, 'alice', PASSWORD);
    await addUser(engram, 'bob', PASSWORD);
    const alice = await createToken(engram, 'alice');
    const bob = await createToken(engram, 'bob');
    await mcpWrite(engram, { name: 'topics/tea', description: 'Alice likes tea', new: 'Green.' }, { token: alice });
    await mcpWrite(engram, { name: 'topics/coffee', description: 'Bob likes coffee', new: 'Black.' }, { token: bob });
    return engram;
  }

  it('signs in with a password (a wrong one is told so), shows only their memory, lists sessions, revokes one, signs out', async () => {
    const engram = await server();
    const { page, context } = await open(engram);
    await page.getByRole('heading', { name: 'Sign in to Engram' }).waitFor();
    await page.getByLabel('User').fill('alice');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('Wrong user name or password.').waitFor();

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'topics/tea' }).waitFor();
    expect(await page.getByRole('link', { name: 'topics/coffee' }).count()).toBe(0);
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'engram_session', httpOnly: true, sameSite: 'Strict', secure: false });

    await page.getByRole('link', { name: 'topics/tea' }).click();
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Body').fill('Green.\nOolong.\n');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/revision 2/).waitFor();

    // Signed in in another browser too: listed beside this one, and signed out from here.
    const other = await open(engram);
    await other.page.getByLabel('User').fill('alice');
    await other.page.getByLabel('Password').fill(PASSWORD);
    await other.page.getByRole('button', { name: 'Sign in' }).click();
    await other.page.getByRole('link', { name: 'topics/tea' }).waitFor();
    await page.getByRole('link', { name: 'Sessions' }).click();
    await page.getByText('this browser').waitFor();
    const sessions = page.locator('.sessions li');
    await expect.poll(() => sessions.count()).toBe(2);
    await sessions
      .filter({ hasNotText: 'this browser' })
      .getByRole('button', { name: /^Sign out/ })
      .click();
    await expect.poll(() => sessions.count()).toBe(1);
    await other.page.reload();
    await other.page.getByRole('heading', { name: 'Sign in to Engram' }).waitFor();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in to Engram' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to Engram' }).waitFor();
  });

  it('says plainly when sign-ins are rate-limited, and how long to wait', async () => {
    const engram = await startEngram({ ...(await options()), auth: 'token', config: { rateLimit: 'sign-in=1/min' } });
    await addUser(engram, 'alice', PASSWORD);
    const { page } = await open(engram);
    await page.getByLabel('User').fill('alice');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('Wrong user name or password.').waitFor();
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('alert')
      .getByText(
        /^Too many failed sign-ins as this user \(the server takes 1 failed sign-in per user a minute\)\. Wait \d+ seconds?, then sign in again\.$/,
      )
      .waitFor();
  });

  it('takes a pasted token for this tab', async () => {
    const engram = await server();
    const token = await createToken(engram, 'bob');
    const { page } = await open(engram);
    await page.getByText('Use a token instead').click();
    await page.getByLabel('Token').fill('engram_not_a_token');
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.getByRole('alert').getByText('That token was not accepted').waitFor();
    await page.getByLabel('Token').fill(token);
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.getByRole('link', { name: 'topics/coffee' }).waitFor();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in to Engram' }).waitFor();
  });
});
