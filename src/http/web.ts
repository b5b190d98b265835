/**
 * The web UI's files (DESIGN §9), as `npm run build` leaves them in dist/web: index.html
 * for `/` and for each of the UI's own routes, its hashed assets under /assets/ (cached
 * for a year: a new build has new names) and index.html never cached, so an upgrade shows
 * at the next load. Every answer carries a strict Content-Security-Policy: the UI's own
 * scripts and styles only, no inline script, nothing loaded from elsewhere, never framed
 * — memory may hold HTML and prompt injections, and even if some slipped through the
 * sanitiser, the browser would refuse to run or load it. Only files inside the folder are
 * served (names are checked, not resolved from the path). Without the build, a page says
 * how to get one.
 */

import { createReadStream, type Stats, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** dist/web, beside dist/http where this file is built to. */
export const DEFAULT_WEB_ROOT = fileURLToPath(new URL('../web', import.meta.url));

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const SECURITY_HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/**
 * The UI's routes (web/src/lib/routes.ts, App.svelte's router): each is answered with
 * index.html. test/web-lib/routes-served.test.ts holds the two lists to each other.
 */
const CLIENT_ROUTE =
  /^\/(?:entries\/[^/]+\/[^/]+(?:\/history)?|new|sessions|trash|activity|review|duplicates|transfer|access)?$/;

/** Whether `path` is one of the UI's routes, which the server answers with index.html. */
export function isClientRoute(path: string): boolean {
  return CLIENT_ROUTE.test(path);
}
/** A built asset's name: what Vite writes, nothing that could climb out of the folder. */
const ASSET = /^\/assets\/[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** Files at the top of dist/web besides index.html (favicon and the like). */
const TOP_FILE = /^\/[A-Za-z0-9][A-Za-z0-9_-]*\.(?:svg|png|ico|txt)$/;

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Engram: web UI not built</title></head>
<body><main><h1>Engram’s web UI is not built</h1>
<p>This copy of Engram was built without its web UI, so there is nothing to show here.
Build it with <code>npm run build</code> (it writes the UI to <code>dist/web</code>), then restart
<code>engram serve</code>.</p>
<p>Everything else works: MCP at <code>/mcp</code>, the REST API under <code>/api</code>.</p></main></body></html>
`;

function fileOf(root: string, name: string): Stats | undefined {
  try {
    const stats = statSync(join(root, name));
    return stats.isFile() ? stats : undefined;
  } catch {
    return undefined;
  }
}

function typeOf(name: string): string {
  return TYPES[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream';
}

export type WebRoutes = (req: IncomingMessage, res: ServerResponse, path: string) => boolean;

/** Serves the UI for GET and HEAD of its paths (true); false for any other path or method. */
export function createWebRoutes(root: string = DEFAULT_WEB_ROOT): WebRoutes {
  return (req, res, path) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const page = isClientRoute(path);
    if (!page && !ASSET.test(path) && !TOP_FILE.test(path)) return false;
    const name = page ? 'index.html' : path.slice(1);
    const stats = fileOf(root, name);
    if (stats === undefined) {
      const body = page ? NOT_BUILT : 'Not found.\n';
      res.writeHead(404, {
        ...SECURITY_HEADERS,
        'Content-Type': page ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
        'Cache-Control': 'no-store',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
      return true;
    }
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': typeOf(name),
      'Content-Length': stats.size,
      'Cache-Control': name.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
    if (req.method === 'HEAD' || stats.size === 0) {
      res.end();
      return true;
    }
    // Read to the size sent as Content-Length and no further: the stream then ends, and the
    // answer with it, with its last bytes, not after one more read that finds the file's end.
    // A client may hang up the moment it has every byte, and an answer not yet ended then
    // was logged as one the client gave up on (499).
    const file = createReadStream(join(root, name), { end: stats.size - 1 });
    file.once('error', () => res.destroy());
    file.pipe(res);
    return true;
  };
}
