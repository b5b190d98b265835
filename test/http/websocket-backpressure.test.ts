/**
 * A WebSocket client that sends and never reads must not grow the server: the server
 * stops reading a socket while its queue of messages not yet served is full (the kernel's
 * buffers then hold the client back), and closes one that leaves too much unread (1008).
 * Before, one client sending large notifications on PostgreSQL (where each message waits
 * for its token check) grew the server by all it was sent (100 MiB here; 7 GB when tried).
 * Measured as the server's peak memory (heap, and the buffers messages are read into) and
 * longest event-loop pause while the hostile client runs, then another client is served;
 * on SQLite and on PostgreSQL, with the server in this process and the flooding client in
 * its own (flooding-client.mjs), so that the server does not pace it. And many sockets
 * flooding at once, each message waiting for a slow token check: each socket's own cap
 * let 24 of them hold 190 MiB (165 MiB of buffers at the peak, the loop held 600 ms); the
 * server's budget of bytes waiting over all sockets stops reading every one while full.
 */

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { WebSocket } from 'ws';
import type { Access } from '../../src/access/tokens/access.js';
import { createApp } from '../../src/app.js';
import { type RunningHttpServer, startHttpServer } from '../../src/http/server.js';
import type { WebSocketLimits } from '../../src/http/websocket.js';
import type { Memory } from '../../src/memory/memory.js';
import type { Policy } from '../../src/memory/model/policy.js';
import type { StorageBackend } from '../../src/storage/backend.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';
import { openPostgresStore } from '../../src/storage/postgres/index.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { HELD_LOOP_MS, withEventLoopDelay } from '../helpers/event-loop.js';
import { collectGarbage } from '../helpers/heap.js';
import { createTestDatabase, findTestPostgres, type TestDatabase } from '../helpers/postgres.js';
import { raw, testFolder } from './fixtures.js';

/** Half the largest message the server takes (its default body cap is 1 MiB). */
const MESSAGE_BYTES = 512 * 1024;
/** What the client sends in all: 100 MiB (on PostgreSQL the server held all of it before). */
const MESSAGES = 200;
/** The messages the server may hold read and not yet served: a few at a time. */
const HELD_BUFFER_BYTES = 48 * 1024 * 1024;
/** Memory in use at most, garbage not yet collected included (what a message costs to serve is garbage soon). */
const IN_USE_BYTES = 256 * 1024 * 1024;

interface Served {
  readonly server: RunningHttpServer;
  readonly token: string;
  readonly logs: string[];
  readonly memory: Memory;
}

type OpenStore = () => Promise<StorageBackend>;

async function serve(
  openStore: OpenStore,
  limits: Partial<WebSocketLimits> = {},
  policy: Partial<Policy> = {},
): Promise<Served> {
  const app = createApp({ store: await openStore(), policy });
  const { token } = await app.access.create({ user: 'ada', label: 'hostile' });
  const logs: string[] = [];
  const server = await startHttpServer({
    app,
    version: '0.0.0-test',
    auth: { mode: 'token' },
    host: '127.0.0.1',
    port: 0,
    log: (line) => logs.push(line),
    webSocketLimits: limits,
  });
  onTestFinished(async () => {
    await server.close();
    await app.close();
  });
  return { server, token, logs, memory: app.memory };
}

