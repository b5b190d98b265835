/**
 * Rate limits shared by every `engram serve` on one PostgreSQL database: two servers (two
 * apps in this process, each with its own pool, over one schema) hold one count per token,
 * so a client spreading its calls over both is refused once the two together pass the
 * limit; the window's end (a fake clock, Date only) lets it in again on both. The counts'
 * table lives in the store's schema and is no part of the memory: the store stays empty to
 * `engram migrate` and its dump holds nothing of it. Skipped, with a notice, where no
 * PostgreSQL is available.
 */

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { parseRateLimits, resolveRateLimits } from '../../src/access/rate-limits/rules.js';
import { createApp } from '../../src/app.js';
import { startHttpServer } from '../../src/http/server.js';
import { openPostgresStore } from '../../src/storage/postgres/index.js';
import { createPool } from '../../src/storage/postgres/pool.js';
import { PostgresRateCounters, RATE_LIMITS_TABLE } from '../../src/storage/postgres/rate-counters.js';
import {
  createTestDatabase,
  createTestSchema,
  findTestPostgres,
  queryPostgres,
  type TestDatabase,
} from '../helpers/postgres.js';
import { postRpc, rpc } from './fixtures.js';

const server = await findTestPostgres();
const START = Date.UTC(2026, 0, 1);

