/**
 * The web UI's files (web.ts) through the real app: index.html for `/` and the UI's
 * routes (never cached), hashed assets cached for a year, the strict CSP and framing
 * headers on every answer, nothing outside the folder (traversal in any spelling), and a
 * page saying how to build the UI when it is missing.
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createWebRoutes } from '../../src/http/web.js';
import { raw, testFolder } from './fixtures.js';

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
  "connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** A server of only the web routes over `root`; 404 "other" for what they leave. */
async function serveWeb(root: string): Promise<number> {
  const web = createWebRoutes(root);
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (!web(req, res, path)) {
      res.writeHead(404);
      res.end('other');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

function built(): string {
  const root = join(testFolder(), 'web');
  mkdirSync(join(root, 'assets'), { recursive: true });
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>Engram</title>');
  writeFileSync(join(root, 'assets', 'index-abc123.js'), 'console.log(1)');
  writeFileSync(join(root, 'assets', 'index-abc123.css'), 'body{}');
  writeFileSync(join(root, 'favicon.svg'), '<svg/>');
  writeFileSync(join(testFolder(), 'secret.txt'), 'secret');
  return root;
}

describe('the web UI files', () => {
  it.each(['/', '/entries/people/ada', '/new', '/sessions', '/review', '/duplicates'])(
    'answers %s with index.html, never cached',
    async (path) => {
      const port = await serveWeb(built());
      const response = await raw(port, { path });
      expect(response.status).toBe(200);
      expect(response.body).toBe('<!doctype html><title>Engram</title>');
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.headers['cache-control']).toBe('no-cache');
      expect(response.headers['content-security-policy']).toBe(CSP);
      expect(response.headers['x-frame-options']).toBe('DENY');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
    },
  );

  it('answers hashed assets with their type, cached for a year, and top-level files', async () => {
    const port = await serveWeb(built());
    const script = await raw(port, { path: '/assets/index-abc123.js' });
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(script.body).toBe('console.log(1)');
    expect((await raw(port, { path: '/assets/index-abc123.css' })).headers['content-type']).toBe(
      'text/css; charset=utf-8',
    );
    expect((await raw(port, { path: '/favicon.svg' })).headers['content-type']).toBe('image/svg+xml');
    const head = await raw(port, { method: 'HEAD', path: '/assets/index-abc123.js' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it.each([
    '/assets/../index.html',
    '/assets/..%2f..%2fsecret.txt',
    '/assets/%2e%2e/secret.txt',
    '/../secret.txt',
    '/assets/.hidden',
    '/assets/missing.js',
    '/assets/sub/dir.js',
    '/entries/people',
    '/nope',
  ])('serves nothing else: %s', async (path) => {
    const port = await serveWeb(built());
    const response = await raw(port, { path });
    expect(response.body).not.toBe('secret');
    expect(response.status).toBe(404);
  });

  it('leaves other methods to the rest of the app', async () => {
    const port = await serveWeb(built());
    expect((await raw(port, { method: 'POST', path: '/' })).body).toBe('other');
  });

  it('says how to build the UI when dist/web is missing', async () => {
    const port = await serveWeb(join(testFolder(), 'nothing'));
    const response = await raw(port, { path: '/' });
    expect(response.status).toBe(404);
    expect(response.body).toContain('Engram’s web UI is not built');
    expect(response.body).toContain('npm run build');
    expect(response.headers['content-security-policy']).toBe(CSP);
  });
});
