/**
 * `npm run build` beside a running `engram serve` (npm start): the build is made in a
 * folder of its own and moved into dist/ by scripts/swap-dist.mjs, so that at every step
 * of the move dist/ holds a whole build, the old or the new one, file by file: the web UI
 * served from dist/web answers its page and every asset that page loads, the CLI's main.js
 * finds its chunks, and a file both builds have is never missing. Checked on small builds,
 * between every step of the move, through the web UI's own routes (http/web.ts). The old
 * build's chunks stay one build longer, for a server that has yet to import them.
 */

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { filesUnder, SUPERSEDED, swapIn } from '../../scripts/swap-dist.mjs';
import { createWebRoutes } from '../../src/http/web.js';

/** Writes a small build of `version` into `folder`: the web UI, the CLI bundle, a few library modules. */
function writeBuild(folder: string, version: string, modules: readonly string[]): Record<string, string> {
  const files: Record<string, string> = {
    'web/index.html': `<!doctype html><script src="/assets/index-${version}.js"></script><link href="/assets/index-${version}.css">`,
    [`web/assets/index-${version}.js`]: `console.log('${version}')`,
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

it('moves a build into a served dist/ with a whole build there at every step, and of the old one only its chunks left', async () => {
  const root = mkdtempSync(join(tmpdir(), 'engram-build-swap-'));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  const dist = join(root, 'dist');
  const building = join(root, 'dist.building-1');
  const old = writeBuild(dist, 'OLD', ['core/kept', 'core/removed', 'store/gone/deep']);
  const fresh = writeBuild(building, 'NEW', ['core/kept', 'core/added']);

  const web = createWebRoutes(join(dist, 'web'));
  const server = createServer((req, res) => {
    if (!web(req, res, new URL(req.url ?? '/', 'http://x').pathname)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;

  const pagesSeen = new Set<string>();
  let steps = 0;
  await swapIn(building, dist, {
    afterStep: async () => {
      steps++;
      // The page, and every file it loads, as the browser would fetch them now.
      const page = await get(port, '/');
      expect(page.status).toBe(200);
      pagesSeen.add(page.body);
      for (const [, asset] of page.body.matchAll(/(?:src|href)="([^"]+)"/g)) {
        expect((await get(port, asset as string)).status, `${asset} at step ${steps}`).toBe(200);
      }
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
  // The old main.js, still running in a server, may import its chunk later.
  expect(filesUnder(dist).sort()).toEqual([...Object.keys(fresh), 'cli/run-OLD.chunk.js', SUPERSEDED].sort());
  expect(readFileSync(join(dist, SUPERSEDED), 'utf8')).toBe('cli/run-OLD.chunk.js');
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

it('removes the chunks an earlier build kept at the next build, and keeps none for a build to pack', async () => {
  const root = mkdtempSync(join(tmpdir(), 'engram-build-swap-'));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  const dist = join(root, 'dist');
  writeBuild(dist, 'ONE', ['core/kept']);
  writeBuild(join(root, 'next'), 'TWO', ['core/kept']);
  await swapIn(join(root, 'next'), dist);
  const third = writeBuild(join(root, 'next'), 'THREE', ['core/kept']);
  await swapIn(join(root, 'next'), dist);
  expect(filesUnder(dist).sort()).toEqual([...Object.keys(third), 'cli/run-TWO.chunk.js', SUPERSEDED].sort());
  const packed = writeBuild(join(root, 'next'), 'FOUR', ['core/kept']);
  await swapIn(join(root, 'next'), dist, { keepChunks: false });
  expect(filesUnder(dist).sort()).toEqual(Object.keys(packed).sort());
});
