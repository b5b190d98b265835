/**
 * The consent page in a real browser (Chromium, JavaScript off) on `engram serve --auth
 * oauth`, reached as apps reach it: a link on another site. What only a browser shows:
 * the form's POST carries our Origin (the page's referrer policy must not turn it into
 * `null`), the session cookie (SameSite=Strict) is recognised on the next connection
 * though the navigation began on the app's site (the page reloads itself, once), the
 * labels name their fields, and the browser lands on the app's redirect URI with the
 * code, `state` and `iss`.
 */

import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest';
import { sharedChromium } from '../helpers/chromium.js';
import { startOAuthServer } from './oauth-fixtures.js';

let app: Server;
let callback: string;
let browser: Browser;

beforeAll(async () => {
  // The app is another site: localhost, where Engram is 127.0.0.1. Its page links to `?go=<url>`.
  app = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const go = url.searchParams.get('go') ?? '';
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(
      url.pathname === '/cb'
        ? '<p id="back">back</p>'
        : `<a id="connect" href="${go.replaceAll('&', '&amp;')}">Connect</a>`,
    );
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  callback = `http://localhost:${(app.address() as AddressInfo).port}/cb`;
  browser = await sharedChromium();
}, 60_000);

afterAll(() => {
  app?.close();
});

it('signs in, allows, and on the next connection knows the user by the session cookie', async () => {
  const server = await startOAuthServer({
    configured: [{ id: 'notes', kind: 'configured', name: 'Notes <App>', redirectUris: [callback] }],
  });
  await server.accounts.create('alice', 'correct horse battery');
  const link = `${server.origin}/authorize?${new URLSearchParams({
    client_id: 'notes',
    redirect_uri: callback,
    response_type: 'code',
    code_challenge: createHash('sha256').update('v'.repeat(64)).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'st&te',
  })}`;

  const context = await browser.newContext({ javaScriptEnabled: false });
  onTestFinished(() => context.close());
  const page = await context.newPage();
  /** What Engram was sent, in order: method, Sec-Fetch-Site and whether the session cookie came along. */
  const sent: Promise<string>[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(`${server.origin}/authorize`)) return;
    sent.push(
      request
        .allHeaders()
        .then(
          (headers) =>
            `${request.method()} ${headers['sec-fetch-site']} ${/engram_session=/.test(headers.cookie ?? '')}`,
        ),
    );
  });
  const connect = async () => {
    await page.goto(`${new URL(callback).origin}/?${new URLSearchParams({ go: link })}`);
    await page.click('#connect');
    await page.getByRole('button', { name: 'Allow' }).waitFor();
  };
  const landed = async () => {
    await page.locator('#back').waitFor();
    return Object.fromEntries(new URL(page.url()).searchParams);
  };

  await connect();
  expect(await page.locator('h1').textContent()).toBe('Connect Notes <App> to your Engram memory');
  await page.getByLabel('User').fill('Alice');
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Allow' }).click();
  expect(await landed()).toEqual({ code: expect.stringMatching(/^engram_code_/), state: 'st&te', iss: server.origin });

  await connect();
  expect(await page.locator('main').textContent()).toContain('Signed in as alice. Use another account');
  expect(await page.getByLabel('Password').count()).toBe(0);
  await page.getByRole('radio', { name: 'Read only' }).check();
  await page.getByRole('button', { name: 'Allow' }).click();
  expect((await landed()).code).toMatch(/^engram_code_/);

  expect((await server.store.oauth.listGrants()).map((grant) => [grant.user, grant.readOnly])).toEqual([
    ['alice', false],
    ['alice', true],
  ]);
  expect(await Promise.all(sent)).toEqual([
    'GET cross-site false', // from the app's link: Strict keeps the cookie off (there is none yet)
    'GET same-origin false', // the page reloads itself
    'POST same-origin false',
    'GET cross-site false', // from the app's link again: Strict keeps the cookie off
    'GET same-origin true', // the reload carries it
    'POST same-origin true',
  ]);
}, 60_000);
