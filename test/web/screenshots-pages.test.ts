/**
 * The screenshots of the history and activity pages in docs/screenshots (linked from
 * docs/web-ui.md), made from a real `engram serve` in Chromium: an entry's history with
 * the diff of its last change, and the activity of a memory several assistants wrote, in
 * light and dark, and at a phone's width.
 */

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Engram, launchChromium, mcpWrite, openPage, screenshotFolder, startEngram } from './fixtures.js';

const FOLDER = screenshotFolder();

let browser: Browser;
let engram: Engram;
const undo: (() => void | Promise<void>)[] = [];

beforeAll(async () => {
  browser = await launchChromium();
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
  await browser?.close();
  for (const step of undo.reverse()) await step();
});

it.each([
  ['light', 'light', 1100, 720],
  ['dark', 'dark', 1100, 720],
  ['phone', 'light', 390, 760],
] as const)('history diff and activity, %s', async (label, colorScheme, width, height) => {
  const watched = await openPage(browser, engram, { colorScheme, width, height });
  const { page } = watched;
  await page.goto(`${engram.origin}/entries/areas/qwentts-cpp/history`);
  await page.getByLabel('Differences').getByText('+Target: 24 kHz. Tokenizer done; vocoder in progress.').waitFor();
  await page.screenshot({ path: `${FOLDER}history-${label}.png` });
  await page.getByRole('link', { name: 'Activity' }).click();
  await page.locator('.timeline li').nth(5).waitFor();
  await page.screenshot({ path: `${FOLDER}activity-${label}.png` });
  expect(watched.dialogs).toEqual([]);
  expect(watched.foreignRequests).toEqual([]);
  expect(watched.errors).toEqual([]);
  await watched.context.close();
});
