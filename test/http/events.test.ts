/**
 * `GET /api/events` (http/api/events.ts): server-sent events telling a browser that its
 * user's memory changed. A write over MCP by another `engram` process on the same SQLite
 * file arrives as a `change` event, as does one made through a second store on the same
 * PostgreSQL database; another user's never does; auth is that of the rest of /api; the
 * streams are capped per user and in all; closing the server ends them rather than waiting;
 * a stream whose caller is no longer let in is ended at the next heartbeat; and a stream
 * whose answer cannot be started is a failed request (a rejection the router answers), not
 * an unhandled rejection that would end the server.
 */

import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, request, type Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { createApp } from '../../src/app.js';
import { EventStreams } from '../../src/http/api/events.js';
import { startHttpServer } from '../../src/http/server.js';
import type { MemoryChange } from '../../src/memory/activity.js';
import { createMemory, type Memory } from '../../src/memory/memory.js';
import type { Caller } from '../../src/memory/port.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';
import { openPostgresStore } from '../../src/storage/postgres/index.js';
import { tempDir } from '../helpers/engram.js';
import { MCP_CLIENTS } from '../helpers/mcp-clients.js';
import { createTestDatabase, findTestPostgres, type TestDatabase } from '../helpers/postgres.js';
import { api } from './api-client.js';
import { startTestServer } from './fixtures.js';

const ARRIVES_WITHIN_MS = 15_000;

interface ServerEvent {
  readonly event: string;
  readonly data: string;
}

interface EventStream {
  readonly status: number;
  readonly contentType: string | undefined;
  /** The events received so far (comments left out). */
  readonly events: ServerEvent[];
  /** Every comment line received so far (heartbeats). */
  readonly comments: string[];
  /** The body of an answer that is not a stream (a refusal). */
  body(): string;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  /** The `change` events' data. */
  changes(): MemoryChange[];
  close(): void;
}

