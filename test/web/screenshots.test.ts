/**
 * The screenshots in docs/screenshots (linked from the README; see screenshot in fixtures.ts), made from a real
 * `engram serve` in Chromium: the index and an entry, in light and dark, and at a phone's
 * width, none wider than the window (nothing to scroll sideways), dark when the system
 * is. A memory written by several assistants over MCP, as a person's would be.
 */

import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Engram, mcpWrite, screenshot, startEngram, watchedPages } from './fixtures.js';

const openWatched = watchedPages();
let engram: Engram;
const undo: (() => void | Promise<void>)[] = [];

beforeAll(async () => {
  engram = await startEngram({ cleanup: (step) => undo.push(step) });
  const writes: [string, Record<string, string>][] = [
    [
      'llama.cpp-webui',
      {
        name: 'people/allozaur',
        description: 'llama.cpp WebUI maintainer',
        new: '# Aleksander\n\nMaintains the **llama.cpp WebUI** (Svelte).\n\n- Prefers small PRs with screenshots\n- Reviews on weekday mornings, CET',
      },
    ],
    [
      'claude-code',
      {
        name: 'areas/qwentts-cpp',
        description: 'Port of Qwen TTS to C++ with GGML',
        new: '## Status\n\nTarget: 24 kHz. Tokenizer done; vocoder in progress.\n\n```sh\ncmake -B build && cmake --build build -j\n```\n\nNext: streaming output, then `--threads` tuning.',
      },
    ],
    [
      'chatgpt',
      { name: 'topics/coffee', description: 'How the user takes coffee', new: 'Flat white, oat milk. No sugar.' },
    ],
    [
      'claude-desktop',
      {
        name: 'topics/editor',
        description: 'Editor and terminal setup',
        new: 'Neovim with LazyVim; kitty terminal; JetBrains Mono 13.',
      },
    ],
    [
      'claude-code',
      { name: 'people/ada', description: 'Ada Lovelace, mathematician', new: 'Wrote the first program, 1843.' },
    ],
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
] as const)('index and entry, %s', async (label, colorScheme, width, height) => {
  const watched = await openWatched(engram, { colorScheme, width, height });
  const { page } = watched;
  await page.goto(`${engram.origin}/`);
  await page.getByRole('link', { name: 'areas/qwentts-cpp' }).waitFor();
  // The system's light or dark setting is followed: the page's background is light or dark with it.
  const background = String(await page.evaluate('getComputedStyle(document.documentElement).backgroundColor'));
  const channels = (background.match(/\d+/g) ?? []).slice(0, 3).map(Number);
  const lightness = channels.reduce((sum, channel) => sum + channel, 0) / 3;
  expect(channels).toHaveLength(3);
  if (colorScheme === 'dark') expect(lightness).toBeLessThan(64);
  else expect(lightness).toBeGreaterThan(192);
  await screenshot(page, `index-${label}.png`);
  expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(width);
  await page.getByRole('link', { name: 'areas/qwentts-cpp' }).click();
  await page.getByRole('heading', { name: 'Status' }).waitFor();
  await screenshot(page, `entry-${label}.png`);
  expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(width);
  expect(watched.dialogs).toEqual([]);
  expect(watched.foreignRequests).toEqual([]);
  expect(watched.errors).toEqual([]);
});
