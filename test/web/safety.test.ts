/**
 * Memory may hold HTML and prompt injections: the web UI shows them, never runs, loads or
 * follows them. Entries written over MCP with an <img onerror>, a <script>, javascript:
 * links, a remote image, an iframe, a meta refresh, and a 2 MB line of such markup, are
 * opened as Markdown and raw in Chromium: no dialog, no request for any of it, no element
 * it asked for, the markup readable as text. And an address (a link someone sent) whose
 * entry name holds `..`, `/`, `?`, `#` or `%` never steers the page's calls to another API
 * path: each piece of a name is one encoded segment, and `..` is refused.
 */

import type { Request } from 'playwright-core';
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest';
import { runEngram } from '../helpers/engram.js';
import { type Engram, mcpWrite, startEngram, type Watched, watchedPages } from './fixtures.js';

const HOSTILE = [
  '<img src=x onerror=alert(1)>',
  '<script>alert(1)</script>',
  '[x](javascript:alert(1))',
  '<a href="javascript:alert(2)">click me</a>',
  '![pixel](http://example.invalid/pixel.png)',
  '<iframe src="http://example.invalid/frame"></iframe>',
  '<meta http-equiv="refresh" content="0;url=http://example.invalid/away">',
  '<svg onload=alert(3)></svg>',
  '<form action="http://example.invalid/post"><button>Send</button></form>',
].join('\n\n');

const LONG_LINE = '<img src=x onerror=alert(4)>'.repeat(75_000);

const openWatched = watchedPages();
let engram: Engram;
const undo: (() => void | Promise<void>)[] = [];

beforeAll(async () => {
  engram = await startEngram({
    config: { entryCap: 4_000_000, userCap: 8_000_000 },
    cleanup: (step) => undo.push(step),
  });
  await mcpWrite(engram, {
    name: 'topics/hostile',
    description: '<img src=x onerror=alert(5)> looks harmless',
    new: HOSTILE,
  });
  const big = await runEngram(
    ['write', 'topics/long-line', '-', '-d', 'One 2 MB line of markup', ...engram.storeArgs],
    engram.env,
    LONG_LINE,
  );
  expect(big.stderr).toBe('');
});

afterAll(async () => {
  for (const step of undo.reverse()) await step();
});

/** A watched page on the server and every request it makes in this test (the page is kept for the next). */
async function openRecording(): Promise<{ watched: Watched; requests: Request[] }> {
  const watched = await openWatched(engram);
  const requests: Request[] = [];
  const record = (request: Request) => requests.push(request);
  watched.page.on('request', record);
  onTestFinished(() => {
    watched.page.off('request', record);
  });
  return { watched, requests };
}

/** Every request the page made that memory asked for: `x`, or anything at example.invalid. */
function asked(requests: Request[]): string[] {
  return requests
    .map((request) => request.url())
    .filter((url) => url.includes('example.invalid') || new URL(url).pathname === '/x');
}