/** Opens GET /api/events on 127.0.0.1:`port` and reads it as it comes; closed when the test ends. */
function openEvents(port: number, headers: Record<string, string> = {}): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: '127.0.0.1', port, path: '/api/events', headers: { Host: `127.0.0.1:${port}`, ...headers } },
      (res: IncomingMessage) => {
        const events: ServerEvent[] = [];
        const comments: string[] = [];
        let text = '';
        let pending = '';
        res.setEncoding('utf8');
        const ended = new Promise<void>((done) => res.on('close', () => done()));
        res.on('data', (chunk: string) => {
          text += chunk;
          pending += chunk;
          for (let end = pending.indexOf('\n\n'); end >= 0; end = pending.indexOf('\n\n')) {
            const block = pending.slice(0, end);
            pending = pending.slice(end + 2);
            let event = 'message';
            const data: string[] = [];
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) comments.push(line);
              else if (line.startsWith('event: ')) event = line.slice(7);
              else if (line.startsWith('data: ')) data.push(line.slice(6));
            }
            if (data.length > 0) events.push({ event, data: data.join('\n') });
          }
        });
        res.on('error', () => {});
        const stream: EventStream = {
          status: res.statusCode ?? 0,
          contentType: res.headers['content-type'],
          events,
          comments,
          body: () => text,
          ended,
          changes: () =>
            events.filter((item) => item.event === 'change').map((item) => JSON.parse(item.data) as MemoryChange),
          close: () => {
            outgoing.destroy();
          },
        };
        onTestFinished(() => stream.close());
        resolve(stream);
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** Waits until the stream has said `ready`: from then on, every change is told on it. */
async function ready(stream: EventStream): Promise<EventStream> {
  expect(stream.status).toBe(200);
  await vi.waitFor(() => expect(stream.events[0]?.event).toBe('ready'), ARRIVES_WITHIN_MS);
  return stream;
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('GET /api/events', () => {
  it('tells of a write made over MCP by another engram process on the same database file', async () => {
    const server = await startTestServer();
    const stream = await ready(await openEvents(server.port));
    expect(stream.contentType).toBe('text/event-stream; charset=utf-8');
    const dir = tempDir();
    const session = await MCP_CLIENTS[0]!.connect({
      database: ['--db', server.db],
      configHome: dir.path,
      clientName: 'claude-desktop',
    });
    onTestFinished(() => session.close());
    const outcome = await session.call('memory_write', {
      name: 'topics/editor',
      description: 'Editor preferences',
      new: 'Uses Helix.',
    });
    expect(outcome.isError).toBe(false);
    await vi.waitFor(() => expect(stream.changes()).not.toEqual([]), ARRIVES_WITHIN_MS);
    expect(stream.changes()[0]?.version).toBeGreaterThan(0);
    // The page then fetches what changed: the activity names the other process's client.
    const activity = await server.memory.activity.list({ user: 'local', label: 'test' });
    expect(activity.items[0]).toMatchObject({ name: 'topics/editor', actor: 'claude-desktop', operation: 'create' });
  });

  it('a stream whose answer fails to start is a failed request, logged: the server goes on serving', async () => {
    const server = await startTestServer();
    const flush = vi.spyOn(ServerResponse.prototype, 'flushHeaders').mockImplementationOnce(() => {
      throw new Error('the socket went away mid-answer');
    });
    onTestFinished(() => flush.mockRestore());
    const failed = await new Promise<string>((resolve) => {
      const outgoing = request(
        { host: '127.0.0.1', port: server.port, path: '/api/events', headers: { Host: `127.0.0.1:${server.port}` } },
        (res) => {
          res.resume();
          res.on('close', () => resolve(res.complete ? `answered ${res.statusCode}` : 'cut'));
        },
      );
      outgoing.on('error', () => resolve('cut'));
      outgoing.end();
    });
    // The headers were already written when it failed: the connection is cut, not a half answer.
    expect(failed).toBe('cut');
    expect(server.logs.join('\n')).toContain('internal error: Error: the socket went away mid-answer');
    expect((await api(server.port, 'GET', '/api/entries')).status).toBe(200);
    await ready(await openEvents(server.port));
  });

  it("tells each user of their own changes only, with what this server's own writes changed", async () => {
    const server = await startTestServer({ auth: 'token' });
    const alice = await server.access.create({ user: 'alice', label: 'alice-ui' });
    const bob = await server.access.create({ user: 'bob', label: 'bob-ui' });
    const aliceStream = await ready(await openEvents(server.port, bearer(alice.token)));
    const bobStream = await ready(await openEvents(server.port, bearer(bob.token)));
    const write = (caller: Caller, name: string) =>
      server.memory.write(caller, { name, description: 'd', new: `${caller.user}'s text` });
    await write({ user: 'alice', label: 'claude' }, 'topics/alice');
    await vi.waitFor(() => expect(aliceStream.changes()).toHaveLength(1), ARRIVES_WITHIN_MS);
    expect(aliceStream.changes()[0]).toMatchObject({ name: 'topics/alice', revision: 1, operation: 'create' });
    await write({ user: 'bob', label: 'chatgpt' }, 'topics/bob');
    await vi.waitFor(() => expect(bobStream.changes()).toHaveLength(1), ARRIVES_WITHIN_MS);
    // Alice's change came before bob's stream heard its own: it would have been told by then.
    expect(bobStream.changes().map((change) => change.name)).toEqual(['topics/bob']);
    expect(aliceStream.changes().map((change) => change.name)).toEqual(['topics/alice']);
  });

  it("opens for a signed-in browser's session cookie, as EventSource sends it", async () => {
    const server = await startTestServer({ auth: 'token' });
    await server.accounts.create('alice', 'correct horse battery staple');
    const origin = `http://127.0.0.1:${server.port}`;
    const signedIn = await api(server.port, 'POST', '/api/session', {
      body: { user: 'alice', password: 'correct horse battery staple' },
      headers: { Origin: origin, 'X-Engram-CSRF': '1' },
    });
    const cookie = (signedIn.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '';
    expect(cookie).toMatch(/^engram_session=/);
    const stream = await ready(await openEvents(server.port, { Cookie: cookie, Origin: origin }));
    await server.memory.write({ user: 'alice', label: 'claude' }, { name: 'topics/tea', description: 't', new: 'x' });
    await vi.waitFor(() => expect(stream.changes()).toHaveLength(1), ARRIVES_WITHIN_MS);
  });

  it('needs the credentials the rest of /api needs', async () => {
    const server = await startTestServer({ auth: 'token' });
    const none = await openEvents(server.port);
    await none.ended;
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body()).error.code).toBe('UNAUTHORIZED');
    const wrong = await openEvents(server.port, bearer('engram_not_a_token'));
    await wrong.ended;
    expect(wrong.status).toBe(401);
  });

  it('refuses a ninth stream of one user with 429, and admits one again when another closes', async () => {
    const server = await startTestServer({ auth: 'token' });
    const alice = await server.access.create({ user: 'alice', label: 'alice-ui' });
    const bob = await server.access.create({ user: 'bob', label: 'bob-ui' });
    const streams: EventStream[] = [];
    for (let index = 0; index < 8; index++)
      streams.push(await ready(await openEvents(server.port, bearer(alice.token))));
    const ninth = await openEvents(server.port, bearer(alice.token));
    await ninth.ended;
    expect(ninth.status).toBe(429);
    expect(JSON.parse(ninth.body()).error).toMatchObject({
      code: 'BUSY',
      message: expect.stringContaining('8 event streams'),
    });
    // Another user is not held back by alice's streams.
    await ready(await openEvents(server.port, bearer(bob.token)));
    streams[0]?.close();
    await vi.waitFor(async () => {
      const again = await openEvents(server.port, bearer(alice.token));
      expect(again.status).toBe(200);
    }, ARRIVES_WITHIN_MS);
  });

  it('outlives the HTTP request timeouts: an open stream is not a slow request', async () => {
    const server = await startTestServer({
      timeouts: { headersMs: 100, requestMs: 100, keepAliveMs: 100, checkIntervalMs: 20 },
    });
    const stream = await ready(await openEvents(server.port));
    await new Promise((resolve) => setTimeout(resolve, 400));
    await server.memory.write({ user: 'local', label: 'claude' }, { name: 'topics/late', description: 'd', new: 'x' });
    await vi.waitFor(() => expect(stream.changes()).toHaveLength(1), ARRIVES_WITHIN_MS);
  });

  it('is ended when the server closes, which does not wait for it', async () => {
    // Keep-alive longer than the test may run: close() must not wait for the stream's connection either.
    const server = await startTestServer({ timeouts: { keepAliveMs: 120_000 } });
    const stream = await ready(await openEvents(server.port));
    await server.close();
    await stream.ended;
    await expect(openEvents(server.port)).rejects.toThrow();
  });
});

