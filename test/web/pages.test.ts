/**
 * The web UI's pages about the whole memory, in Debian's Chromium against a real `engram
 * serve` (--auth none, SQLite): an entry's history with the diff between two revisions and
 * Restore; drop, then Undrop and Purge (after its confirmation) in the Trash; activity
 * filtered by assistant; Export downloads the memory; Import shows the server's dry run
 * before it merges; Wipe waits for the word. Memory holding HTML shows as text. No page
 * may open a dialog, request anything from elsewhere, throw, or break the CSP.
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/engram.js';
import { type Engram, getJson, mcpWrite, startEngram, watchedPagesAt, webBackends } from './fixtures.js';

const page = watchedPagesAt();
const backends = await webBackends();

describe.each(backends)('on %s', (_, options) => {
  /** people/ada written three times by two assistants (the last with HTML in it); topics/tea once. */
  async function seeded(): Promise<Engram> {
    const engram = await startEngram(await options());
    await mcpWrite(engram, { name: 'people/ada', description: 'Ada Lovelace', new: 'Wrote the first program.' });
    await mcpWrite(engram, { name: 'people/ada', new: 'Born 1815.' }, { client: 'llama.cpp' });
    await mcpWrite(engram, {
      name: 'people/ada',
      old: 'Born 1815.',
      new: 'Born 1815 <img src=x onerror=alert(1)>.',
      description: 'Ada Lovelace, mathematician',
    });
    await mcpWrite(engram, { name: 'topics/tea', description: 'Teas I like', new: 'Green.' }, { client: 'llama.cpp' });
    return engram;
  }

  describe('history', () => {
    it('lists every revision with who, when and what, diffs any two, and restores one as a new revision', async () => {
      const engram = await seeded();
      const ui = await page(engram, '/entries/people/ada');
      await ui.getByRole('button', { name: 'History' }).click();
      await ui.getByRole('heading', { name: 'History of people/ada' }).waitFor();
      expect(new URL(ui.url()).pathname).toBe('/entries/people/ada/history');
      const third = ui.getByRole('listitem', { name: 'Revision 3' });
      await expect.poll(() => third.textContent()).toContain('claude-code');
      // When: relative, the exact time on hover.
      expect(await third.locator('time').textContent()).toMatch(/(ago|now)$/);
      expect(await third.locator('time').getAttribute('title')).toMatch(/\d{4}/);
      expect(await ui.getByRole('listitem', { name: 'Revision 2' }).textContent()).toMatch(/append[\s\S]*llama\.cpp/);
      // The latest change is shown at once: 2 → 3, the HTML as text.
      const diff = ui.getByLabel('Differences');
      await expect.poll(() => diff.textContent()).toContain('+Born 1815 <img src=x onerror=alert(1)>.');
      expect(await diff.textContent()).toContain('-Born 1815.');
      expect(await ui.locator('.diff img').count()).toBe(0);
      expect(await ui.locator('.described').textContent()).toContain('Ada Lovelace → Ada Lovelace, mathematician');
      await ui.getByLabel('From').selectOption('1');
      // 1 → 3 replaces the 2 → 3 diff, which also adds the <img> line: wait for the line it no longer removes.
      await expect
        .poll(async () => {
          const text = (await diff.textContent()) ?? '';
          return text.includes('+Born 1815 <img') && !text.includes('-Born 1815.');
        })
        .toBe(true);

      await ui.getByRole('listitem', { name: 'Revision 1' }).getByRole('button', { name: 'Restore' }).click();
      await ui.getByRole('status').getByText('Restored revision 1 as revision 4.').waitFor();
      expect(await ui.getByRole('listitem', { name: 'Revision 4' }).textContent()).toMatch(/restore[\s\S]*web/);
      await ui.getByRole('link', { name: 'people/ada' }).click();
      await ui.getByText('Wrote the first program.').waitFor();
      expect(await ui.locator('.description').first().textContent()).toBe('Ada Lovelace');
    });

    it('shows both texts whole, with their sizes, when two revisions are too different to show line by line', async () => {
      const engram = await startEngram(await options());
      await mcpWrite(engram, { name: 'topics/list', description: 'As', new: 'a\n'.repeat(8_000) });
      await mcpWrite(engram, {
        name: 'topics/list',
        description: 'Bs',
        old: 'a\n'.repeat(8_000),
        new: 'b\n'.repeat(8_000),
      });
      const ui = await page(engram, '/entries/topics/list/history');
      await ui
        .getByRole('status')
        .getByText(
          'Revisions 1 and 2 are too different to show line by line: revision 1 has 8,000 lines (15.6 KB), ' +
            'revision 2 has 8,000 lines (15.6 KB).',
          { exact: false },
        )
        .waitFor();
      const first = ui.getByRole('region', { name: 'Revision 1 in full' });
      const second = ui.getByRole('region', { name: 'Revision 2 in full' });
      expect(await first.getByRole('heading').textContent()).toBe('Revision 1: As');
      expect(await first.locator('pre').textContent()).toBe('a\n'.repeat(8_000));
      expect(await second.getByRole('heading').textContent()).toBe('Revision 2: Bs');
      expect(await second.locator('pre').textContent()).toBe('b\n'.repeat(8_000));
      expect(await ui.getByLabel('Differences').count()).toBe(0);
    });
  });

  describe('trash', () => {
    it('drops an entry, finds it in the Trash with its purge date, undrops it, drops it again and purges it', async () => {
      const engram = await seeded();
      const ui = await page(engram, '/entries/topics/tea');
      await ui.getByRole('button', { name: 'Drop' }).click();
      await ui
        .getByRole('status')
        .getByText(/Dropped topics\/tea/)
        .waitFor();
      await ui.getByRole('link', { name: 'Trash' }).click();
      const item = ui.getByRole('listitem', { name: 'topics/tea' });
      await expect
        .poll(() => item.textContent())
        .toMatch(/Teas I like[\s\S]*dropped[\s\S]*by web[\s\S]*purged in 4 weeks/);
      await item.getByRole('button', { name: 'Undrop' }).click();
      await ui.getByRole('status').getByText('topics/tea is back.').waitFor();
      await ui.getByText('The trash is empty.').waitFor();

      await ui.goto(`${engram.origin}/entries/topics/tea`);
      await ui.getByRole('button', { name: 'Drop' }).click();
      await ui
        .getByRole('status')
        .getByText(/Dropped topics\/tea/)
        .waitFor();
      await ui.getByRole('link', { name: 'Trash' }).click();
      await item.getByRole('button', { name: 'Purge' }).click();
      const confirm = ui.getByRole('group', { name: 'Purge topics/tea?' });
      // The keyboard lands on Cancel, and Esc closes the question.
      await expect.poll(() => ui.evaluate('document.activeElement?.textContent')).toBe('Cancel');
      await ui.keyboard.press('Escape');
      expect(await confirm.count()).toBe(0);
      await item.getByRole('button', { name: 'Purge' }).click();
      await confirm.getByRole('button', { name: 'Purge for good' }).click();
      await ui.getByRole('status').getByText('topics/tea was purged for good.').waitFor();
      await ui.getByText('The trash is empty.').waitFor();
      const history = await fetch(`${engram.origin}/api/entries/topics/tea/history`);
      expect(history.status).toBe(404);
    });

    it('lists a name dropped twice once per copy, each with its buttons; Undrop brings back the latest', async () => {
      const engram = await seeded();
      const drop = async () => {
        const response = await fetch(`${engram.origin}/api/entries/topics/tea`, {
          method: 'DELETE',
          headers: { 'X-Engram-CSRF': '1' },
        });
        expect(response.status).toBe(200);
      };
      await drop();
      await mcpWrite(engram, { name: 'topics/tea', description: 'Teas, again', new: 'Oolong.' });
      await drop();
      const ui = await page(engram, '/trash');
      const copies = ui.getByRole('listitem', { name: 'topics/tea' });
      await expect.poll(() => copies.count()).toBe(2);
      expect(await copies.first().textContent()).toContain('Teas, again');
      expect(await copies.nth(1).textContent()).toMatch(/Teas I like[\s\S]*An older copy/);
      await copies.nth(1).getByRole('button', { name: 'Purge' }).click();
      expect(await ui.getByRole('group', { name: 'Purge topics/tea?' }).textContent()).toContain(
        'topics/tea (all 2 dropped copies) and all its history',
      );
      await ui.keyboard.press('Escape');
      await copies.first().getByRole('button', { name: 'Undrop' }).click();
      await ui.getByRole('status').getByText('topics/tea is back.').waitFor();
      await expect.poll(() => copies.count()).toBe(1);
      expect((await getJson(engram, '/api/entries/topics/tea')).entry.description).toBe('Teas, again');
    });
  });

  describe('activity', () => {
    it('shows which assistant wrote what, newest first, filtered by assistant', async () => {
      const engram = await seeded();
      const ui = await page(engram);
      await ui.getByRole('link', { name: 'Activity' }).click();
      await ui.getByRole('heading', { name: 'Activity' }).waitFor();
      const rows = ui.locator('.timeline li');
      await expect.poll(() => rows.count()).toBe(4);
      expect(await rows.first().textContent()).toMatch(/llama\.cpp\s+created\s+topics\/tea/);
      expect(await rows.nth(1).textContent()).toMatch(/claude-code\s+edited\s+people\/ada/);
      await ui.getByLabel('Assistant').selectOption('llama.cpp');
      await expect.poll(() => rows.count()).toBe(2);
      expect(await rows.allTextContents()).toEqual([
        expect.stringMatching(/llama\.cpp\s+created\s+topics\/tea/),
        expect.stringMatching(/llama\.cpp\s+appended to\s+people\/ada/),
      ]);
      await rows.first().getByRole('link', { name: 'topics/tea' }).click();
      await ui.getByRole('heading', { name: 'topics/tea' }).waitFor();
    });

    it('shows a change an assistant makes over MCP without a reload', async () => {
      const engram = await seeded();
      const ui = await page(engram, '/activity');
      const rows = ui.locator('.timeline li');
      await expect.poll(() => rows.count()).toBe(4);
      await mcpWrite(engram, { name: 'topics/rain', description: 'Rain', new: 'Wet.' }, { client: 'chatgpt' });
      await expect.poll(() => rows.count()).toBe(5);
      expect(await rows.first().textContent()).toMatch(/chatgpt\s+created\s+topics\/rain/);
    });
  });

  describe('memory holding HTML', () => {
    it('shows descriptions, bodies and assistant names as text in history, activity and the trash', async () => {
      const engram = await startEngram(await options());
      const html = '<img src=x onerror=alert(1)><b>bold</b>';
      await mcpWrite(engram, { name: 'topics/html', description: html, new: html }, { client: '<i>agent</i>' });
      await mcpWrite(engram, { name: 'topics/html', new: '<script>alert(2)</script>' }, { client: '<i>agent</i>' });
      const ui = await page(engram, '/activity');
      const main = ui.locator('main');
      await expect.poll(() => main.textContent()).toContain(`<i>agent</i> created topics/html`);
      expect(await main.textContent()).toContain(html);
      expect(await main.locator('img, b, i, script').count()).toBe(0);
      await ui.goto(`${engram.origin}/entries/topics/html/history`);
      await expect.poll(() => ui.getByLabel('Differences').textContent()).toContain('+<script>alert(2)</script>');
      expect(await main.textContent()).toContain(html);
      expect(await main.locator('img, b, i, script').count()).toBe(0);
      await ui.goto(`${engram.origin}/entries/topics/html`);
      await ui.getByRole('button', { name: 'Drop' }).click();
      await ui
        .getByRole('status')
        .getByText(/Dropped topics\/html/)
        .waitFor();
      await ui.getByRole('link', { name: 'Trash' }).click();
      await expect.poll(() => main.textContent()).toContain(html);
      expect(await main.locator('img, b, i, script').count()).toBe(0);
    });
  });

  describe('import, export and wipe', () => {
    it('exports the memory as a download', async () => {
      const engram = await seeded();
      const ui = await page(engram, '/transfer');
      const [download] = await Promise.all([
        ui.waitForEvent('download'),
        ui.getByRole('button', { name: 'Export' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe('engram-export.json');
      const document = JSON.parse(readFileSync((await download.path()) ?? '', 'utf8'));
      expect(document.format).toBe('engram-export');
      expect(document.entries.map((entry: { name: string }) => entry.name)).toEqual(['people/ada', 'topics/tea']);
    });

    it('previews an import (added, changed, left) for merge or replace, and merges it only when Import is pressed', async () => {
      const engram = await seeded();
      const file = tempDir().file('backup.json');
      writeFileSync(
        file,
        JSON.stringify({
          format: 'engram-export',
          version: 1,
          entries: [
            { name: 'topics/tea', description: 'Teas I like', body: 'Green.\n' },
            { name: 'topics/coffee', description: 'Coffee', body: 'Flat white.\n' },
            { name: 'people/ada', description: 'Someone else', body: '<script>alert(1)</script>\n' },
          ],
        }),
      );
      const ui = await page(engram, '/');
      await ui.getByRole('link', { name: 'Import and export' }).click();
      await ui.getByLabel('JSON file').setInputFiles(file);
      const preview = ui.getByRole('region', { name: 'Import preview' });
      await expect.poll(() => preview.textContent()).toContain('Would be added: 1');
      const text = (await preview.textContent()) ?? '';
      expect(text).toMatch(/Would be added: 1\s*topics\/coffee/);
      expect(text).toMatch(/Conflicts, left as they are: 1\s*people\/ada/);
      expect(text).toContain('Left as they are: 1');
      const before = await getJson(engram, '/api/entries');
      expect(before.entries.map((row: { name: string }) => row.name)).toEqual(['people/ada', 'topics/tea']);

      await ui.getByLabel(/Overwrite entries that differ/).check();
      await expect.poll(() => preview.textContent()).toMatch(/Would be changed: 1\s*people\/ada/);
      await ui.getByLabel(/Overwrite entries that differ/).uncheck();
      await expect.poll(() => preview.textContent()).toMatch(/Conflicts, left as they are: 1/);
      // Replace would make memory equal to the file: people/ada changed, not left.
      await ui.getByLabel(/Replace: make memory equal to the file/).check();
      await expect.poll(() => preview.textContent()).toMatch(/Would be changed: 1\s*people\/ada/);
      expect(await preview.textContent()).not.toContain('Conflicts');
      await ui.getByLabel(/Merge: keep what is here/).check();
      await expect.poll(() => preview.textContent()).toMatch(/Conflicts, left as they are: 1/);
      await preview.getByRole('button', { name: 'Import' }).click();
      await ui
        .getByRole('status')
        .getByText('Imported backup.json: 1 added, 0 changed, 1 unchanged, 1 conflicting (left as it was).')
        .waitFor();
      const after = await getJson(engram, '/api/entries');
      expect(after.entries.map((row: { name: string }) => row.name)).toEqual([
        'people/ada',
        'topics/coffee',
        'topics/tea',
      ]);
      const ada = await getJson(engram, '/api/entries/people/ada');
      expect(ada.entry.description).toBe('Ada Lovelace, mathematician');
    });

    it('wipes only once "wipe" is typed, dropping every entry to the trash', async () => {
      const engram = await seeded();
      const ui = await page(engram, '/transfer');
      const button = ui.getByRole('button', { name: 'Wipe memory' });
      await button.waitFor();
      expect(await button.isDisabled()).toBe(true);
      await ui.getByLabel('Type “wipe” to confirm').fill('wip');
      expect(await button.isDisabled()).toBe(true);
      await ui.getByLabel('Type “wipe” to confirm').fill('wipe');
      await button.click();
      await ui.getByRole('status').getByText('Wiped: 2 entries dropped to the trash.').waitFor();
      expect((await getJson(engram, '/api/entries')).entries).toEqual([]);
      // The index shows the way to the Trash once: the header's link (there was a button beside New entry too).
      await ui.goto(`${engram.origin}/`);
      await ui.getByText('Nothing remembered yet.', { exact: false }).waitFor();
      expect(await ui.getByText('Trash', { exact: true }).count()).toBe(1);
      await ui.getByRole('link', { name: 'Trash' }).click();
      await ui.getByRole('listitem', { name: 'people/ada' }).waitFor();
      await ui.getByRole('listitem', { name: 'topics/tea' }).waitFor();
    });

    it('says a wipe purged for good when the server keeps no trash (trashRetentionDays 0)', async () => {
      const engram = await startEngram({ ...(await options()), config: { trashRetentionDays: 0 } });
      await mcpWrite(engram, { name: 'topics/tea', description: 'Teas I like', new: 'Green.' });
      const ui = await page(engram, '/transfer');
      await ui.getByLabel('Type “wipe” to confirm').fill('wipe');
      await ui.getByRole('button', { name: 'Wipe memory' }).click();
      await ui.getByRole('status').getByText('Wiped: 1 entry purged for good.').waitFor();
      expect((await getJson(engram, '/api/trash')).trash).toEqual([]);
    });
  });
});
