/**
 * The drain of a closing server (drain.ts) on a bare node:http server whose answers the
 * test sends itself: an answer still being written is never cut off, whether another one
 * ends or closing begins, and a request already sent when the event loop was held is read, not reset.
 */

import { createServer, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { expect, it, onTestFinished } from 'vitest';
import { createDrain } from '../../src/http/drain.js';

/** A server whose requests wait, by path, for the test to answer them; stop() closes it as server.ts does. */
async function startHeld() {
  const server = createServer({ keepAliveTimeout: 120_000, headersTimeout: 120_000, requestTimeout: 120_000 });
  const drain = createDrain(server);
  const waiting = new Map<string, ServerResponse>();
  let arrived = () => {};
  server.on('request', (req, res) => {
    drain.follow(res);
    waiting.set(req.url ?? '', res);
    arrived();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  onTestFinished(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    server,
    port,
    /** The answer to the request for `path`, once it has arrived. */
    async request(path: string): Promise<ServerResponse> {
      while (!waiting.has(path)) {
        await new Promise<void>((resolve) => {
          arrived = resolve;
        });
      }
      return waiting.get(path)!;
    },
    stop(): Promise<void> {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      drain.begin();
      return stopped;
    },
  };
}

/** A raw connection that reads nothing until told to, and everything it received once it closes. */
async function rawClient(port: number): Promise<{ socket: Socket; received: () => Promise<Buffer> }> {
  const socket = connect(port, '127.0.0.1');
  onTestFinished(() => {
    socket.destroy();
  });
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  return {
    socket,
    received: () =>
      new Promise((resolve) => {
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.once('close', () => resolve(Buffer.concat(chunks)));
      }),
  };
}

function bodyOf(response: Buffer): Buffer {
  return response.subarray(response.indexOf('\r\n\r\n') + 4);
}

it('does not cut off an answer still being written when another answer ends', async () => {
  const held = await startHeld();
  const big = await rawClient(held.port);
  big.socket.write('GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  const bigAnswer = await held.request('/big');
  const small = await rawClient(held.port);
  small.socket.write('GET /small HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  const smallAnswer = await held.request('/small');
  const stopped = held.stop();
  // More than the kernel's buffers hold: most of it waits in Node for the client, which is not reading yet.
  const size = 48 * 1024 * 1024;
  bigAnswer.end(Buffer.alloc(size, 'a'));
  smallAnswer.end('ok');
  expect(bodyOf(await small.received()).toString()).toBe('ok');
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(bodyOf(await big.received()).length).toBe(size);
  await stopped;
});

it('does not cut off an answer still being written when closing begins', async () => {
  const held = await startHeld();
  const big = await rawClient(held.port);
  big.socket.write('GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  const bigAnswer = await held.request('/big');
  // Ended, but more than the kernel's buffers hold: most of it waits in Node for the client, which is not reading yet.
  const size = 48 * 1024 * 1024;
  bigAnswer.end(Buffer.alloc(size, 'a'));
  // Node's own server.close() closes the connections it takes for idle, and an ended answer's is one.
  const stopped = held.stop();
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(bodyOf(await big.received()).length).toBe(size);
  await stopped;
});

it('reads a request that reached the server while its event loop was held past the grace', async () => {
  const held = await startHeld();
  const connected = new Promise((resolve) => held.server.once('connection', resolve));
  const late = await rawClient(held.port);
  await connected;
  const answered = late.received();
  const { stopped } = await new Promise<{ stopped: Promise<void> }>((resolve) => {
    // In a check phase, as a request's work would be: the next turn of the loop runs timers before reading sockets.
    setImmediate(() => {
      const stopped = held.stop();
      late.socket.write('GET /late HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      const until = Date.now() + 400;
      while (Date.now() < until) {
        // The event loop is held (a long synchronous task).
      }
      resolve({ stopped });
    });
  });
  const outcome = await Promise.race([
    held.request('/late').then((res) => {
      res.end('read');
      return 'read';
    }),
    answered.then(() => 'cut off'),
  ]);
  expect(outcome).toBe('read');
  expect(bodyOf(await answered).toString()).toBe('read');
  await stopped;
});
