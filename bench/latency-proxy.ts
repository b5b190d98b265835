/**
 * A database a few milliseconds away, for the benchmarks that weigh round trips (the
 * PostgreSQL accelerators save them; on the same host a round trip costs next to
 * nothing): a TCP proxy, run as a child process of its own so that its timers never share
 * the measured process's event loop, that holds every chunk in each direction for
 * `delayMs` before passing it on, in order. Started by `startLatencyProxy`; it prints its
 * port on its first line and stops when its parent's stdin closes.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { createConnection, createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

/** Passes what `from` sends on to `to`, each chunk `delayMs` later, in order, with backpressure on `to`. */
function delayed(from: Socket, to: Socket, delayMs: number): void {
  from.on('data', (chunk) => {
    setTimeout(() => {
      if (!to.write(chunk)) {
        from.pause();
        to.once('drain', () => from.resume());
      }
    }, delayMs);
  });
  from.on('end', () => setTimeout(() => to.end(), delayMs));
  from.on('error', () => to.destroy());
}

function serve(targetHost: string, targetPort: number, delayMs: number): void {
  const server = createServer((client) => {
    const upstream = createConnection({ host: targetHost, port: targetPort });
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    delayed(client, upstream, delayMs);
    delayed(upstream, client, delayMs);
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
  });
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

export interface LatencyProxy {
  /** `url` with its host and port replaced by the proxy's. */
  readonly through: (url: string) => string;
  readonly stop: () => void;
}

/** A proxy to the host and port of `url`, adding `delayMs` each way (a round trip of twice that). */
export function startLatencyProxy(url: string, delayMs: number): Promise<LatencyProxy> {
  const target = new URL(url);
  const child: ChildProcess = spawn(
    process.execPath,
    [fileURLToPath(import.meta.url), target.hostname, target.port || '5432', String(delayMs)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the latency proxy stopped (exit ${code}) before it listened`)));
    let printed = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      if (!printed.includes('\n')) return;
      const port = Number.parseInt(printed, 10);
      resolve({
        through: (other) => {
          const via = new URL(other);
          via.hostname = '127.0.0.1';
          via.port = String(port);
          return via.toString();
        },
        stop: () => child.stdin?.end(),
      });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [host = '127.0.0.1', port = '5432', delay = '1'] = process.argv.slice(2);
  serve(host, Number(port), Number(delay));
}
