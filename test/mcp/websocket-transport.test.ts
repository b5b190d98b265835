/**
 * The WebSocket wire on a socket the test drives by hand, for what a real socket cannot
 * show on demand: answers the socket has not sent yet (still counted in flight, so a
 * client that does not read cannot make the server hold ever more), answers piling up
 * unread (the next answer closes the socket, 1008, unwritten), messages kept in order
 * while each waits for its admission, the socket not read while too many wait, and no
 * socket read while the server's budget of bytes waiting is full.
 */

import { EventEmitter } from 'node:events';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { WaitingBudget } from '../../src/mcp/waiting-budget.js';
import { WebSocketTransport, type WebSocketTransportOptions } from '../../src/mcp/websocket-transport.js';

/** Just what the transport uses of a ws socket; `send` completes only when the test says so. */
class HandSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  readonly sent: string[] = [];
  isPaused = false;
  /** Every pause and resume, in order. */
  readonly reading: ('pause' | 'resume')[] = [];
  readonly pending: (() => void)[] = [];
  closedWith: [number, string] | undefined;

  send(text: string, done: (error?: Error) => void): void {
    this.sent.push(text);
    this.pending.push(() => done());
  }

  pause(): void {
    this.isPaused = true;
    this.reading.push('pause');
  }

  resume(): void {
    this.isPaused = false;
    this.reading.push('resume');
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
    maxWaiting: 2,
    maxUnreadBytes: 1000,
    budget: new WaitingBudget(1024 * 1024),
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

  it('closes the socket (1008) rather than write an answer while more than the limit waits unread', async () => {
    const { socket, transport, delivered, reports } = await started();
    let closed = false;
    transport.onclose = () => {
      closed = true;
    };
    await socket.receive(request(1));
    expect(delivered).toEqual([request(1)]);
    socket.bufferedAmount = 1001;
    await expect(transport.send({ jsonrpc: '2.0', id: 1, result: {} })).rejects.toThrow(
      'the WebSocket connection was closed: its client does not read',
    );
    expect(socket.sent).toEqual([]);
    expect(socket.closedWith).toEqual([1008, 'Too many answers unread: read the answers before sending more.']);
    expect(reports).toEqual(['ws: closed a socket whose client does not read what it is sent']);
    expect(closed).toBe(true);
    // Its own refusals are not written either: nothing more is served.
    await socket.receive('not json');
    expect(socket.sent).toEqual([]);
  });

  it('stops reading the socket while more messages than the bound wait to be served, and reads again once they are', async () => {
    let admitAll: () => void = () => {};
    const admission = new Promise<void>((resolve) => {
      admitAll = resolve;
    });
    const { socket, delivered } = await started({
      maxInFlight: 10,
      admit: async () => {
        await admission;
        return true;
      },
    });
    await socket.receive(request(1));
    await socket.receive(request(2));
    expect(socket.isPaused).toBe(false);
    await socket.receive(request(3));
    expect(socket.isPaused).toBe(true);
    admitAll();
    await expect.poll(() => delivered.length).toBe(3);
    expect(socket.isPaused).toBe(false);
    expect(socket.reading).toEqual(['pause', 'resume']);
  });

  it('stops reading every socket while the bytes waiting over all of them fill the budget, and reads them again once half are served', async () => {
    const admissions: (() => void)[] = [];
    const admit = () => new Promise<boolean>((resolve) => admissions.push(() => resolve(true)));
    const size = Buffer.byteLength(JSON.stringify(request(1)));
    // Room for three messages: the third fills it; it has room again at one and a half.
    const budget = new WaitingBudget(3 * size);
    const first = await started({ maxInFlight: 10, maxWaiting: 10, budget, admit });
    const second = await started({ maxInFlight: 10, maxWaiting: 10, budget, admit });
    await first.socket.receive(request(1));
    await first.socket.receive(request(2));
    expect([first.socket.isPaused, second.socket.isPaused]).toEqual([false, false]);
    await second.socket.receive(request(3));
    expect([first.socket.isPaused, second.socket.isPaused]).toEqual([true, true]);
    admissions.shift()?.();
    await expect.poll(() => first.delivered.length).toBe(1);
    expect([first.socket.isPaused, second.socket.isPaused]).toEqual([true, true]);
    admissions.shift()?.();
    await expect.poll(() => second.delivered.length).toBe(1);
    expect([first.socket.isPaused, second.socket.isPaused]).toEqual([false, false]);
    expect(first.socket.reading).toEqual(['pause', 'resume']);
    expect(second.socket.reading).toEqual(['pause', 'resume']);
  });

  it('gives back the bytes of messages still waiting when their socket closes', async () => {
    let admitAll: () => void = () => {};
    const admission = new Promise<void>((resolve) => {
      admitAll = resolve;
    });
    const size = Buffer.byteLength(JSON.stringify(request(1)));
    const budget = new WaitingBudget(2 * size);
    const { socket } = await started({
      maxInFlight: 10,
      budget,
      admit: async () => {
        await admission;
        return true;
      },
    });
    await socket.receive(request(1));
    await socket.receive(request(2));
    expect(budget.full).toBe(true);
    socket.readyState = 3;
    socket.emit('close');
    admitAll();
    await expect.poll(() => budget.full).toBe(false);
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
