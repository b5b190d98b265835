/**
 * Live updates with a token pasted into the web UI (`engram serve --auth token`), in
 * Chromium, on SQLite and PostgreSQL: EventSource cannot send the token, so the page reads
 * the event stream with fetch(); a write an assistant makes with the same user's token
 * shows in the index and in the open entry without a reload. No page may open a dialog,
 * request anything from elsewhere, throw, or break the CSP.
 */

import { describe, expect, it } from 'vitest';
import { createToken, mcpWrite, startEngram, watchedPages, webBackends } from './fixtures.js';

const openWatched = watchedPages();
const backends = await webBackends();

describe.each(backends)('on %s', (_, options) => {
  it('shows an assistant’s writes without a reload, in the index and in the open entry', async () => {
    const engram = await startEngram({ ...(await options()), auth: 'token' });
    const token = await createToken(engram, 'bob');
    await mcpWrite(engram, { name: 'topics/tea', description: 'Teas I like', new: 'Green.' }, { token });
    const { page } = await openWatched(engram);
    await page.goto(`${engram.origin}/`);
    await page.getByText('Use a token instead').click();
    await page.getByLabel('Token').fill(token);
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.getByRole('link', { name: 'topics/tea' }).waitFor();
    // A mark in the page's window: still there at the end means the page was never reloaded.
    await page.evaluate('window.notReloaded = true');
    // Made before the stream listens, a write shows on its `ready`; after, on its `change`: either way, by the stream.
    await mcpWrite(engram, { name: 'people/bob', description: 'Bob, a colleague', new: 'Compilers.' }, { token });
    const bob = page.locator('li', { has: page.getByRole('link', { name: 'people/bob', exact: true }) });
    await expect.poll(() => bob.textContent()).toContain('Bob, a colleague');

    await page.getByRole('link', { name: 'topics/tea' }).click();
    await page.getByRole('button', { name: 'Edit' }).waitFor();
    await mcpWrite(engram, { name: 'topics/tea', new: '- Matcha' }, { token });
    await expect.poll(() => page.locator('.markdown').textContent()).toContain('Matcha');
    expect(await page.evaluate('window.notReloaded')).toBe(true);
  });
});
