/**
 * Where the browser tests find Chromium (chromium.ts): $ENGRAM_CHROMIUM, else
 * /usr/bin/chromium; and when there is none there, a failure that says what is missing
 * and how to install it or point the tests at another one.
 */

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { chromiumPath } from './chromium.js';

function folder(): string {
  const path = mkdtempSync(join(tmpdir(), 'engram-chromium-'));
  onTestFinished(() => rmSync(path, { recursive: true, force: true }));
  return path;
}

it('takes the executable ENGRAM_CHROMIUM names', () => {
  const executable = join(folder(), 'chrome');
  writeFileSync(executable, '#!/bin/sh\n');
  chmodSync(executable, 0o755);
  expect(chromiumPath({ ENGRAM_CHROMIUM: executable })).toBe(executable);
});

it('says what is missing, and how to install it or name another, when ENGRAM_CHROMIUM names nothing to run', () => {
  const missing = join(folder(), 'no-chromium');
  expect(() => chromiumPath({ ENGRAM_CHROMIUM: missing })).toThrow(
    `The browser tests need Chromium, and there is no executable at ENGRAM_CHROMIUM=${missing}. ` +
      'Install it (Debian, Ubuntu: sudo apt-get install chromium), or set ENGRAM_CHROMIUM to the path of a ' +
      'Chromium or Chrome executable, then run the tests again.',
  );
  const notExecutable = join(folder(), 'chromium.txt');
  writeFileSync(notExecutable, 'not a program');
  expect(() => chromiumPath({ ENGRAM_CHROMIUM: notExecutable })).toThrow(/no executable at ENGRAM_CHROMIUM=/);
});

it('looks at /usr/bin/chromium when ENGRAM_CHROMIUM is not set, and says so when it is not there', () => {
  let found: string | undefined;
  try {
    found = chromiumPath({});
  } catch (error) {
    expect((error as Error).message).toContain(
      'no executable at /usr/bin/chromium (the default; ENGRAM_CHROMIUM is not set)',
    );
  }
  if (found !== undefined) expect(found).toBe('/usr/bin/chromium');
});
