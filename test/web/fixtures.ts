/**
 * What the web UI's browser tests share: a real `engram serve` (the built CLI's main(),
 * run in this process: port 0, its own database) whose UI is the one `npm run build`
 * made, the system's Chromium driven by playwright-core (never a downloaded browser:
 * $ENGRAM_CHROMIUM, else Debian's, helpers/chromium.ts), pages that fail the test on any
 * dialog, any request leaving the server, any script error or CSP violation, MCP writes
 * made the way an assistant makes them, and screenshots written only when asked for.
 * Users and tokens a test starts with are made in this process, on the server's database:
 * a child process each cost more than the test's page.
 */

import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, onTestFinished } from 'vitest';
import { openApp } from '../../src/app.js';
import { type Backend, openBackend } from '../../src/open-store.js';
import type { StorageBackend } from '../../src/storage/backend.js';
import { runInProcess, serveInProcess } from '../cli/fixtures.js';
import { sharedChromium } from '../helpers/chromium.js';
import { childEnv, tempDir } from '../helpers/engram.js';
import { TEST_PASSWORD_COST } from '../helpers/password-cost.js';
import { createTestDatabase, createTestSchema, findTestPostgres, type TestDatabase } from '../helpers/postgres.js';

if (!existsSync(new URL('../../dist/web/index.html', import.meta.url))) {
  throw new Error('dist/web is missing: build the web UI first with npm run build');
}

/** docs/screenshots, linked from the README and docs/web-ui.md: committed on purpose. */
const SCREENSHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));

/**
 * A screenshot of the page, saved as docs/screenshots/`name` when ENGRAM_UPDATE_SCREENSHOTS=1;
 * otherwise taken (so the page is drawn in full) and kept in memory only, so that an
 * ordinary test run writes no picture anywhere: not into the checkout, nor into a temporary
 * folder that every run and every checkout on the machine would share.
 */
export async function screenshot(
  page: Page,
  name: string,
  options: { readonly fullPage?: boolean } = {},
): Promise<void> {
  const picture = await page.screenshot(options);
  expect(picture.length).toBeGreaterThan(0);
  if (process.env.ENGRAM_UPDATE_SCREENSHOTS === '1') writeFileSync(join(SCREENSHOTS, name), picture);
}