function openSocket(port: number, token: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/ws?access_token=${token}`, ['mcp']);
    onTestFinished(() => socket.terminate());
    socket.on('error', reject);
    socket.on('open', () => resolve(socket));
  });
}

/** Sends `text` and waits until the kernel took it: the client itself holds one message at most. */
function sendTaken(socket: WebSocket, text: string): Promise<void> {
  return new Promise((resolve, reject) => socket.send(text, (error) => (error ? reject(error) : resolve())));
}

function nextMessage(socket: WebSocket): Promise<{ id?: unknown; result?: unknown }> {
  return new Promise((resolve) => socket.once('message', (data) => resolve(JSON.parse(String(data)))));
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

async function initialized(port: number, token: string): Promise<WebSocket> {
  const socket = await openSocket(port, token);
  const answer = nextMessage(socket);
  socket.send(INITIALIZE);
  expect((await answer).id).toBe(0);
  socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  return socket;
}

interface MemoryPeaks {
  /** The most memory in use (heap and buffers) over what was in use before, garbage not yet collected included. */
  readonly inUseBytes: number;
  /** The most buffer memory over what was before: a message read from a socket is a Buffer until it is served. */
  readonly buffersBytes: number;
}

/** Runs `work` and returns it with the peaks of memory in use meanwhile (see MemoryPeaks). */
async function withMemoryPeaks<T>(work: () => Promise<T>): Promise<MemoryPeaks & { readonly result: T }> {
  collectGarbage();
  const before = process.memoryUsage();
  let inUse = 0;
  let buffers = 0;
  const sample = setInterval(() => {
    const now = process.memoryUsage();
    inUse = Math.max(inUse, now.heapUsed + now.arrayBuffers - before.heapUsed - before.arrayBuffers);
    buffers = Math.max(buffers, now.arrayBuffers - before.arrayBuffers);
  }, 5);
  try {
    const result = await work();
    return { result, inUseBytes: inUse, buffersBytes: buffers };
  } finally {
    clearInterval(sample);
  }
}

/** Another client is served: a ping over a new socket, and /healthz. */
async function othersServed(served: Served): Promise<void> {
  const other = await initialized(served.server.port, served.token);
  const answer = nextMessage(other);
  other.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }));
  expect(await answer).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  expect((await raw(served.server.port, { path: '/healthz' })).status).toBe(200);
}

const FLOODING_CLIENT = fileURLToPath(new URL('./flooding-client.mjs', import.meta.url));

/** Runs the flooding client against /ws until it has sent everything (`messages` of `bytes`, on each of `sockets`). */
function flood(
  port: number,
  token: string,
  { bytes = MESSAGE_BYTES, messages = MESSAGES, sockets = 1 } = {},
): Promise<void> {
  return new Promise((resolve, reject) => {
    const url = `ws://127.0.0.1:${port}/ws?access_token=${token}`;
    const args = [FLOODING_CLIENT, url, String(bytes), String(messages), String(sockets)];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    onTestFinished(() => {
      child.kill();
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`the flooding client failed (${code}): ${output}`)),
    );
  });
}

function hostileNotifications(openStore: OpenStore) {
  return async () => {
    const served = await serve(openStore);
    // The garbage collection that starts the memory measure is not counted as a pause.
    const peaks = await withMemoryPeaks(() => withEventLoopDelay(() => flood(served.server.port, served.token)));
    const { maxDelayMs } = peaks.result;
    expect(peaks.buffersBytes).toBeLessThan(HELD_BUFFER_BYTES);
    expect(peaks.inUseBytes).toBeLessThan(IN_USE_BYTES);
    expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
    await othersServed(served);
  };
}

/** An entry of about ENTRY_BYTES: each answer that opens it is that large. */
const ENTRY_BYTES = 256 * 1024;
/** What a client may leave unread here, before it is closed. */
const UNREAD_BYTES = 1024 * 1024;

function unreadAnswers(openStore: OpenStore) {
  return async () => {
    const served = await serve(openStore, { maxUnreadBytes: UNREAD_BYTES }, { entryCap: 2 * ENTRY_BYTES });
    const caller = { user: 'ada', label: 'test' };
    await served.memory.write(caller, { name: 'topics/large', description: 'Large', new: 'y'.repeat(ENTRY_BYTES) });
    const reader = await initialized(served.server.port, served.token);
    reader.pause();
    const open = (id: number) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'memory_open', arguments: { names: ['topics/large'] } },
      });
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      reader.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    // One request at a time (many at once would be refused, as too many at once), until the answers
    // fill the kernel's buffers and then pass the limit: 400 answers of 256 KiB, 100 MiB, at most.
    const peaks = await withMemoryPeaks(() =>
      withEventLoopDelay(async () => {
        for (let id = 1; id <= 400 && !served.logs.includes(UNREAD_LOG); id++) {
          await sendTaken(reader, open(id));
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }),
    );
    const { maxDelayMs } = peaks.result;
    expect(served.logs).toContain(UNREAD_LOG);
    expect(peaks.buffersBytes).toBeLessThan(HELD_BUFFER_BYTES);
    expect(peaks.inUseBytes).toBeLessThan(IN_USE_BYTES);
    expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
    // Once it reads, it finds the answers sent, then the close and why.
    reader.resume();
    expect(await closed).toEqual({
      code: 1008,
      reason: 'Too many answers unread: read the answers before sending more.',
    });
    await othersServed(served);
  };
}

/** Sockets flooding at once, each with its own queue full: one token's fill of them, nearly. */
const FLOODING_SOCKETS = 24;
/** Each of their messages (nearly the largest the server takes), and how many each sends: 253 MiB in all. */
const SOCKET_MESSAGE_BYTES = 900 * 1024;
const SOCKET_MESSAGES = 12;
/** The server's budget of bytes waiting here: without it, 24 full queues hold 9 × 900 KiB each, 190 MiB. */
const WAITING_BYTES = 8 * 1024 * 1024;
/**
 * The buffers the server may hold: its budget, on each socket one message being read when
 * all stopped (21 MiB), and the messages served whose buffers are not yet collected (seen:
 * 88 MiB in all; 165 MiB without the budget).
 */