describe.skipIf(server === undefined)('rate limits on PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(server!);
  });
  afterAll(async () => {
    await database?.drop();
  });
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(START);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** `engram serve --auth token --rate-limit SETTING` over the schema at `url`: its port and app. */
  async function serve(url: string, setting: string) {
    const store = await openPostgresStore({ connectionString: url, max: 2 });
    const app = createApp({ store });
    const running = await startHttpServer({
      app,
      version: '0.0.0-test',
      auth: { mode: 'token' },
      host: '127.0.0.1',
      port: 0,
      log: () => {},
      rateLimits: await app.rateLimits(resolveRateLimits('token', [parseRateLimits(setting)])),
    });
    onTestFinished(async () => {
      await running.close();
      await app.close();
    });
    return { port: running.port, app };
  }

  it('holds one count per token across every server on the database, two starting at once', async () => {
    const schema = await createTestSchema(database);
    onTestFinished(() => schema.drop());
    // Started at once on a schema without the counts' table: both create it, neither fails.
    const [one, two] = await Promise.all([serve(schema.url, 'mcp=3/min'), serve(schema.url, 'mcp=3/min')]);
    const { token } = await one.app.access.create({ user: 'ada', label: 'assistant' });
    const call = (port: number) => postRpc(port, rpc('tools/list'), { Authorization: `Bearer ${token}` });
    expect((await call(one.port)).status).toBe(200);
    expect((await call(two.port)).status).toBe(200);
    vi.setSystemTime(START + 10_000);
    expect((await call(one.port)).status).toBe(200);
    const refused = await call(two.port);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('50');
    expect(refused.headers.ratelimit).toBe('"mcp";r=0;t=50');
    expect((await call(one.port)).status).toBe(429);
    vi.setSystemTime(START + 60_000);
    expect((await call(two.port)).status).toBe(200);
    expect((await call(one.port)).status).toBe(200);
  });

  it('counts a token’s MCP calls in the server and adds them to the shared count in batches', async () => {
    const schema = await createTestSchema(database);
    onTestFinished(() => schema.drop());
    const { port, app } = await serve(schema.url, 'mcp=100/min');
    const { token } = await app.access.create({ user: 'ada', label: 'assistant' });
    const points = async () =>
      (await queryPostgres<{ points: number }>(schema.url, `SELECT points FROM ${RATE_LIMITS_TABLE}`)).map(
        (row) => row.points,
      );
    const calls = () =>
      Promise.all(
        Array.from({ length: 5 }, () => postRpc(port, rpc('tools/list'), { Authorization: `Bearer ${token}` })),
      );
    expect((await calls()).map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    // The first was counted in the table before it was answered; the others follow in one batch.
    await expect.poll(points, { interval: 20 }).toEqual([5]);
    const refusing = await serve(schema.url, 'mcp=5/min');
    const refused = await postRpc(refusing.port, rpc('tools/list'), { Authorization: `Bearer ${token}` });
    expect(refused.status).toBe(429);
  });

  it('says what to do when the user it connects as may not make the counts table', async () => {
    const schema = await createTestSchema(database);
    onTestFinished(() => schema.drop());
    const role = `engram_nocreate_${Math.random().toString(36).slice(2, 10)}`;
    const schemaName = new URL(schema.url).searchParams.get('options')!.split('=')[1]!;
    await queryPostgres(database.url, `CREATE ROLE ${role} LOGIN; GRANT USAGE ON SCHEMA ${schemaName} TO ${role}`);
    onTestFinished(async () => {
      await queryPostgres(database.url, `DROP OWNED BY ${role}; DROP ROLE ${role}`);
    });
    const url = new URL(schema.url);
    url.username = role;
    const pool = createPool({ connectionString: url.toString(), max: 1 });
    onTestFinished(() => pool.end());

    await expect(
      new PostgresRateCounters(pool).counter({ name: 'mcp', points: 10, windowSeconds: 60 }),
    ).rejects.toThrow(
      /^The rate limits' table \(rate_limits\) could not be made in the PostgreSQL database: permission denied for schema .*\. Let the user Engram connects as create tables in its schema, or start engram serve with --rate-limit off/,
    );
  });

  it('keeps its counts out of the memory: the store stays empty and its dump holds none of them', async () => {
    const schema = await createTestSchema(database);
    onTestFinished(() => schema.drop());
    const { port, app } = await serve(schema.url, 'on');
    await postRpc(port, rpc('tools/list'), { Authorization: 'Bearer not-a-token' });
    const store = await openPostgresStore({ connectionString: schema.url, max: 1 });
    onTestFinished(() => store.close());
    const limits = await app.rateLimits(resolveRateLimits('token', [parseRateLimits('auth=1/min')]));
    await limits.refusal([['auth', '192.0.2.1']]);
    const rows = await queryPostgres<{ key: string }>(schema.url, `SELECT key FROM ${RATE_LIMITS_TABLE}`);
    expect(rows.length).toBeGreaterThan(0);
    // Counted under a hash: no address, user name or token is written.
    expect(rows.map((row) => row.key).join()).not.toContain('192.0.2.1');
    // Unlogged: a count waits for no WAL flush, as a durable write would.
    const [table] = await queryPostgres<{ relpersistence: string }>(
      schema.url,
      `SELECT relpersistence FROM pg_class WHERE oid = '${RATE_LIMITS_TABLE}'::regclass`,
    );
    expect(table?.relpersistence).toBe('u');
    // A count given back (a sign-in whose password was right) is taken off the same row.
    const signIns = await app.rateLimits(resolveRateLimits('token', [parseRateLimits('sign-in=1/min')]));
    for (let i = 0; i < 3; i++) {
      expect(await signIns.refusal([['sign-in', 'alice']])).toBeUndefined();
      await signIns.countingFailures(
        'sign-in',
        'alice',
        async () => 'signed in',
        () => true,
      );
    }
    expect(await signIns.refusal([['sign-in', 'alice']])).toBeUndefined();
    await expect(
      signIns.countingFailures(
        'sign-in',
        'alice',
        () => Promise.reject(new Error('wrong')),
        () => true,
      ),
    ).rejects.toThrow('wrong');
    expect(await signIns.refusal([['sign-in', 'alice']])).toMatchObject({ rule: { name: 'sign-in' } });
    expect(await store.isEmpty()).toBe(true);
    expect(await store.dump()).toMatchObject({ entries: [], users: [], tokens: [], accounts: [] });
  });
});
