/**
 * The screenshots of the history, activity and import pages in docs/screenshots (linked
 * from the README and docs/web-ui.md), made from a real `engram serve` in Chromium: an
 * entry's history with the diff of its last change, the activity of a memory several
 * assistants wrote, and the preview of importing the MCP memory server's memory.jsonl, in
 * light and dark, and at a phone's width, none wider than the window (nothing to scroll
 * sideways).
 */

import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir } from '../helpers/engram.js';
import { type Engram, mcpWrite, screenshot, startEngram, watchedPages } from './fixtures.js';

const openWatched = watchedPages();
let engram: Engram;
const undo: (() => void | Promise<void>)[] = [];

beforeAll(async () => {
  engram = await startEngram({ cleanup: (step) => undo.push(step) });
  const writes: [string, Record<string, string>][] = [
    [
      'claude-code',
      {
        name: 'areas/qwentts-cpp',
        description: 'Port of Qwen TTS to C++ with GGML',
        new: '## Status\n\nTarget: 24 kHz. Tokenizer in progress.\n\nNext: vocoder.',
      },
    ],
    ['chatgpt', { name: 'topics/coffee', description: 'How the user takes coffee', new: 'Flat white, oat milk.' }],
    [
      'llama.cpp-webui',
      { name: 'people/allozaur', description: 'llama.cpp WebUI maintainer', new: 'Maintains the llama.cpp WebUI.' },
    ],
    [
      'claude-code',
      {
        name: 'areas/qwentts-cpp',
        old: 'Target: 24 kHz. Tokenizer in progress.\n\nNext: vocoder.',
        new: 'Target: 24 kHz. Tokenizer done; vocoder in progress.\n\nNext: streaming output, then `--threads` tuning.',
      },
    ],
    ['claude-desktop', { name: 'topics/editor', description: 'Editor and terminal setup', new: 'Neovim; kitty.' }],
    ['chatgpt', { name: 'topics/coffee', new: 'No sugar.' }],
  ];
  for (const [client, args] of writes) await mcpWrite(engram, args, { client });
});

afterAll(async () => {
  for (const step of undo.reverse()) await step();
});

it.each([
  ['light', 'light', 1100, 720],
  ['dark', 'dark', 1100, 720],
  ['phone', 'light', 390, 760],
] as const)('history diff and activity, %s', async (label, colorScheme, width, height) => {
  const watched = await openWatched(engram, { colorScheme, width, height });
  const { page } = watched;
  await page.goto(`${engram.origin}/entries/areas/qwentts-cpp/history`);
  await page.getByLabel('Differences').getByText('+Target: 24 kHz. Tokenizer done; vocoder in progress.').waitFor();
  await screenshot(page, `history-${label}.png`);
  expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(width);
  await page.getByRole('link', { name: 'Activity' }).click();
  await page.locator('.timeline li').nth(5).waitFor();
  await screenshot(page, `activity-${label}.png`);
  expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(width);
  expect(watched.dialogs).toEqual([]);
  expect(watched.foreignRequests).toEqual([]);
  expect(watched.errors).toEqual([]);
});

/** An MCP memory server's memory.jsonl: two people, a project, and a relation between them. */
const MEMORY_JSONL = [
  { type: 'entity', name: 'Ada Lovelace', entityType: 'person', observations: ['Wrote the first program, 1843'] },
  { type: 'entity', name: 'Charles Babbage', entityType: 'person', observations: ['Designed the Analytical Engine'] },
  { type: 'entity', name: 'QwenTTS', entityType: 'project', observations: ['Vocoder in progress'] },
  { type: 'relation', from: 'Ada Lovelace', to: 'Charles Babbage', relationType: 'worked with' },
]
  .map((line) => JSON.stringify(line))
  .join('\n');

it.each([
  ['light', 'light', 1100, 720],
  ['dark', 'dark', 1100, 720],
  ['phone', 'light', 390, 760],
] as const)('the import preview, %s', async (label, colorScheme, width, height) => {
  const file = tempDir().file('memory.jsonl');
  writeFileSync(file, `${MEMORY_JSONL}\n`);
  const watched = await openWatched(engram, { colorScheme, width, height });
  const { page } = watched;
  await page.goto(`${engram.origin}/transfer`);
  await page.getByLabel('Source').selectOption('server-memory');
  await page.getByLabel('memory.jsonl file').setInputFiles(file);
  await page.getByRole('button', { name: 'Preview' }).click();
  await page
    .getByRole('region', { name: 'Import preview' })
    .getByText('people/ada-lovelace', { exact: true })
    .waitFor();
  // The whole page: the source, its options, the preview and Import, as a person scrolls it.
  await screenshot(page, `import-${label}.png`, { fullPage: true });
  expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(width);
  expect(watched.dialogs).toEqual([]);
  expect(watched.foreignRequests).toEqual([]);
  expect(watched.errors).toEqual([]);
});
