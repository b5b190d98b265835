/**
 * `npm run build` beside a running `engram serve` (npm start): the build is made in a
 * folder of its own and moved into dist/ by scripts/swap-dist.mjs, so that at every step
 * of the move dist/ holds a whole build, the old or the new one, file by file: the web UI
 * served from dist/web answers its page and every asset that page loads, the CLI's main.js
 * finds its chunks, and a file both builds have is never missing. Checked on small builds,
 * between every step of the move, through the web UI's own routes (http/web.ts), the
 * pages' lazy chunks included. Earlier builds' hashed files (the CLI's chunks, the web UI's
 * assets) stay KEEP_BUILDS builds, for a server that has yet to import one or a tab that
 * has yet to load one.
 */

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { filesUnder, KEEP_BUILDS, SUPERSEDED, swapIn } from '../../scripts/swap-dist.mjs';
import { createWebRoutes } from '../../src/http/web.js';

/**
 * Writes a small build of `version` into `folder`: the web UI (a page whose script loads
 * a chunk only when asked, as Transfer.svelte does ImportFrom), the CLI bundle, a few
 * library modules.
 */
function writeBuild(folder: string, version: string, modules: readonly string[]): Record<string, string> {
  const files: Record<string, string> = {
    'web/index.html': `<!doctype html><script src="/assets/index-${version}.js"></script><link href="/assets/index-${version}.css">`,
    [`web/assets/index-${version}.js`]: `const later = () => import('./ImportFrom-${version}.js');`,
    [`web/assets/ImportFrom-${version}.js`]: `export const version = '${version}';`,
    [`web/assets/index-${version}.css`]: 'body{}',
    'web/favicon.svg': '<svg/>',
    'cli/main.js': `import './run-${version}.chunk.js';`,
    [`cli/run-${version}.chunk.js`]: `export const version = '${version}';`,
  };
  for (const module of modules) files[`${module}.js`] = `export const from = '${version}';`;
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(folder, path)), { recursive: true });
    writeFileSync(join(folder, path), text);
  }
  return files;
}

/** GET `path` from the server on `port`: its status and body. */
async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, body: await response.text() };
}

