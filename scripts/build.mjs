/**
 * `npm run build`: the library and CLI (tsc), the CLI bundle (bundle-cli.mjs) and the web
 * UI (Vite), built into a fresh folder beside dist/ (at the same depth, so every path a
 * module takes relative to import.meta.url resolves the same), then put in place of
 * dist/ by swap-dist.mjs. So a build — `npm test` makes one — never leaves a running
 * `engram serve` (npm start) without the files it serves or may still load, nor leaves a
 * module of an earlier build behind; and a build that fails leaves dist/ as it was. One
 * build at a time in a checkout (build-lock.mjs): a second one stops, saying so.
 */

import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BuildRunning, takeBuildLock } from './build-lock.mjs';
import { swapIn } from './swap-dist.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
// npm pack and npm publish build by the prepack script, then run prepare too: `prepare`
// passes --unless-packing so that a pack builds once. `npm ci` in a checkout builds by prepare.
const packing = ['pack', 'publish'].includes(process.env.npm_command ?? '');
if (packing && process.argv.includes('--unless-packing')) process.exit(0);
// Always the same folder: the bundle's chunk names hash what it was built from, paths included,
// so that a build of the same sources names its chunks as the last one did.
const building = join(root, 'dist.building');
const env = { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}` };

/** Runs one step of the build in the repository's folder; a failed step ends the build, dist/ untouched. */
function step(command, ...args) {
  const result = spawnSync(command, args, { cwd: root, env, stdio: 'inherit' });
  if (result.status === 0) return;
  rmSync(building, { recursive: true, force: true });
  console.error(`npm run build: ${command} ${args.join(' ')} failed; dist/ is left as it was.`);
  process.exit(result.status ?? 1);
}

try {
  process.on('exit', takeBuildLock(root));
} catch (error) {
  if (!(error instanceof BuildRunning)) throw error;
  console.error(error.message);
  process.exit(1);
}
rmSync(building, { recursive: true, force: true });
// TypeScript 7 by its package's path: `tsc` on the PATH is whichever of the two packages
// npm linked it for (`typescript` is 6, for svelte-check alone: docs/web-ui.md).
step(
  process.execPath,
  join(root, 'node_modules', '@typescript', 'native', 'bin', 'tsc'),
  '-p',
  'tsconfig.build.json',
  '--outDir',
  building,
);
step(process.execPath, 'scripts/bundle-cli.mjs', building);
step('vite', 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn', '--outDir', join(building, 'web'));
// npm pack and npm publish run this build (prepack): what they pack is this build alone.
await swapIn(building, join(root, 'dist'), { keepEarlier: !packing });
