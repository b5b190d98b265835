/**
 * The web UI ships inside the package (issue 12): what `npm pack` would publish holds the
 * built dist/web — its index.html and every file that page loads, each from the server
 * itself — so an installed `engram serve` shows the UI offline, with nothing fetched from
 * a CDN. Read from the build `npm run build` made.
 */

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

it('publishes dist/web: index.html and every file it loads, all from the server itself', async () => {
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT,
  });
  const [pack] = JSON.parse(stdout) as { files: { path: string }[] }[];
  const files = new Set(pack?.files.map((file) => file.path));
  expect(files.has('dist/web/index.html')).toBe(true);

  const html = readFileSync(`${ROOT}dist/web/index.html`, 'utf8');
  const loaded = [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((match) => match[1] ?? '');
  expect(loaded.filter((path) => path.startsWith('/assets/')).length).toBeGreaterThanOrEqual(2);
  for (const path of loaded) {
    // A path of this server ("/x"), never another host ("//cdn…", "https://…").
    expect(path).toMatch(/^\/(?!\/)/);
    expect(files.has(`dist/web${path}`), path).toBe(true);
  }
});
