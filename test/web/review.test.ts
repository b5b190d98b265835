/**
 * The Review page in Debian's Chromium against a real `engram serve --auth token`, on
 * SQLite and on PostgreSQL: an assistant with a review-mode token writes and drops over
 * MCP; the person, signed in with a password, sees the header count and each change with
 * its diff, approves one (it applies), rejects another (nothing changes), and is refused
 * an approval that another change made a conflict; a new proposal appears, and the count
 * moves, without a reload. On the Access page they create a review-mode token and put a
 * token out of review mode. No page may open a dialog, request anything from elsewhere,
 * throw, or break the CSP.
 */

import { describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/fixtures.js';
import {
  addUser,
  createToken,
  type Engram,
  type EngramOptions,
  mcpWrite,
  startEngram,
  watchedPages,
  webBackends,
} from './fixtures.js';

const PASSWORD = 'correct horse battery staple';

const openWatched = watchedPages();
const backends = await webBackends();

/** A page signed in as ada with the password. */
async function signedIn(engram: Engram) {
  const watched = await openWatched(engram);
  const { page } = watched;
  await page.goto(`${engram.origin}/`);
  await page.getByLabel('User').fill('ada');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Activity' }).waitFor();
  return watched;
}

/** `engram ARGS` on the server's database, in this process. */
async function engramCli(engram: Engram, ...args: string[]): Promise<string> {
  const run = await runInProcess([...args, '--user', 'ada', ...engram.storeArgs], engram.env);
  if (run.code !== 0) throw new Error(`engram ${args.join(' ')} failed: ${run.stderr}`);
  return run.stdout;
}

describe.each(backends)('on %s', (_, options: () => Promise<EngramOptions>) => {
  it('approves, rejects, refuses a conflict, and shows new proposals and the count without a reload', async () => {
    const engram = await startEngram({ ...(await options()), auth: 'token' });
    await addUser(engram, 'ada', PASSWORD);
    await engramCli(engram, 'write', 'topics/tea', '-d', 'Teas', '--new', 'Green.');
    await engramCli(engram, 'write', 'topics/editor', '-d', 'Editor', '--new', 'Uses Helix.');
    const token = await createToken(engram, 'ada', ['--review', '--label', 'Claude']);
    const assistant = { token, client: 'Claude' };
    await mcpWrite(engram, { name: 'topics/tea', new: 'Matcha.' }, assistant);
    await mcpWrite(engram, { name: 'topics/coffee', description: 'Coffee', new: 'None.' }, assistant);
    await mcpWrite(engram, { name: 'topics/editor', old: 'Helix', new: 'Kakoune' }, assistant);

    const { page } = await signedIn(engram);
    await page.getByRole('link', { name: 'Review, 3 waiting' }).click();
    await page.getByRole('heading', { name: 'Review' }).waitFor();
    const tea = page.getByRole('listitem', { name: 'Claude wants to append to topics/tea' });
    await expect.poll(() => tea.getByLabel('Differences').textContent()).toContain('+Matcha.');
    await page.evaluate('window.notReloaded = true');

    await tea.getByRole('button', { name: "Approve Claude's change to topics/tea" }).click();
    await page.getByRole('status').filter({ hasText: "Approved Claude's change to topics/tea." }).waitFor();
    expect(await engramCli(engram, 'open', 'topics/tea')).toContain('Green.\nMatcha.');

    const coffee = page.getByRole('listitem', { name: 'Claude wants to create topics/coffee' });
    await coffee.getByRole('button', { name: "Reject Claude's change to topics/coffee" }).click();
    await page.getByRole('status').filter({ hasText: 'nothing was changed' }).waitFor();
    await expect.poll(() => coffee.count()).toBe(0);

    // Another change to the text the edit replaces: the page marks it, live, and Approve is refused.
    await engramCli(engram, 'write', 'topics/editor', '--old', 'Helix', '--new', 'Vim');
    const editor = page.getByRole('listitem', { name: 'Claude wants to edit topics/editor' });
    await editor.getByRole('note').filter({ hasText: 'Conflict:' }).waitFor();
    await editor.getByRole('button', { name: "Approve Claude's change to topics/editor" }).click();
    await page.getByRole('alert').filter({ hasText: 'no longer applies' }).waitFor();
    expect(await engramCli(engram, 'open', 'topics/editor')).toContain('Uses Vim.');

    // A new proposal shows, and the header counts it, without a reload.
    await page.getByRole('link', { name: 'Review, 1 waiting' }).waitFor();
    await mcpWrite(engram, { name: 'topics/tea' }, { ...assistant, tool: 'memory_drop' });
    await page.getByRole('listitem', { name: 'Claude wants to drop topics/tea' }).waitFor();
    await page.getByRole('link', { name: 'Review, 2 waiting' }).waitFor();
    expect(await page.evaluate('window.notReloaded')).toBe(true);
  });

  it('creates a review-mode token on the Access page, and takes a token out of review mode', async () => {
    const engram = await startEngram({ ...(await options()), auth: 'token' });
    await addUser(engram, 'ada', PASSWORD);
    const { page } = await signedIn(engram);
    await page.getByRole('link', { name: 'Access' }).click();
    await page.getByLabel('Label').fill('Claude');
    await page.getByRole('combobox', { name: 'Access' }).selectOption('review');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = await page.getByRole('region', { name: 'New token' }).getByLabel('New token').inputValue();
    const row = page.getByRole('listitem').filter({ hasText: 'Claude' });
    await row.getByText('changes reviewed').waitFor();

    expect(await mcpWrite(engram, { name: 'topics/me', description: 'Me', new: 'Ada.' }, { token: secret })).toMatch(
      /^Saved for the user's review/,
    );
    await row.getByLabel('Changes need my review').uncheck();
    await page.getByRole('status').filter({ hasText: "Claude's changes now apply at once" }).waitFor();
    expect(await mcpWrite(engram, { name: 'topics/you', description: 'You', new: 'Bob.' }, { token: secret })).toBe(
      'topics/you (5 bytes): You',
    );
  });
});
