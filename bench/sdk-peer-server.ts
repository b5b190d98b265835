/**
 * The SDK peer (sdk-peer.ts) as a process of its own, like `engram serve` and the MCP
 * floor: Engram's services over an Engram database already seeded (entries with `engram
 * import`, users and tokens with many-users.ts), opened through the composition root as
 * `engram serve` opens it (its search index caught up by the search worker), with the
 * benchmark's lifted caps, and served on loopback.
 *
 * argv: `sqlite <database file>` or `postgres <database URL>`. Prints `listening <port>`
 * once ready.
 */

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openApp } from '../src/app.js';
import { BENCH_CAPS } from './engram.js';
import { createSdkPeer } from './sdk-peer.js';

const [backend, location] = [process.argv[2], process.argv[3]];
if ((backend !== 'sqlite' && backend !== 'postgres') || location === undefined) {
  throw new Error('usage: sdk-peer-server sqlite|postgres <database file or URL>');
}

const app = await openApp({
  backend: backend === 'sqlite' ? { kind: 'sqlite', path: location } : { kind: 'postgres', url: location },
  open: { accelerators: { searchWorker: true } },
  policy: BENCH_CAPS,
  log: (line) => process.stderr.write(`${line}\n`),
});
const server = createServer(createSdkPeer(app));
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => server.close(() => void app.close().finally(() => process.exit(0))));
