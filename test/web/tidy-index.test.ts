/**
 * Tidying from the index page, in Debian's Chromium against a real `engram serve`, on
 * SQLite and on PostgreSQL: entries written 200 days ago, one opened by an assistant
 * yesterday, one 100 days ago, two never, and one made last week; Engram has recorded
 * openings for 150 days (the database's record of when it began is set back, as that of a
 * memory upgraded then would be). Each row says when it was last opened; "Not opened in 90 days"
 * keeps the two opened longest ago or never, not last week's; "Near the entry cap" keeps
 * the big one; the sorts by last open go either way. A person opening an entry here does
 * not count as an open.
 */

import { describe, expect, it } from 'vitest';
import { type EngramOptions, getJson, startEngram, watchedPagesAt, webBackends } from './fixtures.js';
import { ENTRY_CAP, seedMonthsOfUse } from './tidy-fixtures.js';

const page = watchedPagesAt();
const backends = await webBackends();

const shownNames = (tab: Awaited<ReturnType<typeof page>>) => tab.locator('.entries li .line a').allTextContents();

describe.each(backends)('on %s', (_, options: () => Promise<EngramOptions>) => {
  it('shows when each entry was last opened, and narrows and sorts by it and by size against the cap', async () => {
    const engram = await startEngram({ ...(await options()), config: { entryCap: ENTRY_CAP } });
    await seedMonthsOfUse(engram, Date.now());
    const tab = await page(engram, '/');
    const row = (name: string) => tab.locator('.entries li', { has: tab.getByRole('link', { name, exact: true }) });
    await row('topics/tea').getByText('opened yesterday').waitFor();
    await row('topics/editor')
      .getByText(/^opened 3 months ago$/)
      .waitFor();
    await row('topics/old-laptop')
      .getByText(/^not opened since /)
      .waitFor();
    await row('topics/new').getByText('never opened').waitFor();

    await tab.getByLabel('Show').selectOption('unopened');
    await expect.poll(() => shownNames(tab)).toEqual(['topics/big', 'topics/editor', 'topics/old-laptop']);
    // The records began 150 days ago: no notice that they are young.
    await expect(tab.getByText('Engram has recorded when assistants open entries since').count()).resolves.toBe(0);

    await tab.getByLabel('Show').selectOption('near-cap');
    await expect.poll(() => shownNames(tab)).toEqual(['topics/big']);

    await tab.getByLabel('Show').selectOption('all');
    await tab.getByLabel('Sort').selectOption('unopened');
    await expect
      .poll(() => shownNames(tab))
      .toEqual(['topics/big', 'topics/old-laptop', 'topics/editor', 'topics/new', 'topics/tea']);
    await tab.getByLabel('Sort').selectOption('opened');
    await expect
      .poll(() => shownNames(tab))
      .toEqual(['topics/tea', 'topics/editor', 'topics/new', 'topics/big', 'topics/old-laptop']);

    // A person reading an entry here is not an assistant opening it.
    await tab.getByRole('link', { name: 'topics/old-laptop' }).click();
    await tab.getByText('Arch, i3.').waitFor();
    const { entries } = await getJson(engram, '/api/entries');
    expect(entries.find((entry: { name: string }) => entry.name === 'topics/old-laptop').opened).toBeNull();
  });
});