export interface Engram {
  /** The server's origin, e.g. http://127.0.0.1:40123. */
  readonly origin: string;
  /** Settings a command needs to reach the same database (--db or --database-url). */
  readonly storeArgs: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

export interface EngramOptions {
  readonly auth?: 'none' | 'token' | 'oauth';
  /** A config file's content (caps, groups…). */
  readonly config?: unknown;
  /** PostgreSQL instead of a fresh SQLite file. */
  readonly databaseUrl?: string;
  /** Who owns the temporary folder and the process: the current test by default. */
  readonly cleanup?: Cleanup;
}

/** Gives a server, or what it stands on, a step to undo when its owner is done: onTestFinished by default. */
export type Cleanup = (undo: () => void | Promise<void>) => void;

/**
 * The backends a browser test runs each flow on, for describe.each: SQLite (a fresh file
 * per server), and PostgreSQL when one is reachable (a schema of its own per server,
 * dropped when the test ends, or by `cleanup` when given, in a database of the calling
 * file's, dropped after its tests: a database per test cost each test about half a second
 * more). Each gives the options that select it for startEngram, with `cleanup` as the
 * server's owner when given. Called at the top level of a test file.
 */
export async function webBackends(): Promise<[string, (cleanup?: Cleanup) => Promise<EngramOptions>][]> {
  const backends: [string, (cleanup?: Cleanup) => Promise<EngramOptions>][] = [
    ['SQLite', async (cleanup) => (cleanup ? { cleanup } : {})],
  ];
  const postgres = await findTestPostgres();
  if (postgres !== undefined) {
    let database: Promise<TestDatabase> | undefined;
    afterAll(async () => {
      await (await database)?.drop();
    });
    backends.push([
      'PostgreSQL',
      async (cleanup) => {
        database ??= createTestDatabase(postgres);
        const schema = await createTestSchema(await database);
        (cleanup ?? onTestFinished)(schema.drop);
        return cleanup ? { databaseUrl: schema.url, cleanup } : { databaseUrl: schema.url };
      },
    ]);
  }
  return backends;
}

/**
 * The built CLI's main() (tsc's dist/cli/program.js, what the bundled executable runs),
 * loaded once per worker: its HTTP server serves dist/web, the UI the build made, as the
 * executable's does. Run in this process rather than as a child, a server cost a page's
 * test a process start and every request's code cold (`engram serve` itself is started as
 * a process, and stopped by its signals, in test/http/serve.e2e.test.ts).
 */
const BUILT_PROGRAM = new URL('../../dist/cli/program.js', import.meta.url).href;

let builtMain: Promise<typeof import('../../src/cli/program.js')['main']> | undefined;

/** Runs `engram serve --port 0 --json` in this process and waits until it says where it listens. */
export async function startEngram(options: EngramOptions = {}): Promise<Engram> {
  const dir = tempDir(options.cleanup ?? onTestFinished);
  const env = childEnv(dir.path);
  const storeArgs = options.databaseUrl ? ['--database-url', options.databaseUrl] : ['--db', dir.file('memory.db')];
  const config = options.config === undefined ? [] : ['--config', dir.config(options.config)];
  const args = ['--port', '0', '--json', '--auth', options.auth ?? 'none', ...storeArgs, ...config];
  builtMain ??= import(BUILT_PROGRAM).then((program: typeof import('../../src/cli/program.js')) => program.main);
  const served = serveInProcess(await builtMain, args, env);
  let stopped: Promise<void> | undefined;
  const stop = () => {
    served.stop('end of test');
    stopped ??= served.exited.then(() => {});
    return stopped;
  };
  (options.cleanup ?? onTestFinished)(stop);
  const url = await served.listening;
  return { origin: new URL(url).origin, storeArgs: [...storeArgs, ...config], env, stop };
}

/** The store behind a running server, opened through the store API on the same database; the caller closes it. */
export function storeOf(engram: Engram): Promise<StorageBackend> {
  return openBackend(backendOf(engram));
}

/** The database the server's --db or --database-url names. */
export function backendOf(engram: Engram): Backend {
  const setting = (flag: string) => engram.storeArgs[engram.storeArgs.indexOf(flag) + 1] ?? '';
  return engram.storeArgs.includes('--db')
    ? { kind: 'sqlite', path: setting('--db') }
    : { kind: 'postgres', url: setting('--database-url') };
}

/**
 * Adds a user with a password, as the owner of a server does with `engram user add`:
 * through the Accounts service on the server's database, in this process (the command,
 * which reads the password from stdin, has its own tests in test/cli; a child process
 * here cost each browser test a second or more), hashed with the tests' cheaper scrypt
 * parameters, which the server's sign-in then checks with.
 */
export async function addUser(engram: Engram, user: string, password: string): Promise<void> {
  const app = await openApp({ backend: backendOf(engram), access: { passwordCost: TEST_PASSWORD_COST } });
  try {
    await app.accounts.create(user, password);
  } finally {
    await app.close();
  }
}

/** Creates a token for `user` with `engram token create` (`flags`: --review, …), run in this process, and returns it. */
export async function createToken(engram: Engram, user: string, flags: readonly string[] = []): Promise<string> {
  const run = await runInProcess(
    ['token', 'create', '--user', user, '--json', ...flags, ...engram.storeArgs],
    engram.env,
  );
  if (run.code !== 0) throw new Error(`engram token create failed: ${run.stderr}`);
  return (JSON.parse(run.stdout) as { token: string }).token;
}

/** One `memory_write` (or `tool`) over MCP, as an assistant sends it; the tool's text, or throws on an error. */
export async function mcpWrite(
  engram: Engram,
  args: Record<string, string>,
  options: { token?: string; client?: string; tool?: 'memory_write' | 'memory_drop' } = {},
): Promise<string> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
  };
  const post = (body: unknown) =>
    fetch(`${engram.origin}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  const initialized = await post({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: options.client ?? 'claude-code', version: '1.0.0' },
    },
  });
  // The session id names the client: history records the write as made by it.
  const session = initialized.headers.get('mcp-session-id');
  if (session) headers['Mcp-Session-Id'] = session;
  await initialized.text();
  const answer = await post({
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: options.tool ?? 'memory_write', arguments: args },
  });
  const text = await answer.text();
  const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '');
  const result = (JSON.parse(json) as { result?: { isError?: boolean; content: { text: string }[] } }).result;
  if (!result || result.isError) throw new Error(`${options.tool ?? 'memory_write'} failed: ${text}`);
  return result.content[0]?.text ?? '';
}

/** What a page did that it must never do: dialogs, requests elsewhere, script errors, CSP violations. */
export interface Watched {
  readonly page: Page;
  readonly context: BrowserContext;
  readonly dialogs: string[];
  readonly foreignRequests: string[];
  readonly errors: string[];
}

/** How a page is shown: the system's colour scheme, and the window's size in CSS pixels. */
export interface PageLook {
  readonly colorScheme?: 'light' | 'dark';
  readonly width?: number;
  readonly height?: number;
}

const DEFAULT_LOOK = { colorScheme: 'light', width: 1100, height: 800 } as const;

/** A page in a context of its own, whose listeners record into `watched` for the server at `origin`. */
interface Tab {
  watched: Watched;
  origin: string;
  look: Required<PageLook>;
}

async function openTab(browser: Browser, origin: string, look: Required<PageLook>): Promise<Tab> {
  const context = await browser.newContext({
    colorScheme: look.colorScheme,
    viewport: { width: look.width, height: look.height },
    deviceScaleFactor: 1,
  });
  const page = await context.newPage();
  const tab: Tab = { watched: { page, context, dialogs: [], foreignRequests: [], errors: [] }, origin, look };
  page.on('dialog', (dialog) => {
    tab.watched.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(`${tab.origin}/`) && !url.startsWith('data:')) tab.watched.foreignRequests.push(url);
  });
  page.on('pageerror', (error) => tab.watched.errors.push(error.message));
  page.on('console', (message) => {
    // A refusal the page shows (412, 401…) is logged by Chromium as a failed load: not an error of the page.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
      tab.watched.errors.push(message.text());
    }
  });
  return tab;
}

/** Gives a kept tab's page `look`, as a new context made with it would have (the page is on about:blank). */
async function restyleTab(tab: Tab, look: Required<PageLook>): Promise<void> {
  const { page } = tab.watched;
  if (look.width !== tab.look.width || look.height !== tab.look.height) {
    await page.setViewportSize({ width: look.width, height: look.height });
  }
  if (look.colorScheme !== tab.look.colorScheme) await page.emulateMedia({ colorScheme: look.colorScheme });
  tab.look = look;
}

/**
 * Leaves a tab as a fresh context would be for the next test: its origin's storage, its
 * cookies (kept per host, whatever the port) and permissions gone, on about:blank, so the
 * page holds no connection to the server. False when the tab could not be reset.
 */
async function resetTab(tab: Tab): Promise<boolean> {
  const { page, context } = tab.watched;
  try {
    if (page.url().startsWith('http')) {
      await page.evaluate('sessionStorage.clear(); localStorage.clear()');
    }
    await page.goto('about:blank');
    await context.clearCookies();
    await context.clearPermissions();
    return true;
  } catch {
    return false;
  }
}

/**
 * Reset tabs waiting for the next test, of any file of this vitest worker: the worker's
 * one Chromium (sharedChromium) outlives a file, and so may they, as they do from test to
 * test (a page loads only its own server's origin, whose storage the reset clears, and
 * the watched checks fail a test whose page went anywhere else).
 */
const idle: Tab[] = [];

/**
 * Registers in the calling test file the checks every page must pass: after each test, no
 * page it opened showed a dialog, sent a request off the server or raised an error.
 * Returns how a test opens a watched page on `engram`: each in a context of its own, as a
 * fresh one would be, with `look` (light, 1100 by 800 by default). The contexts are kept
 * from test to test and reset between (resetTab): a new one started a renderer process,
 * about 2 s of CPU here, most of what opening a page cost; a page that cannot be reset is
 * closed instead. The browser is the worker's (sharedChromium), launched before the file's
 * tests if it is not yet.
 */
export function watchedPages(): (engram: Engram, look?: PageLook) => Promise<Watched> {
  let browser: Browser | undefined;
  let opened: Tab[] = [];
  beforeAll(async () => {
    browser = await sharedChromium();
  });
  afterEach(async () => {
    const used = opened;
    opened = [];
    try {
      for (const tab of used) {
        expect(tab.watched.dialogs).toEqual([]);
        expect(tab.watched.foreignRequests).toEqual([]);
        expect(tab.watched.errors).toEqual([]);
      }
    } finally {
      for (const tab of used) {
        if (browser?.isConnected() && (await resetTab(tab))) idle.push(tab);
        else await tab.watched.context.close().catch(() => {});
      }
    }
  });
  afterAll(() => {
    browser = undefined;
  });
  return async (engram, look = {}) => {
    if (browser === undefined) throw new Error('watchedPages() opens pages only inside the tests of its file');
    const wanted = { ...DEFAULT_LOOK, ...look };
    let tab: Tab | undefined;
    while (tab === undefined && idle.length > 0) {
      const kept = idle.pop()!;
      if (kept.watched.context.browser() === browser) tab = kept;
    }
    if (tab === undefined) tab = await openTab(browser, engram.origin, wanted);
    else await restyleTab(tab, wanted);
    const { page, context } = tab.watched;
    tab.watched = { page, context, dialogs: [], foreignRequests: [], errors: [] };
    tab.origin = engram.origin;
    opened.push(tab);
    return tab.watched;
  };
}

/** watchedPages, each page opened at `path` on the server (the index by default). */
export function watchedPagesAt(): (engram: Engram, path?: string) => Promise<Page> {
  const openWatched = watchedPages();
  return async (engram, path = '/') => {
    const watched = await openWatched(engram);
    await watched.page.goto(`${engram.origin}${path}`);
    return watched.page;
  };
}

/** What the REST API answers at `path`, read as the page would. */
// biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON the route answers
export async function getJson(engram: Engram, path: string): Promise<any> {
  return (await fetch(`${engram.origin}${path}`)).json();
}
