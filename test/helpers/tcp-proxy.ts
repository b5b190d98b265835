/**
 * A TCP proxy in front of a server (PostgreSQL, here), that a test can cut: once stopped,
 * every open connection is dropped and new ones are refused — a database that went away
 * while Engram was using it. Or cut for a while: connections are dropped and new ones
 * refused until it is mended, on the same port — a database that went away and came back.
 */

import { createConnection, createServer, type Socket } from 'node:net';
import { onTestFinished } from 'vitest';

export interface TcpProxy {
  /** The port on 127.0.0.1 that forwards to the target. */
  readonly port: number;
  /** Drops every connection and stops listening. */
  stop(): Promise<void>;
  /** Drops every connection and refuses new ones (closing each as it comes), still listening. */
  cut(): void;
  /** Forwards new connections again after cut(). */
  mend(): void;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let isCut = false;
  const server = createServer((client) => {
    if (isCut) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: targetHost, port: targetPort });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
    return stopping;
  };
  onTestFinished(stop);
  const cut = () => {
    isCut = true;
    for (const socket of sockets) socket.destroy();
  };
  const mend = () => {
    isCut = false;
  };
  return { port, stop, cut, mend };
}
