/**
 * When a client ends stdin with requests still running (a script that pipes its calls in
 * and closes its end, or a client shutting down), `engram stdio` stops reading but keeps
 * the connection until each of them is answered (src/mcp/stdio-transport.ts), with the
 * fast path and the opening on and off: closing at once made the SDK abort them, their
 * answers never written though the calls were applied. A request the client cancelled
 * gets no answer and is not waited for; one that never ends is waited for
 * ANSWERS_AFTER_END_MS at most.
 */

import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LineQueue } from '../../src/mcp/line-queue.js';
import type { McpServerOptions } from '../../src/mcp/server.js';
import { serveMcpStdio } from '../../src/mcp/stdio.js';
import { ANSWERS_AFTER_END_MS } from '../../src/mcp/stdio-transport.js';
import { createMemory } from '../../src/memory/memory.js';
import { actorLabel } from '../../src/memory/model/caller.js';
import { DEFAULT_POLICY } from '../../src/memory/model/policy.js';
import { createToolHandler, type ToolHandler } from '../../src/memory/tools/handler.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';

const line = (message: unknown) => `${JSON.stringify(message)}\n`;
const rpc = (id: number, method: string, params?: unknown) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params === undefined ? {} : { params }),
});
const OPENING =
  line(
    rpc(1, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'piped-script', version: '1' },
    }),
  ) + line({ jsonrpc: '2.0', method: 'notifications/initialized' });
const write = (id: number, name: string) =>
  rpc(id, 'tools/call', { name: 'memory_write', arguments: { name, description: 'D', new: 'x' } });

/**
 * `engram stdio`'s serving over in-memory streams, its tool calls held until `release()`
 * (or forever, never released).
 */
function heldServer(fastPath: boolean) {
  const memory = createMemory({ store: openMemoryStore() });
  const handle = createToolHandler(memory);
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const handler: ToolHandler = async (...args) => {
    await gate;
    return handle(...args);
  };
  const options: McpServerOptions = {
    handler,
    memory,
    policy: DEFAULT_POLICY,
    version: '0.0.0-test',
    caller: (clientName) => ({ user: 'local', label: actorLabel(clientName, 'mcp') }),
  };
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const lines = new LineQueue(stdout);
  const reports: string[] = [];
  const server = serveMcpStdio(options, (report) => reports.push(report), { fastPath, stdin, stdout });
  let closed = false;
  void server.closed.then(() => {
    closed = true;
  });
  return { stdin, lines, reports, server, release: () => release(), isClosed: () => closed, memory };
}

/** Lets the streams, the SDK's loading and its handlers run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

afterEach(() => {
  vi.useRealTimers();
});

describe.each([
  ['with the opening and the fast path', true],
  ['with the SDK alone', false],
])('engram stdio, input ended %s', (_label, fastPath) => {
  it('answers the requests still running before it closes', async () => {
    const wire = heldServer(fastPath);
    wire.stdin.end(OPENING + line(write(2, 'topics/a')) + line(write(3, 'topics/b')) + line(rpc(4, 'ping')));
    expect(JSON.parse(await wire.lines.next())).toMatchObject({ id: 1, result: { protocolVersion: '2025-06-18' } });
    await settle();
    expect(wire.isClosed()).toBe(false);

    wire.release();
    const answers = [await wire.lines.next(), await wire.lines.next(), await wire.lines.next()].map(
      (answer) => JSON.parse(answer) as { id: number; result?: { isError?: boolean } },
    );
    await wire.server.closed;
    expect(answers.map((answer) => answer.id).sort()).toEqual([2, 3, 4]);
    expect(answers.every((answer) => answer.result !== undefined && answer.result.isError !== true)).toBe(true);
    expect(wire.lines.pending).toBe(0);
    expect(wire.reports.filter((report) => report.includes('unanswered'))).toEqual([]);
  });

  it('closes at once when nothing is running', async () => {
    const wire = heldServer(fastPath);
    wire.stdin.end(OPENING + line(rpc(2, 'tools/list')));
    await wire.lines.next();
    await wire.lines.next();
    await wire.server.closed;
  });

  it('does not wait for a request the client cancelled', async () => {
    const wire = heldServer(fastPath);
    const cancelled = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } };
    wire.stdin.end(OPENING + line(write(2, 'topics/a')) + line(cancelled));
    await wire.lines.next();
    await wire.server.closed;
    expect(wire.lines.pending).toBe(0);
  });

  it('waits for a request that is never answered only so long, and says so', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const wire = heldServer(fastPath);
    wire.stdin.end(OPENING + line(write(2, 'topics/a')));
    await wire.lines.next();
    await vi.advanceTimersByTimeAsync(ANSWERS_AFTER_END_MS - 1_000);
    expect(wire.isClosed()).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    await wire.server.closed;
    expect(wire.reports).toContainEqual(expect.stringContaining('1 request(s) unanswered'));
  });
});