/** Serves `dist`/web as `engram serve` does; its port. */
async function serveWeb(dist: string): Promise<number> {
  const web = createWebRoutes(join(dist, 'web'));
  const server = createServer((req, res) => {
    if (!web(req, res, new URL(req.url ?? '/', 'http://x').pathname)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

/** Every file the served `page` loads, at once or on demand (its scripts' dynamic imports), each checked to answer 200. */
async function expectPageWhole(port: number, page: string, when: string): Promise<void> {
  for (const [, asset] of page.matchAll(/(?:src|href)="([^"]+)"/g)) {
    const answer = await get(port, asset as string);
    expect(answer.status, `${asset} ${when}`).toBe(200);
    for (const [, lazy] of answer.body.matchAll(/import\('\.\/([^']+)'\)/g)) {
      expect((await get(port, `/assets/${lazy}`)).status, `${lazy} ${when}`).toBe(200);
    }
  }
}

it('moves a build into a served dist/ with a whole build there at every step, and of the old one only its hashed files left', async () => {
  const root = mkdtempSync(join(tmpdir(), 'engram-build-swap-'));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  const dist = join(root, 'dist');
  const building = join(root, 'dist.building-1');
  const old = writeBuild(dist, 'OLD', ['core/kept', 'core/removed', 'store/gone/deep']);
  const fresh = writeBuild(building, 'NEW', ['core/kept', 'core/added']);

  const port = await serveWeb(dist);

  const pagesSeen = new Set<string>();
  let steps = 0;
  await swapIn(building, dist, {
    afterStep: async () => {
      steps++;
      // The page, and every file it loads, as the browser would fetch them now.
      const page = await get(port, '/');
      expect(page.status).toBe(200);
      pagesSeen.add(page.body);
      await expectPageWhole(port, page.body, `at step ${steps}`);
      // A tab opened on the old page still loads what it loads on demand.
      await expectPageWhole(port, old['web/index.html'] as string, `for the old page at step ${steps}`);
      // The CLI's main.js finds the chunk it imports.
      const main = readFileSync(join(dist, 'cli/main.js'), 'utf8');
      const chunk = /'\.\/([^']+)'/.exec(main)?.[1] as string;
      expect(existsSync(join(dist, 'cli', chunk)), `${chunk} at step ${steps}`).toBe(true);
      // A file both builds have is there, whichever build's it is.
      for (const path of Object.keys(old)) if (path in fresh) expect(existsSync(join(dist, path)), path).toBe(true);
    },
  });

  expect(steps).toBeGreaterThanOrEqual(Object.keys(fresh).length);
  expect([...pagesSeen]).toEqual([old['web/index.html'], fresh['web/index.html']]);
  // The old main.js, still running in a server, may import its chunk later; a tab on the old page, its assets.
  const oldHashed = [
    'cli/run-OLD.chunk.js',
    'web/assets/ImportFrom-OLD.js',
    'web/assets/index-OLD.css',
    'web/assets/index-OLD.js',
  ];
  expect(filesUnder(dist).sort()).toEqual([...Object.keys(fresh), ...oldHashed, SUPERSEDED].sort());
  expect(JSON.parse(readFileSync(join(dist, SUPERSEDED), 'utf8'))).toEqual(
    Object.fromEntries(oldHashed.map((path) => [path, 1])),
  );
  for (const [path, text] of Object.entries(fresh)) expect(readFileSync(join(dist, path), 'utf8')).toBe(text);
  expect(existsSync(join(dist, 'store'))).toBe(false);
  expect(existsSync(building)).toBe(false);
});

it('moves the build in whole when there is no dist/ yet', async () => {
  const root = mkdtempSync(join(tmpdir(), 'engram-build-swap-'));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  const fresh = writeBuild(join(root, 'dist.building-1'), 'NEW', ['core/kept']);
  await swapIn(join(root, 'dist.building-1'), join(root, 'dist'));
  expect(filesUnder(join(root, 'dist')).sort()).toEqual(Object.keys(fresh).sort());
  expect(existsSync(join(root, 'dist.building-1'))).toBe(false);
});

it("keeps an earlier build's hashed files for KEEP_BUILDS builds, then removes them, and keeps none for a build to pack", async () => {
  const root = mkdtempSync(join(tmpdir(), 'engram-build-swap-'));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  const dist = join(root, 'dist');
  const first = writeBuild(dist, 'B0', ['core/kept']);
  const port = await serveWeb(dist);
  const hashedOf = (version: string) => [
    `cli/run-${version}.chunk.js`,
    `web/assets/ImportFrom-${version}.js`,
    `web/assets/index-${version}.css`,
    `web/assets/index-${version}.js`,
  ];
  let latest = first;
  for (let build = 1; build <= KEEP_BUILDS + 1; build++) {
    latest = writeBuild(join(root, 'next'), `B${build}`, ['core/kept']);
    await swapIn(join(root, 'next'), dist);
    // A server started on the first build, a tab opened on it, still find what they load later, until then.
    const firstStays = build <= KEEP_BUILDS;
    for (const path of hashedOf('B0'))
      expect(existsSync(join(dist, path)), `${path} after ${build} builds`).toBe(firstStays);
    if (firstStays) await expectPageWhole(port, first['web/index.html'] as string, `after ${build} builds`);
    // Never more than KEEP_BUILDS earlier builds.
    const earlier = Array.from({ length: build }, (_, version) => version).filter(
      (version) => build - version <= KEEP_BUILDS,
    );
    expect(filesUnder(dist).sort()).toEqual(
      [...Object.keys(latest), ...earlier.flatMap((version) => hashedOf(`B${version}`)), SUPERSEDED].sort(),
    );
  }
  const packed = writeBuild(join(root, 'next'), 'PACK', ['core/kept']);
  await swapIn(join(root, 'next'), dist, { keepEarlier: false });
  expect(filesUnder(dist).sort()).toEqual(Object.keys(packed).sort());
});