const HELD_BY_SOCKETS_BYTES = 120 * 1024 * 1024;
/**
 * Memory in use at most while they flood, garbage included. 253 MiB pass through the
 * server here, and each message's text is garbage once served: how much of it is still
 * uncollected at the peak is the collector's timing (seen: up to 257 MiB in a clean-clone
 * run, over the one-socket tests' 256 MiB). What the budget bounds is the buffers held,
 * asserted above; this catches the heap holding messages as well.
 */
const IN_USE_BY_SOCKETS_BYTES = 384 * 1024 * 1024;
/** Each message waits this long for its token check, as on a busy PostgreSQL: every socket's queue fills. */
const ADMISSION_MS = 20;

/** A server whose token check takes ADMISSION_MS, any token being ada's. */
async function serveSlowAdmission(limits: Partial<WebSocketLimits>): Promise<Served> {
  const access = {
    authenticate: async (token: string) => {
      await new Promise((resolve) => setTimeout(resolve, ADMISSION_MS));
      return { user: 'ada', label: token, readOnly: false };
    },
  } as unknown as Access;
  const app = { ...createApp({ store: openMemoryStore() }), access };
  const logs: string[] = [];
  const server = await startHttpServer({
    app,
    handler: async () => ({ text: 'done', isError: false }),
    version: '0.0.0-test',
    auth: { mode: 'token' },
    host: '127.0.0.1',
    port: 0,
    log: (line) => logs.push(line),
    webSocketLimits: limits,
  });
  onTestFinished(() => server.close());
  return { server, token: 'engram_any', logs, memory: app.memory };
}

describe('many WebSocket clients that never read, at once', () => {
  it(
    'are read only as fast as they are served, within one budget for the whole server: it holds little, its loop is never held, others are served',
    async () => {
      const served = await serveSlowAdmission({ waitingBytes: WAITING_BYTES });
      const peaks = await withMemoryPeaks(() =>
        withEventLoopDelay(async () => {
          const flooding = flood(served.server.port, served.token, {
            bytes: SOCKET_MESSAGE_BYTES,
            messages: SOCKET_MESSAGES,
            sockets: FLOODING_SOCKETS,
          });
          // Awaited below; if the test fails first, the client killed with it is not an unhandled rejection.
          flooding.catch(() => {});
          // The server answers others while the budget is full (the sockets open as a busy machine lets them).
          await expect
            .poll(() => served.logs.filter((line) => line.includes('status=101')).length, { timeout: SLOW_MACHINE_MS })
            .toBe(FLOODING_SOCKETS);
          expect((await raw(served.server.port, { path: '/healthz' })).status).toBe(200);
          await flooding;
        }),
      );
      const { maxDelayMs } = peaks.result;
      expect(peaks.buffersBytes).toBeLessThan(HELD_BY_SOCKETS_BYTES);
      expect(peaks.inUseBytes).toBeLessThan(IN_USE_BY_SOCKETS_BYTES);
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
      await othersServed(served);
    },
    SLOW_MACHINE_MS,
  );
});

const UNREAD_LOG = 'ws: closed a socket whose client does not read what it is sent';

/** 100 MiB through a token check each: some 10 s on a busy 2-core machine, more when it is busier. */
const SLOW_MACHINE_MS = 120_000;

const NOTIFICATIONS_TEST =
  'one that sends large notifications is read only as fast as it is served: the server holds a few, its loop is never held, others are served';
const ANSWERS_TEST =
  'one that asks for large answers is closed (1008, saying why) once more than the limit waits unread: the server holds little, others are served';

describe('WebSocket clients that never read, on SQLite', () => {
  const sqlite: OpenStore = async () => openSqliteStore({ path: join(testFolder(), 'memory.db') });
  it(NOTIFICATIONS_TEST, hostileNotifications(sqlite), SLOW_MACHINE_MS);
  it(ANSWERS_TEST, unreadAnswers(sqlite), SLOW_MACHINE_MS);
});

const postgres = await findTestPostgres();

describe.skipIf(!postgres)('WebSocket clients that never read, on PostgreSQL', () => {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });
  const openPostgres: OpenStore = async () => {
    const database = await createTestDatabase(postgres as string);
    databases.push(database);
    return openPostgresStore({ connectionString: database.url });
  };
  it(NOTIFICATIONS_TEST, hostileNotifications(openPostgres), SLOW_MACHINE_MS);
  it(ANSWERS_TEST, unreadAnswers(openPostgres), SLOW_MACHINE_MS);
});
