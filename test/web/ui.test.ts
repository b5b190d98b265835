/**
 * The web UI in Debian's Chromium against a real `engram serve` (--auth none), on SQLite
 * and on PostgreSQL: the index shows what an assistant wrote over MCP (size, last change,
 * who); a write made over MCP, by the server itself or by another process (`engram stdio`
 * on the same database), shows without a reload, with who made it; an entry opens as
 * Markdown and raw; edit and save; a save over a model's newer write is refused, shown,
 * and loses nothing; Cancel saves nothing; a new entry; drop and undo; the keyboard. No
 * page may open a dialog, request anything from elsewhere, throw, or break the CSP.
 */

import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { MCP_CLIENTS } from '../helpers/mcp-clients.js';
import {
  type Cleanup,
  type Engram,
  type EngramOptions,
  getJson,
  mcpWrite,
  startEngram,
  watchedPagesAt,
  webBackends,
} from './fixtures.js';

const page = watchedPagesAt();
const backends = await webBackends();
const sdkV1 = MCP_CLIENTS.find((kind) => kind.label === 'SDK v1 client')!;

describe.each(backends)('on %s', (_, options: (cleanup?: Cleanup) => Promise<EngramOptions>) => {
  async function seeded(cleanup?: Cleanup): Promise<Engram> {
    const engram = await startEngram(await options(cleanup));
    await mcpWrite(engram, {
      name: 'people/ada',
      description: 'Ada Lovelace, mathematician',
      new: '# Ada\n\nWrote the **first** program.',
    });
    await mcpWrite(
      engram,
      { name: 'topics/tea', description: 'Teas I like', new: '- Green\n- Oolong' },
      { client: 'llama.cpp' },
    );
    return engram;
  }

  /**
   * One seeded server for the tests that leave its memory as they found it (they read, or
   * cancel what they typed), started by the first of them and stopped after the last; a
   * test that saves has one of its own. A server started, seeded and stopped cost about
   * half a second of CPU here, PostgreSQL's schema aside.
   */
  const undo: (() => void | Promise<void>)[] = [];
  let unchanged: Promise<Engram> | undefined;
  const seededUnchanged = () => {
    unchanged ??= seeded((step) => undo.push(step));
    return unchanged;
  };
  afterAll(async () => {
    for (const step of undo.reverse()) await step();
  });

  describe('the index', () => {
    it('lists what assistants wrote: description, size, last change and who made it', async () => {
      const engram = await seededUnchanged();
      const ui = await page(engram);
      const ada = ui.getByRole('link', { name: 'people/ada', exact: true });
      await expect.poll(() => ada.count()).toBe(1);
      const row = ui.locator('li', { has: ada });
      await expect.poll(() => row.textContent()).toContain('Ada Lovelace, mathematician');
      const text = (await row.textContent()) ?? '';
      expect(text).toContain('36 bytes');
      expect(text).toContain('claude-code');
      expect(await row.locator('time').getAttribute('title')).toMatch(/\d{4}/);
      // The bar of its size against the entry cap.
      const bar = row.getByRole('meter', { name: 'Size of people/ada against the entry cap' });
      expect(await bar.getAttribute('value')).toBe('36');
      expect(Number(await bar.getAttribute('max'))).toBe((await getJson(engram, '/api/entries')).limits.entryCap);
      expect(await ui.locator('li', { hasText: 'topics/tea' }).textContent()).toContain('llama.cpp');
      expect(await ui.locator('.total').textContent()).toMatch(/2\s+entries,\s+\d+ bytes of 4 MB/);
    });

    it('filters by what is typed in Search and by group, and sorts', async () => {
      const engram = await seededUnchanged();
      const ui = await page(engram);
      await ui.getByRole('link', { name: 'people/ada' }).waitFor();
      await ui.getByRole('searchbox', { name: 'Search' }).fill('tea like');
      await expect
        .poll(() => ui.getByRole('link', { name: /^(people|topics)\// }).allTextContents())
        .toEqual(['topics/tea']);
      await ui.getByRole('searchbox', { name: 'Search' }).fill('');
      await ui.getByRole('combobox', { name: 'Group' }).selectOption('people');
      await expect
        .poll(() => ui.getByRole('link', { name: /^(people|topics)\// }).allTextContents())
        .toEqual(['people/ada']);
      await ui.getByRole('combobox', { name: 'Group' }).selectOption('');
      await ui.getByRole('combobox', { name: 'Sort' }).selectOption('size');
      await expect
        .poll(() => ui.getByRole('link', { name: /^(people|topics)\// }).allTextContents())
        .toEqual(['people/ada', 'topics/tea']);
      await ui.getByRole('combobox', { name: 'Sort' }).selectOption('updated');
      await expect
        .poll(() => ui.getByRole('link', { name: /^(people|topics)\// }).allTextContents())
        .toEqual(['topics/tea', 'people/ada']);
    });

    it('searches bodies too as you type, the words found highlighted', async () => {
      const engram = await seededUnchanged();
      const ui = await page(engram);
      await ui.getByRole('link', { name: 'people/ada' }).waitFor();
      await ui.getByRole('searchbox', { name: 'Search' }).fill('oolon');
      await expect.poll(() => ui.locator('.entries mark').allTextContents()).toEqual(['Oolong']);
      expect(await ui.getByRole('link', { name: /^(people|topics)\// }).allTextContents()).toEqual(['topics/tea']);
      await ui.getByRole('searchbox', { name: 'Search' }).fill('program');
      await expect
        .poll(() => ui.getByRole('link', { name: /^(people|topics)\// }).allTextContents())
        .toEqual(['people/ada']);
      await ui.keyboard.press('Escape');
      await expect.poll(() => ui.getByRole('link', { name: /^(people|topics)\// }).count()).toBe(2);
    });
  });

  describe('live', () => {
    it('shows a write an assistant makes over MCP without a reload, in the index and in the open entry', async () => {
      const engram = await seeded();
      const index = await page(engram);
      await index.getByRole('link', { name: 'people/ada' }).waitFor();
      const entry = await page(engram, '/entries/topics/tea');
      await entry.getByRole('button', { name: 'Edit' }).waitFor();
      await mcpWrite(engram, { name: 'topics/tea', new: '- Matcha' }, { client: 'chatgpt' });
      await mcpWrite(engram, { name: 'people/bob', description: 'Bob, a colleague', new: 'Compilers.' });
      await index.getByRole('link', { name: 'people/bob' }).waitFor();
      await expect.poll(() => index.locator('li', { hasText: 'topics/tea' }).textContent()).toContain('by chatgpt');
      await expect.poll(() => entry.locator('.markdown').textContent()).toContain('Matcha');
    });

    it('shows a write another process makes over MCP (engram stdio on the same database) without a reload, with its writer', async () => {
      const engram = await seeded();
      const index = await page(engram);
      await index.getByRole('link', { name: 'people/ada' }).waitFor();
      const entry = await page(engram, '/entries/topics/tea');
      await entry.getByRole('button', { name: 'Edit' }).waitFor();
      // A mark in each page's window: still there at the end means the page was never reloaded.
      for (const ui of [index, entry]) await ui.evaluate('window.notReloaded = true');

      const writer = await sdkV1.connect({
        database: engram.storeArgs,
        configHome: engram.env.XDG_CONFIG_HOME ?? '',
        clientName: 'gemini-cli',
      });
      onTestFinished(() => writer.close());
      expect(await writer.call('memory_write', { name: 'topics/tea', new: '- Genmaicha' })).toMatchObject({
        isError: false,
      });
      expect(
        await writer.call('memory_write', { name: 'people/grace', description: 'Grace Hopper', new: 'COBOL.' }),
      ).toMatchObject({ isError: false });

      const grace = index.locator('li', { has: index.getByRole('link', { name: 'people/grace', exact: true }) });
      await expect.poll(() => grace.textContent()).toContain('by gemini-cli');
      expect(await grace.textContent()).toContain('Grace Hopper');
      await expect.poll(() => index.locator('li', { hasText: 'topics/tea' }).textContent()).toContain('by gemini-cli');
      await expect.poll(() => entry.locator('.markdown').textContent()).toContain('Genmaicha');
      expect(await entry.getByText(/revision 2/).count()).toBe(1);
      for (const ui of [index, entry]) expect(await ui.evaluate('window.notReloaded')).toBe(true);
    });
  });

  describe('an entry', () => {
    it('opens as Markdown, and raw', async () => {
      const engram = await seededUnchanged();
      const ui = await page(engram);
      await ui.getByRole('link', { name: 'people/ada' }).click();
      await expect.poll(() => ui.url()).toBe(`${engram.origin}/entries/people/ada`);
      await ui.getByRole('heading', { name: 'Ada', exact: true }).waitFor();
      expect(await ui.locator('.markdown strong').textContent()).toBe('first');
      await ui.getByRole('button', { name: 'Raw' }).click();
      expect(await ui.locator('pre.raw').textContent()).toBe('# Ada\n\nWrote the **first** program.\n');
      await ui.goBack();
      await ui.getByRole('link', { name: 'topics/tea' }).waitFor();
    });

    it('is edited in place and saved', async () => {
      const engram = await seeded();
      const ui = await page(engram, '/entries/topics/tea');
      await ui.getByRole('button', { name: 'Edit' }).click();
      await ui.getByLabel('Description').fill('Teas I drink');
      await ui.getByLabel('Body').fill('- Green\n- Oolong\n- Sencha\n');
      await ui.getByRole('button', { name: 'Save' }).click();
      await ui.getByText('Teas I drink').waitFor();
      expect(await ui.locator('.markdown').textContent()).toContain('Sencha');
      const reloaded = await page(engram, '/entries/topics/tea');
      await reloaded.getByText('Teas I drink').waitFor();
      expect(await reloaded.getByText(/revision 2/).count()).toBe(1);
    });

    it('leaves an edit and a new entry unsaved on Cancel', async () => {
      const engram = await seededUnchanged();
      const ui = await page(engram, '/entries/topics/tea');
      await ui.getByRole('button', { name: 'Edit' }).click();
      await ui.getByLabel('Description').fill('Not saved');
      await ui.getByLabel('Body').fill('Not saved either.');
      await ui.getByRole('button', { name: 'Cancel' }).click();
      await ui.getByRole('button', { name: 'Edit' }).waitFor();
      expect(await ui.locator('.markdown').textContent()).toContain('Oolong');
      expect(await ui.getByText('Not saved').count()).toBe(0);

      await ui.getByRole('link', { name: 'Engram', exact: true }).click();
      await ui.getByRole('button', { name: 'New entry' }).click();
      await ui.getByLabel('Name').fill('topics/draft');
      await ui.getByLabel('Body').fill('A draft.');
      await ui.getByRole('button', { name: 'Cancel' }).click();
      await ui.getByRole('link', { name: 'topics/tea' }).waitFor();
      expect(await ui.getByRole('link', { name: 'topics/draft' }).count()).toBe(0);
      const tea = await getJson(engram, '/api/entries/topics/tea');
      expect(tea.entry).toMatchObject({ description: 'Teas I like', body: '- Green\n- Oolong\n' });
      expect((await getJson(engram, '/api/entries')).entries).toHaveLength(2);
    });

    it('refuses a save over a model’s newer write, shows it, and loses nothing', async () => {
      const engram = await seeded();
      const ui = await page(engram, '/entries/topics/tea');
      await ui.getByRole('button', { name: 'Edit' }).click();
      await ui.getByLabel('Body').fill('- Green\n- Mine\n');
      await mcpWrite(engram, { name: 'topics/tea', new: '- Matcha (from the model)' });
      await ui.getByRole('button', { name: 'Save' }).click();
      const alert = ui.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toContain('has changed since you opened it');
      expect(await alert.textContent()).toContain('Matcha (from the model)');
      await expect.poll(() => alert.locator('.diff').textContent()).toContain('+- Matcha (from the model)');
      expect(await ui.getByLabel('Body').inputValue()).toBe('- Green\n- Mine\n');
      await ui.getByRole('button', { name: 'Keep mine' }).click();
      await ui.getByRole('button', { name: 'Save' }).click();
      await ui.getByRole('button', { name: 'Edit' }).waitFor();
      expect(await ui.locator('.markdown').textContent()).toContain('Mine');
    });

    it('is created with the tools’ name rules, and dropped with undo', async () => {
      const engram = await seeded();
      const ui = await page(engram);
      await ui.getByRole('button', { name: 'New entry' }).click();
      await ui.getByLabel('Name').fill('people/John Smith');
      await ui.getByLabel('Description').fill('A colleague');
      await ui.getByLabel('Body').fill('Works on the compiler.');
      await ui.getByRole('button', { name: 'Save' }).click();
      const problem = ui.getByRole('alert');
      await problem.waitFor();
      expect(await problem.textContent()).toContain('"people/John Smith" is not a valid name');
      await ui.getByLabel('Name').fill('people/john-smith');
      await ui.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => ui.url()).toBe(`${engram.origin}/entries/people/john-smith`);
      await ui.getByText('Works on the compiler.').waitFor();

      await ui.getByRole('button', { name: 'Drop' }).click();
      await ui.getByRole('status').getByText('Dropped people/john-smith').waitFor();
      const gone = await page(engram);
      await gone.getByRole('link', { name: 'people/ada' }).waitFor();
      expect(await gone.getByRole('link', { name: 'people/john-smith' }).count()).toBe(0);
      await ui.getByRole('button', { name: 'Undo' }).click();
      await ui.getByRole('button', { name: 'Edit' }).waitFor();
    });
  });

  describe('the keyboard', () => {
    it('/ searches, n starts a new entry, Esc cancels, e edits', async () => {
      const engram = await seededUnchanged();
      const ui = await page(engram, '/entries/topics/tea');
      await ui.getByRole('button', { name: 'Edit' }).waitFor();
      await ui.keyboard.press('e');
      await ui.getByLabel('Body').waitFor();
      await ui.keyboard.press('Escape');
      await ui.getByRole('button', { name: 'Edit' }).waitFor();
      await ui.keyboard.press('/');
      await expect.poll(() => ui.locator('#search').evaluate((element) => element.matches(':focus'))).toBe(true);
      await ui.keyboard.press('Escape');
      // Leave the search box without clicking: a click at the page's centre lands on
      // whatever is there (the search box itself while the list is still loading).
      await ui.locator('#search').blur();
      await ui.keyboard.press('n');
      await ui.getByRole('heading', { name: 'New entry' }).waitFor();
      await ui.keyboard.press('Escape');
      await ui.getByRole('link', { name: 'people/ada' }).waitFor();
    });
  });
});
