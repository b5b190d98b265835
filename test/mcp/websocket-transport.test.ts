/**
 * The WebSocket wire on a socket the test drives by hand, for what a real socket cannot
 * show on demand: answers the socket has not sent yet (still counted in flight, so a
 * client that does not read cannot make the server hold ever more), answers piling up
 * unread (the next message closes the socket, 1008), and messages kept in order while
 * each waits for its admission.
 */

import { EventEmitter } from 'node:events';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { WebSocketTransport, type WebSocketTransportOptions } from '../../src/mcp/websocket-transport.js';

/** Just what the transport uses of a ws socket; `send` completes only when the test says so. */
class HandSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  readonly sent: string[] = [];
  readonly pending: (() => void)[] = [];
  closedWith: [number, string] | undefined;

  send(text: string, done: (error?: Error) => void): void {
    this.sent.push(text);
    this.pending.push(() => done());
  }

  close(code: number, reason: string): void {
    this.closedWith = [code, reason];
    this.readyState = 2;
  }

  /** A message from the client, and time for the transport to take it. */
  async receive(message: unknown): Promise<void> {
    this.emit('message', Buffer.from(JSON.stringify(message)));
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function started(options: Partial<WebSocketTransportOptions> = {}) {
  const socket = new HandSocket();
  const reports: string[] = [];
  const transport = new WebSocketTransport(socket as unknown as WebSocket, {
    maxInFlight: 1,
    maxUnreadBytes: 1000,
    admit: async () => true,
    report: (line) => reports.push(line),
    ...options,
  });
  const delivered: JSONRPCMessage[] = [];
  transport.onmessage = (message) => delivered.push(message);
  await transport.start();
  return { socket, transport, delivered, reports };
}

const request = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });

describe('WebSocketTransport', () => {
  it('counts a request in flight until the socket has sent its answer', async () => {
    const { socket, transport, delivered } = await started();
    await socket.receive(request(1));
    const answered = transport.send({ jsonrpc: '2.0', id: 1, result: {} });
    await socket.receive(request(2));
    expect(delivered).toEqual([request(1)]);
    expect(JSON.parse(socket.sent[1]!)).toMatchObject({ id: 2, error: { code: -32000 } });
    socket.pending[0]!();
    await answered;
    await socket.receive(request(3));
    expect(delivered).toEqual([request(1), request(3)]);
  });

  it('closes the socket (1008) when a message arrives while answers wait unread past the limit', async () => {
    const { socket, delivered, reports } = await started();
    socket.bufferedAmount = 1001;
    await socket.receive(request(1));
    expect(delivered).toEqual([]);
    expect(socket.closedWith).toEqual([1008, 'Too many answers unread: read the answers before sending more.']);
    expect(reports).toEqual(['ws: closed a socket whose client sends on without reading the answers']);
  });

  it('keeps the order of messages while each waits for its admission', async () => {
    let admitFirst: (allowed: boolean) => void = () => {};
    let calls = 0;
    const { socket, delivered } = await started({
      maxInFlight: 10,
      admit: () => (calls++ === 0 ? new Promise((resolve) => (admitFirst = resolve)) : Promise.resolve(true)),
    });
    await socket.receive(request(1));
    await socket.receive(request(2));
    await socket.receive(request(3));
    expect(delivered).toEqual([]);
    admitFirst(true);
    await expect.poll(() => delivered.length).toBe(3);
    expect(delivered).toEqual([request(1), request(2), request(3)]);
  });

  it('serves nothing once admission is refused (the socket is being closed)', async () => {
    const { socket, delivered } = await started({ admit: async () => false });
    await socket.receive(request(1));
    expect(delivered).toEqual([]);
    expect(socket.sent).toEqual([]);
  });
});