const postgres = await findTestPostgres();

describe.skipIf(!postgres)('GET /api/events on PostgreSQL', () => {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });

  /** An `engram serve` without auth over a new PostgreSQL database, closed (server, then store) when the test ends. */
  async function serveFreshDatabase() {
    const database = await createTestDatabase(postgres as string);
    databases.push(database);
    const store = await openPostgresStore({ connectionString: database.url });
    const app = createApp({ store });
    const server = await startHttpServer({
      app,
      version: '0.0.0-test',
      auth: { mode: 'none', user: 'local' },
      host: '127.0.0.1',
      port: 0,
      log: () => {},
    });
    onTestFinished(async () => {
      await server.close();
      await app.close();
    });
    return { database, memory: app.memory, server };
  }

  it('tells of a write made through another store (another server) on the same database', async () => {
    const { database, server } = await serveFreshDatabase();
    const other = await openPostgresStore({ connectionString: database.url });
    onTestFinished(() => other.close());
    const stream = await ready(await openEvents(server.port));
    const elsewhere = createMemory({ store: other });
    await elsewhere.write({ user: 'someone-else', label: 'x' }, { name: 'topics/a', description: 'd', new: 'x' });
    await elsewhere.write({ user: 'local', label: 'claude' }, { name: 'topics/b', description: 'd', new: 'x' });
    await vi.waitFor(() => expect(stream.changes()).toHaveLength(1), ARRIVES_WITHIN_MS);
    expect(stream.changes()[0]?.version).toBeGreaterThan(0);
  });

  it('says ready only once it has read where it starts: a write committed while that read is held is told', async () => {
    const { database, memory, server } = await serveFreshDatabase();
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    onTestFinished(() => other.end());
    await memory.write({ user: 'local', label: 'claude' }, { name: 'topics/a', description: 'd', new: 'x' });
    // Another process holds the table of change counters: the stream's first read of its user's waits.
    await other.query('BEGIN');
    await other.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
    const stream = await openEvents(server.port);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const readyBeforeCommit = stream.events.some((item) => item.event === 'ready');
    // That process commits a change of the user's memory, then lets the read go on.
    await other.query("UPDATE users SET changes = changes + 1 WHERE user_id = 'local'");
    await other.query('COMMIT');
    await ready(stream);
    // `ready` waited for the starting point, so the change committed meanwhile is the page's fetch's to show.
    expect(readyBeforeCommit).toBe(false);
    await memory.write({ user: 'local', label: 'claude' }, { name: 'topics/b', description: 'd', new: 'x' });
    await vi.waitFor(() => expect(stream.changes().at(-1)?.name).toBe('topics/b'), ARRIVES_WITHIN_MS);
  });
});

