/**
 * Node 22 and Node 24 binaries for the tests of the node:sqlite driver, from the `node`
 * npm packages (no download from nodejs.org, so it works where only the npm registry is
 * reachable, as `npm run conformance` gets Node 22). Each version is installed once into a
 * folder of its own under node_modules/.cache/engram-node/, outside the project's
 * dependencies. The package's preinstall script fetches the binary for this platform;
 * npm 11 runs it only when allowed, so the folder's package.json allows it (allowScripts).
 *
 * As a module: nodeBinary(version) gives the path of that Node, installing it if needed.
 * As a script: prints the path of each version in NODE_VERSIONS, one a line.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Node versions the node:sqlite driver is tested under: the oldest it supports (22.16, the first whose node:sqlite has FTS5) and the newest. */
export const NODE_VERSIONS = ['22.16.0', '24.21.0'];

const CACHE = fileURLToPath(new URL('../node_modules/.cache/engram-node/', import.meta.url));

/** Where `version`'s binary is, inside its folder in the cache. */
function binaryIn(folder) {
  return join(folder, 'node_modules', 'node', 'bin', process.platform === 'win32' ? 'node.exe' : 'node');
}

/**
 * The path of the Node binary of `version`, installed into the cache if it is not there yet.
 * Test files running at once may each ask for it: each installs into a folder of its own,
 * then moves it into place in one rename, and the first to get there wins, so no one ever
 * finds a half-installed Node.
 */
export function nodeBinary(version) {
  const folder = join(CACHE, version);
  if (existsSync(binaryIn(folder))) return binaryIn(folder);
  mkdirSync(CACHE, { recursive: true });
  const installing = mkdtempSync(join(CACHE, `${version}.installing-`));
  try {
    writeFileSync(
      join(installing, 'package.json'),
      `${JSON.stringify({ private: true, allowScripts: { node: true } })}\n`,
    );
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    execFileSync(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error', `node@${version}`], {
      cwd: installing,
      stdio: ['ignore', 'inherit', 'inherit'],
      // Windows runs npm.cmd only through a shell.
      shell: process.platform === 'win32',
    });
    if (!existsSync(binaryIn(installing))) {
      throw new Error(`npm installed node@${version} in ${installing}, but with no binary at ${binaryIn(installing)}`);
    }
    try {
      renameSync(installing, folder);
    } catch (error) {
      // Another installer got there first: keep its copy.
      if (!existsSync(binaryIn(folder))) throw error;
    }
  } finally {
    rmSync(installing, { recursive: true, force: true });
  }
  return binaryIn(folder);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const version of NODE_VERSIONS) console.log(nodeBinary(version));
}
