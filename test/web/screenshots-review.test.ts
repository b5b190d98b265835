/**
 * The screenshots of the Review page in docs/screenshots (linked from the README and
 * docs/web-ui.md), made from a real `engram serve` in Chromium: changes assistants in
 * review mode proposed — an append, a new entry, a drop, and an edit another change has
 * made a conflict — each with its diff, and the count in the header, in light and dark,
 * and at a phone's width, none wider than the window (nothing to scroll sideways).
 */

import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import type { Caller } from '../../src/memory/model/caller.js';
import { type Engram, mcpWrite, screenshot, startEngram, storeOf, watchedPages } from './fixtures.js';

const openWatched = watchedPages();
let engram: Engram;
const undo: (() => void | Promise<void>)[] = [];

beforeAll(async () => {
  engram = await startEngram({ cleanup: (step) => undo.push(step) });
  await mcpWrite(
    engram,
    {
      name: 'areas/qwentts-cpp',
      description: 'Port of Qwen TTS to C++ with GGML',
      new: '## Status\n\nTarget: 24 kHz. Tokenizer done; vocoder in progress.\n\nNext: streaming output.',
    },
    { client: 'claude-code' },
  );
  await mcpWrite(
    engram,
    { name: 'topics/coffee', description: 'How the user takes coffee', new: 'Flat white, oat milk.' },
    { client: 'chatgpt' },
  );
  await mcpWrite(
    engram,
    { name: 'topics/old-laptop', description: 'The ThinkPad X220 setup', new: 'Arch, i3, 8 GB.' },
    { client: 'claude-desktop' },
  );
  // The assistants in review mode propose, on the server's database, as their tools would.
  const app = createApp({ store: await storeOf(engram) });
  try {
    const claude: Caller = { user: 'local', label: 'Claude', review: true };
    const chatgpt: Caller = { user: 'local', label: 'ChatGPT', review: true };
    await app.memory.write(claude, {
      name: 'areas/qwentts-cpp',
      new: 'Vocoder: HiFi-GAN weights converted; 1.3x real time on 4 threads.',
    });
    await app.memory.write(chatgpt, {
      name: 'people/allozaur',
      description: 'llama.cpp WebUI maintainer',
      new: 'Maintains the llama.cpp WebUI (Svelte). Prefers small PRs with screenshots.',
    });
    await app.memory.write(chatgpt, { name: 'topics/coffee', old: 'oat milk', new: 'almond milk' });
    await app.memory.drop(claude, 'topics/old-laptop');
  } finally {
    await app.close();
  }
  // The person changed their coffee since: ChatGPT's edit no longer applies.
  await mcpWrite(engram, { name: 'topics/coffee', old: 'oat milk', new: 'whole milk' }, { client: 'claude-desktop' });
});

afterAll(async () => {
  for (const step of undo.reverse()) await step();
});

it.each([
  ['light', 'light', 1100, 900],
  ['dark', 'dark', 1100, 900],
  ['phone', 'light', 390, 844],
] as const)('review, %s', async (label, colorScheme, width, height) => {
  const watched = await openWatched(engram, { colorScheme, width, height });
  const { page } = watched;
  await page.goto(`${engram.origin}/review`);
  await page.getByRole('listitem', { name: 'Claude wants to drop topics/old-laptop' }).waitFor();
  await page.getByRole('link', { name: 'Review, 4 waiting' }).waitFor();
  await page.getByRole('note').filter({ hasText: 'Conflict:' }).waitFor();
  await screenshot(page, `review-${label}.png`, { fullPage: true });
  expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(width);
});