describe('EventStreams', () => {
  /** The hub alone behind a plain server, with short heartbeats and small caps. */
  async function hubServer(stillAllowed: () => Promise<boolean>) {
    const memory: Memory = createMemory({ store: openMemoryStore() });
    const hub = new EventStreams(memory, { perUser: 1, total: 2, heartbeatMs: 20 });
    const [route] = hub.routes();
    const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const user = new URL(req.url ?? '/', 'http://x').searchParams.get('user') ?? 'alice';
      route!
        .handle({ caller: { user, label: 'ui' } } as never)
        .then((result) => result.respond?.(res, stillAllowed))
        .catch((error: Error) => {
          res.writeHead(429);
          res.end(error.message);
        });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    onTestFinished(() => new Promise<void>((done) => server.close(() => done())));
    onTestFinished(() => hub.close());
    return { hub, memory, port: (server.address() as AddressInfo).port };
  }

  function open(port: number, user: string) {
    return new Promise<EventStream>((resolve, reject) => {
      const outgoing = request({ host: '127.0.0.1', port, path: `/?user=${user}` }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        const ended = new Promise<void>((done) => res.on('close', () => done()));
        const stream = {
          status: res.statusCode ?? 0,
          contentType: res.headers['content-type'],
          events: [],
          comments: [],
          body: () => text,
          ended,
          changes: () => [],
          close: () => {
            outgoing.destroy();
          },
        };
        onTestFinished(() => stream.close());
        resolve(stream);
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
  }

  it('sends heartbeats, and ends a stream whose caller is no longer let in', async () => {
    let allowed = true;
    const { hub, port } = await hubServer(async () => allowed);
    const stream = await open(port, 'alice');
    await vi.waitFor(() => expect(stream.body()).toContain(': heartbeat'), ARRIVES_WITHIN_MS);
    allowed = false;
    await stream.ended;
    await vi.waitFor(() => expect(hub.size).toBe(0), ARRIVES_WITHIN_MS);
  });

  it('rejects, and forgets the stream, when its answer cannot be started (the router then answers 500)', async () => {
    const memory: Memory = createMemory({ store: openMemoryStore() });
    const hub = new EventStreams(memory, { perUser: 1, total: 2, heartbeatMs: 20 });
    onTestFinished(() => hub.close());
    const [route] = hub.routes();
    const admit = () => route!.handle({ caller: { user: 'alice', label: 'ui' } } as never);
    const admitted = await admit();
    const unstartable = Object.assign(new EventEmitter(), {
      destroyed: false,
      writableEnded: false,
      writeHead: () => {
        throw new Error('the socket is gone');
      },
    });
    await expect(admitted.respond!(unstartable as never, async () => true)).rejects.toThrow('the socket is gone');
    expect(hub.size).toBe(0);
    // Alice's one stream is hers to open again: the failed one was not left counted.
    expect((await admit()).respond).toBeDefined();
  });

  it('caps the streams in all, as well as per user', async () => {
    const { hub, port } = await hubServer(async () => true);
    await open(port, 'alice');
    const secondOfAlice = await open(port, 'alice');
    expect(secondOfAlice.status).toBe(429);
    await open(port, 'bob');
    const third = await open(port, 'carol');
    expect(third.status).toBe(429);
    await third.ended;
    expect(third.body()).toContain('2 event streams');
    expect(hub.size).toBe(2);
  });
});
