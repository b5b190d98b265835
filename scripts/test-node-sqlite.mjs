/**
 * `npm run test:node-sqlite`: the SQLite store's tests on the node:sqlite driver under each
 * Node of NODE_VERSIONS (node-binaries.mjs installs them from the npm registry): the whole
 * store contract (test/storage/sqlite-node-driver.test.ts, which also has one file written
 * and read by both drivers), the crash test, waiting for another process's lock, the
 * file's failures, the search worker, and the `engram` command and server end to end, with
 * ENGRAM_SQLITE_DRIVER=node so that a driver that does not load fails rather than skips.
 * The better-sqlite3 in node_modules is built for the Node running this script and does
 * not load under the others: the fallback to node:sqlite is exercised as an install would
 * meet it, and the tests that leave the choice to the store run on node:sqlite too
 * (sqlite-node-driver.test.ts checks that it is so). The Node running this script writes
 * and reads the shared file with better-sqlite3.
 */

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { NODE_VERSIONS, nodeBinary } from './node-binaries.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const SUITES = [
  ['--project', 'integration', '--project', 'torture'],
  [
    'test/storage/sqlite-node-driver.test.ts',
    'test/torture/crash.test.ts',
    'test/storage/sqlite-busy.test.ts',
    'test/storage/sqlite-errors.test.ts',
    'test/storage/sqlite-replaced.test.ts',
    'test/storage/search-worker.test.ts',
    'test/storage/search-worker-start.test.ts',
    'test/storage/sqlite-snapshot.test.ts',
    'test/transfer/backup/schedule.test.ts',
    'test/cli/cli.test.ts',
    'test/http/serve.e2e.test.ts',
  ],
].flat();

let failed = false;
for (const version of NODE_VERSIONS) {
  const node = nodeBinary(version);
  console.log(`\n== node:sqlite driver under Node ${version}`);
  const { status, error } = spawnSync(node, [vitest, 'run', ...SUITES], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ENGRAM_SQLITE_DRIVER: 'node', ENGRAM_TEST_BETTER_SQLITE3_NODE: process.execPath },
  });
  if (status !== 0) {
    console.error(`node:sqlite driver under Node ${version}: ${error?.message ?? `vitest exited with ${status}`}`);
    failed = true;
  }
}
process.exitCode = failed ? 1 : 0;
