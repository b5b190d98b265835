/**
 * A server that stops promptly when it closes. Node tells a client whose request is in
 * flight as the server begins to close that it may keep the connection (keep-alive), then
 * holds that connection open for its keep-alive timeout, seconds, before the server can
 * stop; a client that reused it in between would have its request cut off. And a
 * connection that never sends a request (a browser opens some ahead of time) kept the
 * server from stopping until its headers timeout, 10 s. Here answers not yet begun when
 * closing starts say `Connection: close`, a connection is closed as soon as its last
 * answer is sent (but not while an answer is ended and still being written: Node's
 * closeIdleConnections takes its connection for idle and cuts it off, and Node's own
 * server.close() calls it, so the server's is held back until no answer is being
 * written, then run again as each one finishes), and one that has sent nothing a moment
 * after closing began is closed then. WebSocket connections are left to the WebSocket
 * endpoint, which closes them with a close frame; a TLS handshake still in progress is
 * left to its own timeout.
 */

import type { Server, ServerResponse } from 'node:http';
import { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';

/** How long after closing begins a connection that has sent nothing is given, in ms: its request may be on its way. */
const SILENT_GRACE_MS = 200;

export interface Drain {
  /** Follows one answer from its request to its end (cheap: a set entry and a listener). */
  follow(res: ServerResponse): void;
  /** Closing begins: answers still to be sent close their connection when done, idle connections close. */
  begin(): void;
}

/** Headers without a Connection header of their writer's. */
function withoutConnection(headers: unknown): unknown {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return headers;
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'connection'));
}

/**
 * Makes an answer not yet begun say `Connection: close`, even when its writer hands
 * writeHead a Connection header of its own: the MCP SDK hands keep-alive with every SSE
 * answer, and Node would keep the connection for it.
 */
function closeAfter(res: ServerResponse): void {
  res.shouldKeepAlive = false;
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    return writeHead.apply(this, args.map(withoutConnection) as Parameters<ServerResponse['writeHead']>);
  } as ServerResponse['writeHead'];
}

export function createDrain(server: Server | HttpsServer): Drain {
  const answering = new Set<ServerResponse>();
  /** The connections HTTP is read from (TLS sockets on an https server), but upgraded ones. */
  const connections = new Set<Socket>();
  let draining = false;
  server.on(server instanceof HttpsServer ? 'secureConnection' : 'connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  server.on('upgrade', (_req, socket: Socket) => connections.delete(socket));
  const someBeingWritten = () => {
    for (const res of answering) if (res.writableEnded && !res.writableFinished) return true;
    return false;
  };
  // The server's own, as server.close() calls it: held back while an answer is being written.
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {
    if (!someBeingWritten()) closeIdle();
  };
  const closeSilent = () => {
    const busy = new Set<unknown>();
    for (const res of answering) busy.add(res.socket);
    for (const socket of connections) if (socket.bytesRead === 0 && !busy.has(socket)) socket.destroy();
  };
  return {
    follow(res) {
      if (draining) closeAfter(res);
      answering.add(res);
      // `on`, not `once`, as app.ts's request log: Node emits it once, and once's wrapper would keep the request's objects longer.
      res.on('close', () => {
        answering.delete(res);
        // The connection is idle once its answer is sent: closed now, not at its keep-alive
        // timeout (held back while another answer is being written, whose close comes back here).
        if (draining) server.closeIdleConnections();
      });
    },
    begin() {
      draining = true;
      for (const res of answering) if (!res.headersSent) closeAfter(res);
      server.closeIdleConnections();
      // Then past one poll of the sockets: after a long task on the event loop, timers run
      // before sockets are read, and a request that came meanwhile would be cut off unread.
      setTimeout(() => setImmediate(closeSilent), SILENT_GRACE_MS).unref();
    },
  };
}
