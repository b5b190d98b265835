/**
 * A TCP proxy in front of PostgreSQL that cuts a connection at a COMMIT, for what a lost
 * connection while committing leaves behind on a real server: cut `before` the COMMIT
 * reaches the server (which then rolls the transaction back), or `after` the server has
 * committed, before its answer reaches the client. It reads the client's side of the wire
 * protocol (an untyped startup message, then typed messages: a type byte, a 4-byte length)
 * to find the next simple query `COMMIT` once armed, and to list the simple queries sent;
 * everything else passes untouched.
 */

import { createConnection, createServer, type Socket } from 'node:net';
import { onTestFinished } from 'vitest';

export interface CommitCut {
  /** The proxy's URL: `url` with its host and port in place of the server's. */
  readonly url: string;
  /**
   * Cuts the connection of the next COMMIT sent through the proxy, `before` or `after` the
   * server has it; `then: 'refuse'` cuts every other connection too and refuses new ones
   * from then on: a server that stays unreachable.
   */
  arm(when: 'before' | 'after', then?: 'serve' | 'refuse'): void;
  /** How many connections were cut at a COMMIT so far. */
  readonly cuts: number;
  /** The text of every simple query (a statement without values: BEGIN, COMMIT…) sent through the proxy, in order. */
  readonly simpleQueries: readonly string[];
}

/** SSLRequest and GSSENCRequest: untyped, answered by one byte, and followed by the startup message. */
const UPGRADE_REQUESTS = new Set([80877103, 80877104]);

export async function startCommitCut(url: string): Promise<CommitCut> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  let armed: { readonly when: 'before' | 'after'; readonly then: 'serve' | 'refuse' } | undefined;
  let cuts = 0;
  const simpleQueries: string[] = [];
  let refusing = false;
  const cutAll = () => {
    for (const socket of sockets) socket.destroy();
  };

  const server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: target.hostname, port: Number(target.port || 5432) });
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      // Messages are written one by one: without this, Nagle's algorithm holds the small ones back.
      socket.setNoDelay(true);
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', cut);
    }
    let untyped = true;
    let pending = Buffer.alloc(0);
    let cutOnAnswer = false;
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (true) {
        const header = untyped ? 0 : 1;
        if (pending.length < header + 4) return;
        const size = header + pending.readInt32BE(header);
        if (pending.length < size) return;
        const message = pending.subarray(0, size);
        pending = pending.subarray(size);
        const query = !untyped && message[0] === 0x51 ? message.toString('utf8', 5, size - 1).trim() : undefined;
        if (query !== undefined) simpleQueries.push(query);
        if (untyped) untyped = UPGRADE_REQUESTS.has(message.readInt32BE(4));
        else if (armed && query === 'COMMIT') {
          const { when, then } = armed;
          armed = undefined;
          cuts++;
          if (then === 'refuse') refusing = true;
          if (when === 'before') {
            if (refusing) cutAll();
            cut();
            return;
          }
          cutOnAnswer = true;
        }
        upstream.write(message);
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!cutOnAnswer) client.write(chunk);
      else if (refusing) cutAll();
      else cut();
    });
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        cutAll();
      }),
  );
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as { port: number }).port);
  return {
    url: proxied.toString(),
    arm: (when, then = 'serve') => {
      armed = { when, then };
    },
    get cuts() {
      return cuts;
    },
    simpleQueries,
  };
}
