/**
 * The consent page in a real browser (Chromium, JavaScript off), reached as apps reach
 * it: a link on another site. What only a browser shows: the form's POST carries our
 * Origin (the page's referrer policy must not turn it into `null`), the session cookie
 * (SameSite=Strict) is recognised on the next connection though the navigation began on
 * the app's site (the page reloads itself), the labels name their fields, and the browser
 * lands on the app's redirect URI with the code, `state` and `iss`.
 */

import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAccounts } from '../../src/core/accounts.js';
import { Authorization } from '../../src/core/oauth/authorization.js';
import { OAuthClients } from '../../src/core/oauth/clients.js';
import { createAuthorizeRoute } from '../../src/http/oauth/authorize.js';
import { openMemoryStore } from '../../src/store/memory/index.js';

const store = openMemoryStore();
const accounts = createAccounts(store);

/** What Engram saw: method, Sec-Fetch-Site and whether the session cookie came along. */
const seen: string[] = [];
let engram: Server;
let app: Server;
let browser: Browser;
let link: string;

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  await accounts.create('alice', 'correct horse battery');
  let origin = '';
  let callback = '';
  engram = createServer((req, res) => {
    seen.push(`${req.method} ${req.headers['sec-fetch-site']} ${/engram_session=/.test(req.headers.cookie ?? '')}`);
    const clients = new OAuthClients(store.grants, {
      configured: [{ id: 'notes', kind: 'configured', name: 'Notes <App>', redirectUris: [callback] }],
    });
    const authorization = new Authorization(store.grants, clients, { issuer: origin, resource: `${origin}/mcp` });
    createAuthorizeRoute({ authorization, accounts, publicUrl: new URL(origin), trustProxy: false })(req, res).catch(
      (error: unknown) => {
        res.writeHead(500).end(String(error));
      },
    );
  });
  origin = `http://127.0.0.1:${await listen(engram)}`;
  // The app is another site: localhost, not 127.0.0.1.
  app = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(req.url?.startsWith('/cb') ? '<p id="back">back</p>' : `<a id="connect" href="${link}">Connect</a>`);
  });
  callback = `http://localhost:${await listen(app)}/cb`;
  link = `${origin}/authorize?${new URLSearchParams({
    client_id: 'notes',
    redirect_uri: callback,
    response_type: 'code',
    code_challenge: createHash('sha256').update('v'.repeat(64)).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'st&te',
  })}`;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  engram?.close();
  app?.close();
});

it('signs in, allows, and on the next connection knows the user by the session cookie', async () => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  const connect = async () => {
    await page.goto(new URL('/', new URL(link).searchParams.get('redirect_uri') ?? '').href);
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
  expect(await landed()).toEqual({
    code: expect.stringMatching(/^engram_code_/),
    state: 'st&te',
    iss: new URL(link).origin,
  });

  await connect();
  expect(await page.locator('main').textContent()).toContain('Signed in as alice. Use another account');
  expect(await page.getByLabel('Password').count()).toBe(0);
  await page.getByRole('checkbox', { name: 'Read only' }).check();
  await page.getByRole('button', { name: 'Allow' }).click();
  expect((await landed()).code).toMatch(/^engram_code_/);

  expect((await store.grants.listGrants()).map((grant) => [grant.user, grant.readOnly])).toEqual([
    ['alice', false],
    ['alice', true],
  ]);
  expect(seen).toEqual([
    'GET cross-site false', // from the app's link: Strict keeps the cookie off (there is none yet)
    'GET same-origin false', // the page reloads itself
    'POST same-origin false',
    'GET cross-site false', // from the app's link again: Strict keeps the cookie off
    'GET same-origin true', // the reload carries it
    'POST same-origin true',
  ]);
  await context.close();
}, 60_000);
