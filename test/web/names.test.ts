/**
 * Every control of the web UI has an accessible name (issue 12, item 11), as Chromium's
 * accessibility tree gives it to a screen reader: each page of a real `engram serve`
 * (SQLite, --auth none), in the states a person brings it to (an entry being edited, a
 * purge being confirmed, each import source), is read through the DevTools protocol, and
 * no button, link, field, box or bar on it may be nameless.
 */

import type { Locator, Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { mcpWrite, startEngram, watchedPagesAt } from './fixtures.js';

const page = watchedPagesAt();

/** The roles a person acts on or reads a value from. */
const CONTROLS = new Set([
  'button',
  'link',
  'textbox',
  'searchbox',
  'combobox',
  'listbox',
  'checkbox',
  'radio',
  'switch',
  'slider',
  'spinbutton',
  'meter',
  'progressbar',
  'tab',
  'menuitem',
]);

interface AXNode {
  readonly ignored: boolean;
  readonly role?: { readonly value: string };
  readonly name?: { readonly value: string };
}

/** The roles of the page's controls: each named, or `role (no name)`. */
async function controls(ui: Page): Promise<string[]> {
  const cdp = await ui.context().newCDPSession(ui);
  try {
    const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: AXNode[] };
    return nodes
      .filter((node) => !node.ignored && CONTROLS.has(node.role?.value ?? ''))
      .map((node) => {
        const role = node.role?.value ?? '';
        return (node.name?.value ?? '').trim() === '' ? `${role} (no name)` : role;
      });
  } finally {
    await cdp.detach();
  }
}

it('names every control of every page, in every state a person brings it to', async () => {
  const engram = await startEngram();
  await mcpWrite(engram, { name: 'people/ada', description: 'Ada Lovelace', new: 'Wrote the first program.' });
  await mcpWrite(engram, { name: 'people/ada', new: 'Born 1815.' }, { client: 'llama.cpp' });
  await mcpWrite(engram, { name: 'topics/tea', description: 'Teas I like', new: 'Green.' });
  const ui = await page(engram);
  const found: Record<string, string[]> = {};
  /** What the page shows once `ready` is there, kept under `state`. */
  async function read(state: string, ready: Locator): Promise<void> {
    await ready.first().waitFor();
    found[state] = await controls(ui);
  }

  await read('index', ui.getByRole('link', { name: 'people/ada' }));
  await ui.getByRole('searchbox', { name: 'Search' }).fill('progr');
  await read('index, searching', ui.locator('.entries mark'));
  await ui.goto(`${engram.origin}/entries/people/ada`);
  await read('entry', ui.getByRole('button', { name: 'Edit' }));
  await ui.getByRole('button', { name: 'Edit' }).click();
  await read('entry, editing', ui.getByRole('button', { name: 'Save' }));
  await ui.goto(`${engram.origin}/entries/people/ada/history`);
  await read('history', ui.getByLabel('Differences'));
  await ui.goto(`${engram.origin}/new`);
  await read('new entry', ui.getByLabel('Name'));
  await ui.goto(`${engram.origin}/activity`);
  await read('activity', ui.getByRole('link', { name: 'topics/tea' }));
  await ui.goto(`${engram.origin}/access`);
  await read('access', ui.getByRole('heading', { name: 'Access' }));
  await ui.goto(`${engram.origin}/transfer`);
  const source = ui.getByLabel('Source');
  await read('import and export', source);
  for (const kind of await source
    .locator('option')
    .evaluateAll((options) => options.map((o) => o.getAttribute('value')))) {
    if (kind === null || kind === 'engram') continue;
    await source.selectOption(kind);
    await read(`import from ${kind}`, ui.getByRole('button', { name: 'Preview' }));
  }
  await ui.goto(`${engram.origin}/entries/topics/tea`);
  await ui.getByRole('button', { name: 'Drop' }).click();
  await ui
    .getByRole('status')
    .getByText(/Dropped topics\/tea/)
    .waitFor();
  await ui.goto(`${engram.origin}/trash`);
  await ui.getByRole('button', { name: 'Purge' }).click();
  await read('trash, confirming a purge', ui.getByRole('button', { name: 'Purge for good' }));

  for (const [state, roles] of Object.entries(found)) {
    expect(roles.length, `${state}: no controls at all`).toBeGreaterThan(0);
    expect(
      roles.filter((role) => role.endsWith('(no name)')),
      state,
    ).toEqual([]);
  }
});
