/**
 * What the person decides on the consent page, and what Engram refuses, against `engram
 * serve --auth oauth` as an operator starts it (the built CLI, a child process), with the
 * MCP SDK's client and Chromium: Read only gives a token that reads but may not write;
 * Deny sends the app access_denied; a wrong password shows the page again, and guessing
 * on is slowed down (429) and logged without the guesses; a Client ID Metadata Document
 * too big, not JSON, naming another client_id, or on a private address is refused on a
 * page of Engram's own. Every refusal issues nothing: no grant, code, token or session
 * in the database, no app in `engram token list`.
 */

import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, Page } from 'playwright-core';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { sharedChromium } from '../helpers/chromium.js';
import { startHttpsServer, testCertificateFiles } from '../helpers/tls.js';
import {
  type ConsentChoice,
  decide,
  type EngramOAuthServer,
  NOTHING_ISSUED,
  openInBrowser,
  PASSWORD,
  personInBrowser,
  type RedirectTarget,
  startEngramOAuth,
  startRedirectTarget,
  TestOAuthProvider,
} from './oauth-e2e.js';

let browser: Browser;
beforeAll(async () => {
  browser = await sharedChromium();
}, 60_000);

/**
 * The app's first connection: refused with 401, the SDK registers and sends the person to
 * the consent page, where `consent` plays them; resolves with the transport, for finishAuth.
 */
async function firstConnection(
  server: EngramOAuthServer,
  name: string,
  target: RedirectTarget,
  consent: (url: URL) => Promise<URLSearchParams | undefined>,
) {
  const provider = new TestOAuthProvider(target.redirectUri, name, consent);
  const transport = new StreamableHTTPClientTransport(server.mcpUrl, { authProvider: provider });
  await expect(new Client({ name: 'oauth-e2e', version: '1.0.0' }).connect(transport)).rejects.toThrow(
    UnauthorizedError,
  );
  return { provider, transport };
}

/** An app whose person makes `choice` in the browser. */
async function appDeciding(server: EngramOAuthServer, name: string, choice: ConsentChoice) {
  const target = await startRedirectTarget();
  const person = personInBrowser(browser, target, choice);
  return { ...(await firstConnection(server, name, target, person.consent)), seen: person.seen };
}

/** Submits the consent form as `choice` says, and waits for Engram's answer to load. */
async function submitConsent(page: Page, server: EngramOAuthServer, choice: ConsentChoice) {
  const answered = page.waitForResponse(
    (response) => response.url().startsWith(`${server.origin}/authorize`) && response.request().method() === 'POST',
  );
  await decide(page, choice);
  const response = await answered;
  await page.waitForLoadState();
  return response;
}

function toolText(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as { type: string; text?: string }[]).map((block) => block.text ?? '').join('');
}

