/**
 * A server that stops promptly when it closes. Node tells a client whose request is in
 * flight as the server begins to close that it may keep the connection (keep-alive), then
 * holds that connection open for its keep-alive timeout, seconds, before the server can
 * stop; a client that reused it in between would have its request cut off. Here answers
 * not yet begun when closing starts say `Connection: close`, and a connection is closed
 * as soon as its last answer is sent.
 */

import type { Server, ServerResponse } from 'node:http';

export interface Drain {
  /** Follows one answer from its request to its end (cheap: a set entry and a listener). */
  follow(res: ServerResponse): void;
  /** Closing begins: answers still to be sent close their connection when done. */
  begin(): void;
}

export function createDrain(server: Server): Drain {
  const answering = new Set<ServerResponse>();
  let draining = false;
  const ended = (res: ServerResponse) => {
    answering.delete(res);
    // The connection is idle once its answer is sent: closed now, not at its keep-alive timeout.
    if (draining) server.closeIdleConnections();
  };
  return {
    follow(res) {
      if (draining) res.shouldKeepAlive = false;
      answering.add(res);
      res.once('close', () => ended(res));
    },
    begin() {
      draining = true;
      for (const res of answering) if (!res.headersSent) res.shouldKeepAlive = false;
      server.closeIdleConnections();
    },
  };
}
