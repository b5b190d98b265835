/**
 * StorageBackend failures at the HTTP doors: while another process holds SQLite's write lock the
 * server keeps answering (/healthz, reads, a read-only token whose "last used" cannot be
 * written) and the waiting write lands once the lock is released; a busy, full or
 * unreachable database is answered by /api with its code, status and message (503 with
 * Retry-After for STORE_BUSY), and by /mcp as a tool error carrying the same message —
 * never as an internal error.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createApp } from '../../src/app.js';
import { startHttpServer } from '../../src/http/server.js';
import type { StorageBackend } from '../../src/storage/backend.js';
import { openPostgresStore } from '../../src/storage/postgres/index.js';
import { openSqliteStore, type SqliteStoreOptions } from '../../src/storage/sqlite/index.js';
import { HELD_LOOP_MS, withEventLoopDelay } from '../helpers/event-loop.js';
import { createTestDatabase, findTestPostgres } from '../helpers/postgres.js';
import { fillDisk } from '../helpers/sqlite-faults.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { api, LOCAL } from './api-client.js';
import { postRpc, type RawResponse, raw, rpc, rpcMessage } from './fixtures.js';

const postgres = await findTestPostgres();

const BUSY =
  /^The memory's database is busy: another program is writing to it \(.+\) and did not finish within 200 ms\. Nothing was changed; try again in a moment\.$/;

/** `engram serve` in-process over `store` (closed with it when the test ends). */
async function serve(store: StorageBackend, auth: 'none' | 'token' = 'none') {
  const app = createApp({ store });
  const server = await startHttpServer({
    app,
    version: '0.0.0-test',
    auth: auth === 'token' ? { mode: 'token' } : { mode: 'none', user: 'local' },
    allowOrigins: [],
    host: '127.0.0.1',
    port: 0,
    log: () => {},
  });
  onTestFinished(async () => {
    await server.close();
    await app.close();
  });
  return { port: server.port, memory: app.memory, access: app.access };
}

/** A SQLite store on a fresh file, and a second connection to it that can hold the write lock. */
function sqlite(options: Partial<SqliteStoreOptions> = {}) {
  const folder = mkdtempSync(join(tmpdir(), 'engram-http-store-'));
  const path = join(folder, 'memory.db');
  const store = openSqliteStore({ path, ...options });
  const other = new Database(path);
  onTestFinished(() => {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    rmSync(folder, { recursive: true, force: true });
  });
  return { store, other };
}

const call = (name: string, args: Record<string, unknown>) => rpc('tools/call', { name, arguments: args });

function toolResult(response: RawResponse): { text: string; isError: boolean } {
  const result = rpcMessage(response).result as { content: { text: string }[]; isError: boolean };
  return { text: result.content.map((block) => block.text).join(''), isError: result.isError };
}

function importOf(entries: { name: string; description: string; body: string }[]) {
  return { body: { format: 'engram-export', version: 1, entries } };
}

