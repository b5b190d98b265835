/**
 * Where the screenshot tests' pictures go (fixtures.ts `screenshot`): nowhere on an
 * ordinary run — not into docs/screenshots, which is committed, nor into a temporary
 * folder shared by every run and checkout on the machine — and into docs/screenshots
 * only when ENGRAM_UPDATE_SCREENSHOTS=1 asks for it.
 */

import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterEach, expect, it, vi } from 'vitest';
import { screenshot } from './fixtures.js';

const DOCS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));

afterEach(() => {
  vi.unstubAllEnvs();
});

it('takes the picture and writes it nowhere on an ordinary run', async () => {
  vi.stubEnv('ENGRAM_UPDATE_SCREENSHOTS', '');
  const taken: unknown[] = [];
  const page = {
    screenshot: async (options: unknown) => {
      taken.push(options);
      return Buffer.from('a picture');
    },
  } as unknown as Page;
  const docsBefore = readdirSync(DOCS).sort();
  await screenshot(page, 'probe-light.png', { fullPage: true });
  expect(taken).toEqual([{ fullPage: true }]);
  expect(readdirSync(DOCS).sort()).toEqual(docsBefore);
  expect(existsSync(join(tmpdir(), 'engram-screenshots', 'probe-light.png'))).toBe(false);
  expect(existsSync(join(DOCS, 'probe-light.png'))).toBe(false);
});
