/**
 * The ceiling for the HTTP benchmark: a bare node:http server that answers every
 * request with one fixed JSON body, run as its own process like `engram serve`.
 * Prints `listening <port>` once ready.
 */

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const body = process.argv[2] ?? '{}';
const length = Buffer.byteLength(body);

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': length });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