describe('SQLite while another process holds the write lock', () => {
  it("answers /healthz and a read-only token's first read while a write waits, then lands the write", async () => {
    const { store, other } = sqlite();
    const { port, access, memory } = await serve(store, 'token');
    const writer = await access.create({ user: 'ada' });
    const reader = await access.create({ user: 'ada', readOnly: true });
    const ada = { user: 'ada', label: 'test' };
    await memory.write(ada, { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' });
    other.exec('BEGIN IMMEDIATE');

    let written = false;
    const write = postRpc(port, call('memory_write', { name: 'topics/me', new: 'Likes tea.' }), {
      Authorization: `Bearer ${writer.token}`,
    }).finally(() => {
      written = true;
    });
    const { result, maxDelayMs } = await withEventLoopDelay(async () => ({
      health: await raw(port, { path: '/healthz' }),
      read: await api(port, 'GET', '/api/entries', { token: reader.token }),
    }));

    expect(result.health.status).toBe(200);
    expect(result.read.status).toBe(200);
    expect(result.read.json.entries).toEqual([expect.objectContaining({ name: 'topics/me', size: 11 })]);
    expect(written).toBe(false);
    expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
    other.exec('COMMIT');
    expect(toolResult(await write)).toEqual({ text: 'topics/me (22 bytes): Who I am', isError: false });
  });

  it('refuses a write still waiting at the deadline: /api with 503 STORE_BUSY and Retry-After, /mcp with a tool error', async () => {
    const { store, other } = sqlite({ busyTimeoutMs: 200 });
    const { port, memory } = await serve(store);
    await memory.write(LOCAL, { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' });
    other.exec('BEGIN IMMEDIATE');

    const imported = await api(
      port,
      'POST',
      '/api/import',
      importOf([{ name: 'topics/new', description: 'New', body: 'new\n' }]),
    );
    const tool = toolResult(await postRpc(port, call('memory_write', { name: 'topics/me', new: 'Likes tea.' })));
    other.exec('COMMIT');

    expect(imported.status).toBe(503);
    expect(imported.headers['retry-after']).toBe('1');
    expect(imported.json).toEqual({ error: { code: 'STORE_BUSY', message: expect.stringMatching(BUSY) } });
    expect(tool).toEqual({ text: expect.stringMatching(BUSY), isError: true });
    expect(await memory.index(LOCAL)).toEqual([{ name: 'topics/me', size: 11, description: 'Who I am' }]);
  });
});

describe('SQLite on a full disk', () => {
  it('is answered by /api with 507 STORE_FULL and by /mcp with a tool error, changing nothing', async () => {
    const { store } = sqlite();
    const { port, memory } = await serve(store);
    await memory.write(LOCAL, { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' });
    fillDisk(store);
    const full =
      /^The disk holding the memory's database .+memory\.db is full \(database or disk is full \(SQLITE_FULL\)\)\. Nothing was changed\. Free some space on that disk, then try again\.$/;
    const big = 'x'.repeat(12_000);

    const imported = await api(
      port,
      'POST',
      '/api/import',
      importOf([{ name: 'topics/big', description: 'Big', body: big }]),
    );
    const tool = toolResult(
      await postRpc(port, call('memory_write', { name: 'topics/big', description: 'Big', new: big })),
    );

    expect(imported.status).toBe(507);
    expect(imported.headers['retry-after']).toBeUndefined();
    expect(imported.json).toEqual({ error: { code: 'STORE_FULL', message: expect.stringMatching(full) } });
    expect(tool).toEqual({ text: expect.stringMatching(full), isError: true });
    expect(await memory.index(LOCAL)).toEqual([{ name: 'topics/me', size: 11, description: 'Who I am' }]);
  });
});

describe.runIf(postgres)('PostgreSQL that cannot be reached any more', () => {
  /** A PostgreSQL store reached through a proxy the test can cut, its URL carrying a password. */
  async function postgresBehindProxy() {
    const database = await createTestDatabase(postgres!);
    onTestFinished(() => database.drop());
    const target = new URL(database.url);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const url = new URL(database.url);
    url.host = `127.0.0.1:${proxy.port}`;
    url.password = 'secret-password';
    const store = await openPostgresStore({ connectionString: url.toString() });
    const unreachable = new RegExp(
      `^cannot reach PostgreSQL at 127\\.0\\.0\\.1:${proxy.port}: .+\\. Check that the server is running and that the database URL is right\\.$`,
    );
    return { store, proxy, unreachable };
  }

  it('is answered by /api with 503 STORE_UNAVAILABLE and by /mcp with a tool error, naming host:port but no password', async () => {
    const { store, proxy, unreachable } = await postgresBehindProxy();
    const { port, memory } = await serve(store);
    await memory.write(LOCAL, { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' });

    await proxy.stop();
    const read = await api(port, 'GET', '/api/entries');
    const tool = toolResult(await postRpc(port, call('memory_open', {})));

    expect(read.status).toBe(503);
    expect(read.json).toEqual({ error: { code: 'STORE_UNAVAILABLE', message: expect.stringMatching(unreachable) } });
    expect(tool).toEqual({ text: expect.stringMatching(unreachable), isError: true });
    expect(`${read.body}${tool.text}`).not.toContain('secret-password');
  });

  it('is answered with its message when checking a token needs it: /mcp with a JSON-RPC error, /api with 503', async () => {
    const { store, proxy, unreachable } = await postgresBehindProxy();
    const { port, access } = await serve(store, 'token');
    const { token } = await access.create({ user: 'ada' });

    await proxy.stop();
    const mcp = await postRpc(port, call('memory_open', {}), { Authorization: `Bearer ${token}` });
    const read = await api(port, 'GET', '/api/entries', { token });

    expect(mcp.status).toBe(503);
    expect(rpcMessage(mcp).error?.message).toMatch(unreachable);
    expect(read.status).toBe(503);
    expect(read.json).toEqual({ error: { code: 'STORE_UNAVAILABLE', message: expect.stringMatching(unreachable) } });
  });
});
