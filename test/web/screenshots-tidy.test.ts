/**
 * The screenshots of the tidying pages in docs/screenshots (linked from docs/web-ui.md),
 * made from a real `engram serve` in Chromium over a memory months of use left
 * (tidy-fixtures.ts) and two pairs assistants wrote about one subject: the index sorted by
 * least recently opened, each entry saying when an assistant last opened it; and Possible
 * duplicates with a merge being confirmed. In light and dark, and at a phone's width, none
 * wider than the window (nothing to scroll sideways).
 */

import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Engram, mcpWrite, screenshot, startEngram, watchedPages } from './fixtures.js';
import { ENTRY_CAP, seedMonthsOfUse } from './tidy-fixtures.js';

const openWatched = watchedPages();
let engram: Engram;
const undo: (() => void | Promise<void>)[] = [];

beforeAll(async () => {
  engram = await startEngram({ cleanup: (step) => undo.push(step), config: { entryCap: ENTRY_CAP } });
  await seedMonthsOfUse(engram, Date.now());
  const write = (name: string, description: string, text: string, client: string) =>
    mcpWrite(engram, { name, description, new: text }, { client });
  await write('topics/coffee', 'How the user takes coffee', 'Flat white, oat milk. Two a day.', 'claude-desktop');
  await write(
    'topics/coffee-habits',
    'How the user takes their coffee',
    'Flat white with oat milk; two a day, none after 2 pm.',
    'chatgpt',
  );
  await write('areas/qwentts-cpp', 'Port of Qwen TTS to C++ with GGML', 'Tokenizer done; vocoder next.', 'claude-code');
  await write('areas/qwen-tts-cpp', 'Qwen TTS port to C++ (GGML)', 'Vocoder: HiFi-GAN weights converted.', 'chatgpt');
});

afterAll(async () => {
  for (const step of undo.reverse()) await step();
});

const LOOKS = [
  ['light', 'light', 1100, 900],
  ['dark', 'dark', 1100, 900],
  ['phone', 'light', 390, 844],
] as const;

it.each(LOOKS)('index sorted by least recently opened, %s', async (label, colorScheme, width, height) => {
  const { page } = await openWatched(engram, { colorScheme, width, height });
  await page.goto(`${engram.origin}/`);
  await page.getByLabel('Sort').selectOption('unopened');
  await page.getByText('opened yesterday').waitFor();
  await screenshot(page, `tidy-index-${label}.png`, { fullPage: true });
  expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(width);
});

it.each(LOOKS)('possible duplicates with a merge being confirmed, %s', async (label, colorScheme, width, height) => {
  const { page } = await openWatched(engram, { colorScheme, width, height });
  await page.goto(`${engram.origin}/duplicates`);
  const pair = page.getByRole('listitem', { name: 'topics/coffee and topics/coffee-habits' });
  await pair.getByRole('button', { name: 'Merge into topics/coffee', exact: true }).click();
  await pair.getByRole('group', { name: 'Merge topics/coffee-habits into topics/coffee?' }).waitFor();
  await screenshot(page, `duplicates-${label}.png`, { fullPage: true });
  expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(width);
});
