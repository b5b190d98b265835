/**
 * The browser for tests that need one: the system's Chromium (never a downloaded one),
 * at $ENGRAM_CHROMIUM, else /usr/bin/chromium (Debian's). Without one there, each browser
 * test fails, saying what is missing and how to install it, rather than skip: a run that
 * skipped them would pass without having tried the web UI (.ci/run installs it). It runs
 * headless, with everything that would reach the network on its own (updates, sync,
 * background fetches, QUIC) switched off, so a test talks only to its own servers.
 *
 * One Chromium per vitest worker, launched when a file first asks for it and shared by
 * every file the worker runs (vitest.config.ts: isolate false, so this module and its
 * browser outlive a file): launching one cost each browser file about a second and a half
 * of CPU here, before its first page. A file never closes it; it opens contexts of its own
 * and closes them (cookies and storage are per context, so nothing passes between files).
 * The browser closes when the worker stops: vitest runs its workers' cleanup before it
 * ends them. Were the worker killed instead, Chromium would still go: it exits when the
 * pipe playwright drives it through closes (checked here with kill -9 on its parent).
 */

import { accessSync, constants } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Where the browser tests look for Chromium, and what to do when it is not there. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.ENGRAM_CHROMIUM;
  const path = configured === undefined || configured === '' ? '/usr/bin/chromium' : configured;
  try {
    accessSync(path, constants.X_OK);
  } catch {
    const where = configured ? `ENGRAM_CHROMIUM=${path}` : `${path} (the default; ENGRAM_CHROMIUM is not set)`;
    throw new Error(
      `The browser tests need Chromium, and there is no executable at ${where}. ` +
        'Install it (Debian, Ubuntu: sudo apt-get install chromium), or set ENGRAM_CHROMIUM to the path of a ' +
        'Chromium or Chrome executable, then run the tests again.',
    );
  }
  return path;
}

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // One renderer process for every page, instead of a new one each time a page goes to
  // another server: the UI's Cross-Origin-Opener-Policy (same-origin) puts every server's
  // pages in a browsing context group of their own, and site isolation gave each group a
  // process (~0.4 s of CPU to start here, for each test's page). What a page may do and
  // see is the same: storage, cookies and COOP's separation are per context and group,
  // not per process; nothing a test asserts depends on process isolation.
  '--disable-site-isolation-trials',
  '--renderer-process-limit=1',
];

let shared: Promise<Browser> | undefined;

/**
 * The worker's Chromium, launched by the first call (again after it was closed or
 * crashed). Callers must not close it: they close the contexts they open.
 */
export function sharedChromium(): Promise<Browser> {
  if (shared !== undefined) return shared;
  let executablePath: string;
  try {
    executablePath = chromiumPath();
  } catch (error) {
    return Promise.reject(error);
  }
  const launching = chromium.launch({ executablePath, args: ARGS });
  shared = launching;
  const forget = () => {
    if (shared === launching) shared = undefined;
  };
  launching.then((browser) => browser.on('disconnected', forget), forget);
  return launching;
}

/** What vitest's worker holds for this (not a public API: without it, Chromium still ends with the worker). */
const worker = (globalThis as { __vitest_worker__?: { onCleanup?: (listener: () => unknown) => void } })
  .__vitest_worker__;
worker?.onCleanup?.(async () => {
  const launched = shared;
  shared = undefined;
  await (await launched?.catch(() => undefined))?.close();
});
