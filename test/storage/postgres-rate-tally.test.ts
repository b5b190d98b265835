/**
 * The load limits' shared counts in PostgreSQL (rate-tally.ts): every key's points that
 * arrive in one turn go in one statement, each key's caller hears its count, a key asked
 * twice in a turn is counted once with both points, a window that has ended starts again,
 * and a failing statement fails every caller of its turn. Skipped, with a notice, where
 * no PostgreSQL is available.
 */

import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Pool } from '../../src/storage/postgres/driver.js';
import { createPool } from '../../src/storage/postgres/pool.js';
import { PostgresRateCounters, RATE_LIMITS_TABLE } from '../../src/storage/postgres/rate-counters.js';
import { PostgresRateTally } from '../../src/storage/postgres/rate-tally.js';
import { createTestDatabase, createTestSchema, findTestPostgres, type TestDatabase } from '../helpers/postgres.js';

const server = await findTestPostgres();

describe.skipIf(server === undefined)('the load limits’ counts on PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(server!);
  });
  afterAll(async () => {
    await database?.drop();
  });

  /** A pool on a schema of its own with the counts' table made, and the statements sent through it. */
  async function counted(): Promise<{ pool: Pool; sent: unknown[][] }> {
    const schema = await createTestSchema(database);
    onTestFinished(() => schema.drop());
    const pool = createPool({ connectionString: schema.url, max: 2 });
    onTestFinished(() => pool.end());
    await new PostgresRateCounters(pool).counter({ name: 'auth', points: 1, windowSeconds: 60 });
    const sent: unknown[][] = [];
    const query = pool.query.bind(pool);
    pool.query = (statement) => {
      sent.push([...(statement.values ?? [])]);
      return query(statement);
    };
    return { pool, sent };
  }

  it('adds every key of a turn in one statement, in key order; a key asked twice is counted once with both', async () => {
    const { pool, sent } = await counted();
    const tally = new PostgresRateTally(pool, RATE_LIMITS_TABLE);
    const mcp = tally.of('mcp', 60);
    const api = tally.of('api', 3600);

    const counts = await Promise.all([mcp.add('b', 2), mcp.add('a', 1), api.add('a', 5), mcp.add('b', 3)]);

    expect(sent).toHaveLength(1);
    expect(sent[0]!.slice(0, 3)).toEqual([
      ['api:a', 'mcp:a', 'mcp:b'],
      [5, 1, 5],
      [3_600_000, 60_000, 60_000],
    ]);
    expect(counts.map((count) => count.used)).toEqual([5, 1, 5, 5]);
    expect(counts[0]!.resetMs).toBeGreaterThan(59_000);
    expect(counts[0]!.resetMs).toBeLessThanOrEqual(60_000);
    expect(counts[2]!.resetMs).toBeGreaterThan(3_599_000);

    // The next turn adds to what the table holds, in the same window.
    const [again] = await Promise.all([mcp.add('b', 1)]);
    expect(again).toMatchObject({ used: 6 });
    expect(again!.resetMs).toBeLessThanOrEqual(counts[0]!.resetMs);
    expect(sent).toHaveLength(2);
  });

  it('starts a new window for a key whose window has ended, and takes points back (negative)', async () => {
    const { pool } = await counted();
    const mcp = new PostgresRateTally(pool, RATE_LIMITS_TABLE).of('mcp', 60);
    await pool.query({
      text: `INSERT INTO ${RATE_LIMITS_TABLE} (key, points, expire) VALUES ('mcp:old', 40, $1)`,
      values: [Date.now() - 1],
    });

    const count = await mcp.add('old', 2);
    expect(count.used).toBe(2);
    expect(count.resetMs).toBeGreaterThan(59_000);
    expect(await mcp.add('old', -1)).toMatchObject({ used: 1 });
  });

  it('fails every caller of a turn whose statement fails', async () => {
    const schema = await createTestSchema(database);
    onTestFinished(() => schema.drop());
    const pool = createPool({ connectionString: schema.url, max: 1 });
    onTestFinished(() => pool.end());
    // No counts table in this schema: the statement fails.
    const mcp = new PostgresRateTally(pool, RATE_LIMITS_TABLE).of('mcp', 60);

    const outcomes = await Promise.allSettled([mcp.add('a', 1), mcp.add('b', 1)]);

    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/rate_limits/);
  });
});
