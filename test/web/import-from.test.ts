/**
 * Importing another memory through the web UI's Import page, in Debian's Chromium against
 * a real `engram serve`, on SQLite and PostgreSQL: an MCP memory server's memory.jsonl
 * picked as a file, and a Markdown folder picked with the folder picker (its binary file
 * left out and named), are previewed item by item — changing nothing — then imported as
 * import:KIND; a refusal is shown in the page's words from its data. No page may open a
 * dialog, request anything from elsewhere, throw, or break the CSP.
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/engram.js';
import { type Engram, getJson, mcpWrite, startEngram, watchedPagesAt, webBackends } from './fixtures.js';

const page = watchedPagesAt();
const backends = await webBackends();

async function names(engram: Engram): Promise<string[]> {
  return (await getJson(engram, '/api/entries')).entries.map((row: { name: string }) => row.name);
}

async function actors(engram: Engram, name: string): Promise<string[]> {
  return (await getJson(engram, `/api/entries/${name}/history`)).revisions.map((r: { actor: string }) => r.actor);
}

const entity = (name: string, entityType: string, observations: string[]) =>
  JSON.stringify({ type: 'entity', name, entityType, observations });

describe.each(backends)('on %s', (_, options) => {
  it('previews a memory.jsonl item by item, changing nothing, then imports it as import:server-memory', async () => {
    const engram = await startEngram(await options());
    await mcpWrite(engram, { name: 'areas/engram', description: 'The memory server', new: 'Three tools.' });
    const file = tempDir().file('memory.jsonl');
    writeFileSync(
      file,
      `${entity('Ada Lovelace', 'person', ['Wrote the first program'])}\n${entity('Engram', 'project', ['Node 20'])}\n`,
    );
    const ui = await page(engram, '/');
    await ui.getByRole('link', { name: 'Import and export' }).click();
    await ui.getByLabel('Source').selectOption('server-memory');
    await ui.getByLabel('memory.jsonl file').setInputFiles(file);
    await ui.getByRole('button', { name: 'Preview' }).click();
    const preview = ui.getByRole('region', { name: 'Import preview' });
    await preview.waitFor();
    const text = (await preview.textContent()) ?? '';
    expect(text).toContain('1 would be added, 1 would be appended to');
    expect(text).toMatch(/people\/ada-lovelace would be added\s*\(from line 1: entity "Ada Lovelace" \(person\)\)/);
    expect(text).toContain('"Ada Lovelace" is not a valid slug: made ada-lovelace');
    expect(text).toMatch(/areas\/engram would be appended to[\s\S]*the new lines would go at its end/);
    expect(await names(engram)).toEqual(['areas/engram']);

    await preview.getByRole('button', { name: 'Import' }).click();
    await ui.getByRole('status').getByText('Imported: 1 added, 1 appended to.').waitFor();
    expect(await names(engram)).toEqual(['areas/engram', 'people/ada-lovelace']);
    expect(await actors(engram, 'people/ada-lovelace')).toEqual(['import:server-memory']);
    expect((await getJson(engram, '/api/entries/areas/engram')).entry.body).toBe('Three tools.\nNode 20\n');
  });

  it('reads a picked folder, leaving out and naming its binary file, and imports it as import:markdown', async () => {
    const engram = await startEngram(await options());
    const folder = tempDir().file('notes');
    mkdirSync(`${folder}/topics`, { recursive: true });
    mkdirSync(`${folder}/people`);
    writeFileSync(`${folder}/topics/tea.md`, '---\ndescription: "Teas I like"\n---\nGreen.\n');
    writeFileSync(`${folder}/people/bob.md`, '---\ndescription: "Bob"\n---\nColleague.\n');
    writeFileSync(`${folder}/topics/photo.png`, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe]));
    const ui = await page(engram, '/transfer');
    await ui.getByLabel('Source').selectOption('markdown');
    await ui.getByLabel('Markdown folder').setInputFiles(folder);
    const read = ui.getByLabel('Files read');
    await expect.poll(() => read.textContent()).toContain('2 files read');
    expect(await read.textContent()).toContain('Left out: 1 not text (topics/photo.png)');
    await ui.getByRole('button', { name: 'Preview' }).click();
    const preview = ui.getByRole('region', { name: 'Import preview' });
    await expect.poll(() => preview.textContent()).toContain('2 would be added');
    expect(await preview.textContent()).toMatch(/people\/bob would be added[\s\S]*topics\/tea would be added/);
    expect(await names(engram)).toEqual([]);

    // A changed choice asks for a new preview before Import.
    const importButton = preview.getByRole('button', { name: 'Import' });
    await ui.getByLabel(/Split entries over the size cap/).check();
    await expect.poll(() => importButton.isDisabled()).toBe(true);
    await ui.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => importButton.isDisabled()).toBe(false);
    await importButton.click();
    await ui.getByRole('status').getByText('Imported: 2 added.').waitFor();
    expect(await names(engram)).toEqual(['people/bob', 'topics/tea']);
    expect(await actors(engram, 'topics/tea')).toEqual(['import:markdown']);
  });

  it('previews a paste that repeats lines: 100 duplicates listed, the rest counted in a line', async () => {
    const engram = await startEngram(await options());
    const lines = Array.from({ length: 300 }, (_, i) => `Memory ${i}`).join('\n');
    const ui = await page(engram, '/transfer');
    await ui.getByLabel('Source').selectOption('chatgpt');
    await ui.getByLabel('Paste the memories', { exact: false }).fill(`${lines}\n${lines}\n`);
    await ui.getByRole('button', { name: 'Preview' }).click();
    const preview = ui.getByRole('region', { name: 'Import preview' });
    await preview.waitFor();
    expect(await preview.locator('strong', { hasText: 'duplicate:' }).count()).toBe(100);
    await preview.getByText('And 200 more duplicates, not listed.').waitFor();
    expect(await preview.getByRole('heading').textContent()).toBe(
      'What importing would do: 1 would be added, 300 not imported',
    );
    expect(await names(engram)).toEqual([]);
  });

  it('says in its own words why an import is refused, from the refusal’s data, importing nothing', async () => {
    const engram = await startEngram(await options());
    const file = tempDir().file('memory.jsonl');
    writeFileSync(file, `${entity('Tea', 'drink', ['Green'])}\n`);
    const ui = await page(engram, '/transfer');
    await ui.getByLabel('Source').selectOption('server-memory');
    await ui.getByLabel('memory.jsonl file').setInputFiles(file);
    await ui.getByLabel('Entity types to groups').fill('drink=drinks');
    await ui.getByRole('button', { name: 'Preview' }).click();
    await ui
      .getByRole('alert')
      .getByText(
        '“drinks” is not a group of this memory: map drink to one of areas, people, topics. Nothing was imported.',
      )
      .waitFor();
    await ui.getByLabel('Entity types to groups').fill('drink');
    await ui.getByRole('button', { name: 'Preview' }).click();
    await ui.getByRole('alert').getByText('“drink” is not TYPE=GROUP', { exact: false }).waitFor();
    const engramExport = tempDir().file('memory.json');
    writeFileSync(engramExport, JSON.stringify({ format: 'engram-export', version: 1, entries: [] }));
    await ui.getByLabel('Source').selectOption('llama-webui');
    await ui.getByLabel('Memory export file').setInputFiles(engramExport);
    await ui.getByRole('button', { name: 'Preview' }).click();
    await ui
      .getByRole('alert')
      .getByText(
        'memory.json is an Engram export: choose “Engram export (JSON)” as the source to import it. Nothing was imported.',
      )
      .waitFor();
    expect(await names(engram)).toEqual([]);
  });
});
