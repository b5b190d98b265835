/**
 * `/readyz` asks the store, `/healthz` does not: 503 when the database goes away (a SQLite
 * file moved from its path, a PostgreSQL server cut off) or its schema is not the one this
 * Engram writes, 200 again once it is back; a probe that hangs answers 503 at its timeout,
 * and probes never pile up.
 */

import { renameSync } from 'node:fs';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createApp } from '../../src/app.js';
import { createReadiness } from '../../src/http/readiness.js';
import { startHttpServer } from '../../src/http/server.js';
import type { StorageBackend } from '../../src/storage/backend.js';
import { openPostgresStore } from '../../src/storage/postgres/index.js';
import { createTestDatabase, findTestPostgres, queryPostgres } from '../helpers/postgres.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { raw, startTestServer } from './fixtures.js';

const postgres = await findTestPostgres();

async function readyz(port: number) {
  const response = await raw(port, { path: '/readyz' });
  return { status: response.status, json: JSON.parse(response.body) as Record<string, unknown> };
}

async function serve(store: StorageBackend) {
  const app = createApp({ store });
  const logs: string[] = [];
  const server = await startHttpServer({
    app,
    version: '0.0.0-test',
    auth: { mode: 'none', user: 'local' },
    host: '127.0.0.1',
    port: 0,
    log: (line) => logs.push(line),
  });
  onTestFinished(async () => {
    await server.close();
    await app.close();
  });
  return { port: server.port, logs };
}

describe('/readyz over SQLite', () => {
  it('answers 503 while the database file is moved from its path, and 200 once it is back; /healthz stays 200', async () => {
    const server = await startTestServer();
    expect(await readyz(server.port)).toEqual({ status: 200, json: { status: 'ready' } });

    renameSync(server.db, `${server.db}.away`);
    const gone = await readyz(server.port);
    const health = await raw(server.port, { path: '/healthz' });
    renameSync(`${server.db}.away`, server.db);
    const back = await readyz(server.port);

    expect(gone).toEqual({
      status: 503,
      json: { status: 'unavailable', code: 'STORE_REPLACED', reason: expect.any(String) },
    });
    // The answer anyone may read names no path; the log has the whole reason.
    expect(JSON.stringify(gone.json)).not.toContain(server.db);
    expect(server.logs.some((line) => line.startsWith('readyz: not ready: ') && line.includes(server.db))).toBe(true);
    expect(server.logs).toContain('readyz: ready again');
    expect(health.status).toBe(200);
    expect(back).toEqual({ status: 200, json: { status: 'ready' } });
  });

  it("answers 503 while the file's schema version is not this Engram's (a newer Engram upgraded it)", async () => {
    const server = await startTestServer();
    const other = new Database(server.db);
    onTestFinished(() => {
      other.close();
    });

    other.exec('UPDATE schema_version SET version = version + 1');
    const newer = await readyz(server.port);
    other.exec('UPDATE schema_version SET version = version - 1');

    expect(newer).toEqual({
      status: 503,
      json: { status: 'unavailable', code: 'STORE_UNAVAILABLE', reason: expect.any(String) },
    });
    expect(server.logs.some((line) => /^readyz: not ready: .*a newer Engram upgraded it/.test(line))).toBe(true);
    expect(await readyz(server.port)).toEqual({ status: 200, json: { status: 'ready' } });
  });

  it('refuses other methods than GET and HEAD, and HEAD answers without a body', async () => {
    const server = await startTestServer();
    const post = await raw(server.port, { method: 'POST', path: '/readyz' });
    const head = await raw(server.port, { method: 'HEAD', path: '/readyz' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(head).toMatchObject({ status: 200, body: '' });
  });
});

describe.runIf(postgres)('/readyz over PostgreSQL', () => {
  it('answers 503 while the server is cut off and 200 once it answers again', async () => {
    const database = await createTestDatabase(postgres!);
    onTestFinished(() => database.drop());
    const target = new URL(database.url);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const url = new URL(database.url);
    url.host = `127.0.0.1:${proxy.port}`;
    const { port, logs } = await serve(await openPostgresStore({ connectionString: url.toString() }));
    expect(await readyz(port)).toEqual({ status: 200, json: { status: 'ready' } });

    proxy.cut();
    const cut = await readyz(port);
    proxy.mend();
    const mended = await readyz(port);

    expect(cut.status).toBe(503);
    expect(cut.json).toMatchObject({ status: 'unavailable' });
    expect(['STORE_UNAVAILABLE', 'TIMEOUT']).toContain(cut.json.code);
    expect(logs.some((line) => line.startsWith('readyz: not ready: '))).toBe(true);
    expect(mended).toEqual({ status: 200, json: { status: 'ready' } });
  });

  it("answers 503 while the database's schema version is not this Engram's", async () => {
    const database = await createTestDatabase(postgres!);
    onTestFinished(() => database.drop());
    const { port } = await serve(await openPostgresStore({ connectionString: database.url }));

    await queryPostgres(database.url, 'UPDATE schema_version SET version = version + 1');
    const newer = await readyz(port);
    await queryPostgres(database.url, 'UPDATE schema_version SET version = version - 1');

    expect(newer).toMatchObject({ status: 503, json: { code: 'STORE_UNAVAILABLE' } });
    expect(await readyz(port)).toEqual({ status: 200, json: { status: 'ready' } });
  });
});

describe('the readiness probe', () => {
  it('answers not ready when the store does not answer in time, and runs one probe however many ask', async () => {
    let probes = 0;
    let release: () => void = () => {};
    const hanging = new Promise<void>((resolve) => {
      release = resolve;
    });
    const logs: string[] = [];
    const readiness = createReadiness({
      probe: () => {
        probes++;
        return hanging;
      },
      timeoutMs: 5,
      log: (line) => logs.push(line),
    });

    const first = await Promise.all([readiness(), readiness(), readiness()]);
    // A later ask while the store still hangs waits on the same probe: still one.
    const later = await readiness();
    release();
    const after = await readiness();

    expect(first).toEqual(Array(3).fill({ ready: false, code: 'TIMEOUT', reason: expect.stringMatching(/5 ms/) }));
    expect(later).toMatchObject({ ready: false, code: 'TIMEOUT' });
    expect(probes).toBe(1);
    expect(after).toEqual({ ready: true });
    expect(logs).toEqual(['readyz: not ready: the database did not answer within 5 ms', 'readyz: ready again']);
  });
});