describe('the person decides', () => {
  it('Read only: the app gets memory:read; memory_write is refused as read-only, memory_open works', async () => {
    const server = await startEngramOAuth();
    const { provider, transport, seen } = await appDeciding(server, 'Reader', {
      user: 'ada',
      password: PASSWORD,
      readOnly: true,
      decision: 'allow',
    });
    expect(seen[0]?.text).toContain('Reader asks to read and change your memory.');
    await transport.finishAuth(provider.code);
    expect(provider.saved?.scope).toBe('memory:read');

    const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
    onTestFinished(() => client.close().catch(() => {}));
    await client.connect(new StreamableHTTPClientTransport(server.mcpUrl, { authProvider: provider }));
    const write = await client.callTool({
      name: 'memory_write',
      arguments: { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' },
    });
    expect(write.isError).toBe(true);
    expect(toolText(write)).toMatch(/read-only/);
    const open = await client.callTool({ name: 'memory_open', arguments: {} });
    expect(open.isError).toBeFalsy();

    expect(await server.database.query('SELECT name FROM entries')).toEqual([]);
    expect(await server.apps()).toEqual([
      expect.objectContaining({ user: 'ada', label: 'Reader', readOnly: true, scopes: ['memory:read'] }),
    ]);
  }, 60_000);

  it('Changes need my review: the app writes and drops, told its changes are saved for review; none applies until approved', async () => {
    const server = await startEngramOAuth();
    await server.cli(['write', 'topics/editor', '-d', 'Editor', '--new', 'Helix', '--user', 'ada']);
    const { provider, transport } = await appDeciding(server, 'Proposer', {
      user: 'ada',
      password: PASSWORD,
      review: true,
      decision: 'allow',
    });
    await transport.finishAuth(provider.code);
    expect(provider.saved?.scope).toBe('memory:read memory:write');

    const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
    onTestFinished(() => client.close().catch(() => {}));
    await client.connect(new StreamableHTTPClientTransport(server.mcpUrl, { authProvider: provider }));
    const held = "Saved for the user's review, not applied yet (the user approves or rejects it; do not call again): ";
    const write = await client.callTool({
      name: 'memory_write',
      arguments: { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' },
    });
    expect({ isError: write.isError, text: toolText(write) }).toEqual({
      isError: false,
      text: `${held}topics/me (11 bytes): Who I am`,
    });
    const drop = await client.callTool({ name: 'memory_drop', arguments: { name: 'topics/editor' } });
    expect(toolText(drop)).toBe(`${held}Drop of topics/editor (6 bytes): Editor`);
    const open = await client.callTool({ name: 'memory_open', arguments: {} });
    expect(toolText(open)).toBe('topics/editor (6 bytes): Editor');

    expect(await server.apps()).toEqual([
      expect.objectContaining({ label: 'Proposer', readOnly: false, review: true }),
    ]);
    const waiting = JSON.parse(await server.cli(['review', 'list', '--json', '--user', 'ada'])) as { id: string }[];
    expect(waiting).toHaveLength(2);
    await server.cli(['review', 'approve', waiting[0]!.id, '--user', 'ada']);
    await server.cli(['review', 'reject', waiting[1]!.id, '--user', 'ada']);
    const after = await client.callTool({ name: 'memory_open', arguments: {} });
    expect(toolText(after)).toBe('topics/editor (6 bytes): Editor\ntopics/me (11 bytes): Who I am');
    expect(await server.database.query('SELECT actor FROM revisions ORDER BY at DESC LIMIT 1')).toEqual([
      { actor: 'Proposer (approved by ada via cli)' },
    ]);
  }, 60_000);

  it('Deny: the app gets access_denied with its state and the issuer, and nothing is issued', async () => {
    const server = await startEngramOAuth();
    const { provider } = await appDeciding(server, 'Unwanted', { decision: 'deny' });
    expect(Object.fromEntries(provider.returns[0] ?? [])).toEqual({
      error: 'access_denied',
      error_description: 'The user denied the request.',
      state: provider.lastState,
      iss: server.origin,
    });
    expect(provider.saved).toBeUndefined();
    expect(await server.apps()).toEqual([]);
    expect(await server.issued()).toEqual(NOTHING_ISSUED);
  }, 60_000);

  it('a wrong password shows the page again and issues nothing; guessing on is slowed down and logged without the guesses', async () => {
    const server = await startEngramOAuth();
    let page: Page | undefined;
    const submit = (choice: ConsentChoice) => submitConsent(page!, server, choice);
    const target = await startRedirectTarget();
    const { provider } = await firstConnection(server, 'Guesser', target, async (url) => {
      page = await openInBrowser(browser, url);
      const answer = await submit({ user: 'ada', password: 'not the password', decision: 'allow' });
      expect(answer.status()).toBe(400);
      return undefined;
    });
    expect(await page!.getByRole('alert').textContent()).toBe('Wrong user name or password.');
    expect(await page!.getByLabel('User').inputValue()).toBe('ada');
    expect(await page!.getByRole('button', { name: 'Allow' }).count()).toBe(1);
    expect(await server.issued()).toEqual(NOTHING_ISSUED);

    // Five failures are free; after that each must wait, twice as long after every further one.
    let answer = await submit({ password: 'guess 1', decision: 'allow' });
    for (let guess = 2; answer.status() !== 429 && guess <= 20; guess++) {
      answer = await submit({ password: `guess ${guess}`, decision: 'allow' });
    }
    expect(answer.status()).toBe(429);
    expect(Number(answer.headers()['retry-after'])).toBeGreaterThan(0);
    expect(await page!.locator('h1').textContent()).toBe('Too many failed sign-ins');
    expect(await page!.locator('main').textContent()).toMatch(/Wait \d+ (seconds?|minutes), then try again\./);

    expect(await server.issued()).toEqual(NOTHING_ISSUED);
    expect(await server.apps()).toEqual([]);
    expect(provider.returns).toEqual([]);
    // The browser never went back to the app: the next landing there is this one, made by the test.
    const next = target.next();
    await fetch(`${target.redirectUri}?probe=1`);
    expect(Object.fromEntries(await next)).toEqual({ probe: '1' });
    const log = server.stderr();
    expect(log).toContain('sign-in failed for user "ada" from "127.0.0.1": wrong password');
    expect(log).toMatch(/sign-in refused for user "ada" from "127\.0\.0\.1": too many failed attempts, \d+ s to wait/);
    expect(log).not.toMatch(/not the password|guess \d/);
  }, 60_000);

  it('a form whose CSRF cookie is gone (browser restarted, cookies cleared) is refused, and nothing is issued', async () => {
    const server = await startEngramOAuth();
    const target = await startRedirectTarget();
    let page: Page | undefined;
    const { provider } = await firstConnection(server, 'Forgetful', target, async (url) => {
      page = await openInBrowser(browser, url);
      await page.context().clearCookies();
      const answer = await submitConsent(page, server, { user: 'ada', password: PASSWORD, decision: 'allow' });
      expect(answer.status()).toBe(403);
      return undefined;
    });
    expect(await page!.locator('main').textContent()).toContain(
      'This form has expired or did not come from Engram’s own page.',
    );
    expect(provider.returns).toEqual([]);
    expect(await server.issued()).toEqual(NOTHING_ISSUED);
    expect(await server.apps()).toEqual([]);
    expect(server.stderr()).not.toContain('sign-in');
  }, 60_000);
});

describe('a Client ID Metadata Document Engram refuses, on a page of its own, issuing nothing', () => {
  const CHALLENGE = createHash('sha256').update('v'.repeat(64)).digest('base64url');

  function decodeEntities(text: string): string {
    return text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
  }

  /** Serves `answer` over HTTPS (test CA) at /oauth/client.json; counts what is fetched. */
  async function documentSite(answer: (res: ServerResponse, url: string) => void) {
    const fetched: string[] = [];
    const site = await startHttpsServer((req, res) => {
      fetched.push(req.url ?? '');
      answer(res, `https://127.0.0.1:${site.port}/oauth/client.json`);
    });
    return { url: `${site.origin}/oauth/client.json`, fetched };
  }

  function json(res: ServerResponse, value: unknown): void {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(value));
  }

  const document = (url: string, more: Record<string, unknown> = {}) => ({
    client_id: url,
    client_name: 'Claude',
    redirect_uris: ['http://127.0.0.1/callback'],
    ...more,
  });

  /** What the browser is shown when an app with this client_id sends it to /authorize. */
  async function authorizeAs(server: EngramOAuthServer, clientId: string) {
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: 'http://127.0.0.1:9/callback',
      response_type: 'code',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
      state: 'st',
      resource: server.mcpUrl.href,
    });
    const response = await fetch(`${server.origin}/authorize?${query}`, { redirect: 'manual' });
    return { status: response.status, location: response.headers.get('location'), body: await response.text() };
  }

  async function expectRefused(server: EngramOAuthServer, url: string, reason: string): Promise<void> {
    const page = await authorizeAs(server, url);
    expect(page.status).toBe(400);
    expect(page.location).toBeNull();
    expect(page.body).toContain('<h1>Engram cannot connect this app</h1>');
    expect(page.body).not.toContain('<form');
    const text = decodeEntities(page.body);
    expect(text).toContain(
      'Engram does not know this app: the client metadata document at the address its client_id names cannot be used: ',
    );
    expect(text).not.toContain(url);
    expect(text).toContain(reason);
    expect(await server.issued()).toEqual(NOTHING_ISSUED);
    expect(await server.apps()).toEqual([]);
  }

  /** Engram allowed to fetch documents from this computer, trusting the test CA. */
  const allowingLoopback = () =>
    startEngramOAuth({
      config: { allowPrivateClientMetadata: true },
      env: { NODE_EXTRA_CA_CERTS: testCertificateFiles().ca },
    });

  it('too big (over 5 KiB)', async () => {
    const site = await documentSite((res, url) => json(res, document(url, { padding: 'x'.repeat(6 * 1024) })));
    await expectRefused(await allowingLoopback(), site.url, 'is too big: a client metadata document may hold at most');
    expect(site.fetched).toEqual(['/oauth/client.json']);
  });

  it('not JSON', async () => {
    const site = await documentSite((res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<!doctype html><p>Claude</p>');
    });
    await expectRefused(
      await allowingLoopback(),
      site.url,
      'is not JSON (Content-Type (a value not shown here)); serve it as application/json',
    );
  });

  it('JSON that does not parse', async () => {
    const site = await documentSite((res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"client_id": ');
    });
    await expectRefused(await allowingLoopback(), site.url, 'is not JSON: ');
  });

  it('whose client_id is not its own URL', async () => {
    const site = await documentSite((res, url) => json(res, document(url.replace('client.json', 'other.json'))));
    await expectRefused(
      await allowingLoopback(),
      site.url,
      'its client_id (a value not shown here) must be exactly the URL it is served from',
    );
  });

  it('on a private address (loopback), without connecting to it, unless the operator allows it', async () => {
    const site = await documentSite((res, url) => json(res, document(url)));
    const server = await startEngramOAuth({ env: { NODE_EXTRA_CA_CERTS: testCertificateFiles().ca } });
    await expectRefused(server, site.url, 'its host "127.0.0.1" was not found or is not on the public internet');
    expect(site.fetched).toEqual([]);
    // The same document, allowed: the consent page.
    const allowed = await authorizeAs(await allowingLoopback(), site.url);
    expect(allowed.status).toBe(200);
    expect(allowed.body).toContain('<h1>Connect <strong>Claude</strong> to your Engram memory</h1>');
    expect(site.fetched).toEqual(['/oauth/client.json']);
  });
});
