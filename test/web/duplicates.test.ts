/**
 * The Possible duplicates page in Debian's Chromium against a real `engram serve`, on
 * SQLite and on PostgreSQL: two entries assistants wrote about one subject are listed as a
 * pair with what is alike, an unrelated one is not; Merge into one asks to confirm, then
 * the kept entry holds the other's description and text under a heading and the other is
 * in the trash; Undo the merge puts both back byte for byte. Cancel changes nothing.
 */

import { describe, expect, it } from 'vitest';
import { type EngramOptions, getJson, mcpWrite, startEngram, watchedPagesAt, webBackends } from './fixtures.js';

const page = watchedPagesAt();
const backends = await webBackends();

const COFFEE = {
  name: 'topics/coffee',
  description: 'How the user takes coffee',
  new: 'Flat white, oat milk.\nTwo a day.',
};
const HABITS = {
  name: 'topics/coffee-habits',
  description: 'How the user takes their coffee',
  new: 'Flat white with oat milk; two a day, none after 2 pm.',
};

describe.each(backends)('on %s', (_, options: () => Promise<EngramOptions>) => {
  it('lists a pair, merges one into the other once confirmed, and undoes the merge exactly', async () => {
    const engram = await startEngram(await options());
    await mcpWrite(engram, COFFEE, { client: 'claude-desktop' });
    await mcpWrite(engram, HABITS, { client: 'chatgpt' });
    await mcpWrite(engram, { name: 'topics/tea', description: 'Teas the user likes', new: 'Sencha.' });
    const entry = async (name: string) => (await getJson(engram, `/api/entries/${name}`)).entry;
    const before = { coffee: await entry('topics/coffee'), habits: await entry('topics/coffee-habits') };

    const tab = await page(engram, '/');
    await tab.getByRole('link', { name: 'Possible duplicates' }).click();
    await tab.getByRole('heading', { name: 'Possible duplicates' }).waitFor();
    const pair = tab.getByRole('listitem', { name: 'topics/coffee and topics/coffee-habits' });
    await pair.getByText(/descriptions \d+% alike/).waitFor();
    await expect(tab.getByRole('listitem').count()).resolves.toBe(1);

    // Cancel changes nothing.
    await pair.getByRole('button', { name: 'Merge into topics/coffee', exact: true }).click();
    await pair.getByRole('group', { name: 'Merge topics/coffee-habits into topics/coffee?' }).waitFor();
    await pair.getByRole('button', { name: 'Cancel' }).click();
    await expect(pair.getByRole('button', { name: 'Merge', exact: true }).count()).resolves.toBe(0);

    await pair.getByRole('button', { name: 'Merge into topics/coffee', exact: true }).click();
    await pair.getByRole('button', { name: 'Merge', exact: true }).click();
    await tab
      .getByText('Merged topics/coffee-habits into topics/coffee; topics/coffee-habits is in the trash.')
      .waitFor();
    await tab.getByText('No entries look alike among 2.').waitFor();
    const merged = await entry('topics/coffee');
    expect(merged.body).toBe(
      `${COFFEE.new}\n\n## Merged from topics/coffee-habits\n\n${HABITS.description}\n\n${HABITS.new}\n`,
    );
    expect(merged.description).toBe(COFFEE.description);
    const { trash } = (await getJson(engram, '/api/trash')) as { trash: { name: string }[] };
    expect(trash.map((item) => item.name)).toEqual(['topics/coffee-habits']);

    await tab.getByRole('button', { name: 'Undo the merge' }).click();
    await tab.getByText('Undone: topics/coffee and topics/coffee-habits are back as they were.').waitFor();
    await tab.getByRole('listitem', { name: 'topics/coffee and topics/coffee-habits' }).waitFor();
    const after = { coffee: await entry('topics/coffee'), habits: await entry('topics/coffee-habits') };
    expect(after.coffee.body).toBe(before.coffee.body);
    expect(after.coffee.description).toBe(before.coffee.description);
    expect(after.habits.body).toBe(before.habits.body);
    expect(after.habits.description).toBe(before.habits.description);
  });
});