it('an entry of hostile markup is shown as text, as Markdown and raw: nothing runs, loads or navigates', async () => {
  const { watched, requests } = await openRecording();
  const { page } = watched;
  const answer = await page.goto(`${engram.origin}/`);
  // The third lock, behind escaping and the sanitiser: the browser refuses inline script and foreign loads.
  expect(answer?.headers()['content-security-policy']).toBe(
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
      "connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  );
  expect(answer?.headers()['x-frame-options']).toBe('DENY');
  const row = page.locator('li', { has: page.getByRole('link', { name: 'topics/hostile' }) });
  await expect.poll(() => row.textContent()).toContain('<img src=x onerror=alert(5)> looks harmless');

  await page.getByRole('link', { name: 'topics/hostile' }).click();
  const markdown = page.locator('.markdown');
  await markdown.waitFor();
  const text = (await markdown.textContent()) ?? '';
  expect(text).toContain('<img src=x onerror=alert(1)>');
  expect(text).toContain('<script>alert(1)</script>');
  expect(text).toContain('[pixel: http://example.invalid/pixel.png]');
  expect(await markdown.locator('img, script, iframe, meta, svg, form, button, object, embed').count()).toBe(0);
  const links = await markdown
    .locator('a')
    .evaluateAll((anchors) =>
      anchors.map((anchor) => ({ href: anchor.getAttribute('href'), rel: anchor.getAttribute('rel') })),
    );
  expect(links).toEqual([{ href: null, rel: 'noopener noreferrer' }]);
  await markdown.getByText('x', { exact: true }).click();

  await page.getByRole('button', { name: 'Raw' }).click();
  expect(await page.locator('pre.raw').textContent()).toBe(`${HOSTILE}\n`);

  expect(page.url()).toBe(`${engram.origin}/entries/topics/hostile`);
  expect(watched.dialogs).toEqual([]);
  expect(asked(requests)).toEqual([]);
  expect(watched.foreignRequests).toEqual([]);
  expect(watched.errors).toEqual([]);
});

it('a 2 MB line of markup renders as text, as Markdown and raw', async () => {
  const { watched, requests } = await openRecording();
  const { page } = watched;
  await page.goto(`${engram.origin}/entries/topics/long-line`);
  const markdown = page.locator('.markdown');
  await markdown.waitFor();
  expect(await markdown.evaluate((element, line) => element.textContent?.trim() === line, LONG_LINE)).toBe(true);
  expect(await markdown.locator('img').count()).toBe(0);
  await page.getByRole('button', { name: 'Raw' }).click();
  expect(await page.locator('pre.raw').evaluate((element) => element.textContent)).toBe(`${LONG_LINE}\n`);
  expect(watched.dialogs).toEqual([]);
  expect(asked(requests)).toEqual([]);
  expect(watched.foreignRequests).toEqual([]);
  expect(watched.errors).toEqual([]);
});

/** The calls every page makes: who is signed in, live updates, and the header's count of changes waiting for review. */
const EVERY_PAGE = new Set(['/api/session', '/api/events', '/api/review/count']);

/** The API paths the page called, as sent, but those every page makes. */
function apiCalls(requests: Request[]): string[] {
  return requests
    .map((request) => new URL(request.url()).pathname)
    .filter((path) => path.startsWith('/api/') && !EVERY_PAGE.has(path));
}

it('a name in the address never steers a call to another API path', async () => {
  const { watched, requests } = await openRecording();
  const { page } = watched;
  // `..` in a name, encoded (a URL resolves `..` however it is written): the index, or the entry's refusal.
  const steering: [string, () => Promise<void>][] = [
    ['/entries/..%2F..%2Fapi%2Factivity/x', () => page.getByRole('link', { name: 'topics/hostile' }).waitFor()],
    ['/entries/topics/..%2F..%2F..%2Fapi%2Factivity', () => page.getByRole('alert').waitFor()],
    ['/entries/topics%2F..%2F..%2F..%2Fapi/activity/history', () => page.getByRole('alert').waitFor()],
  ];
  for (const [address, settled] of steering) {
    requests.length = 0;
    await page.goto(`${engram.origin}${address}`);
    await settled();
    for (const path of apiCalls(requests)) expect(path).toMatch(/^\/api\/entries(\/topics\/[^/]+(\/history)?)?$/);
  }
  // `/`, `?`, `#` and `%` stay inside the slug's one segment, which the server refuses as a name.
  requests.length = 0;
  await page.goto(`${engram.origin}/entries/topics/a%2Fb%3Fc%23d%25e`);
  await page.getByRole('alert').getByText('is not a valid name', { exact: false }).waitFor();
  // (Asked twice: when the page opens, and again once live updates are listening.)
  expect(new Set(apiCalls(requests))).toEqual(new Set(['/api/entries/topics/a%2Fb%3Fc%23d%25e']));
  expect(watched.errors).toEqual([]);
});
