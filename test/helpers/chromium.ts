/**
 * The browser for tests that need one: the system's Chromium (never a downloaded one),
 * headless, with everything that would reach the network on its own (updates, sync,
 * background fetches, QUIC) switched off, so a test talks only to its own servers.
 */

import { type Browser, chromium } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches Chromium; the caller closes it (in afterAll, which runs even when a test failed). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}
