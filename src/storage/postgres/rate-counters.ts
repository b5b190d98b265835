/**
 * Rate-limit counters in PostgreSQL (rate-limiter-flexible's RateLimiterPostgres), so that
 * every `engram serve` on one database holds one count per key: a client spreading its
 * requests over several servers is counted once.
 *
 * The counts live in their own table, `rate_limits` (key, points, expire: the shape the
 * limiter reads and writes), in the schema the connection's search_path names, as every
 * table of the store. Engram creates it, UNLOGGED, when the first limit is made: a count
 * is then written without a WAL flush, so a counted request does not wait for the disk as
 * a durable write does (a crash empties the table, which only forgets minute-old counts);
 * a concurrent creation by another server is taken as done. Not a migration: it holds no data of anyone's, only
 * counts a minute old that may be lost at any time, so it has no schema version, no
 * upgrade, and no place in a dump or a backup (DumpStore names its tables: `engram
 * migrate`, dump and isEmpty never read it). Rows whose window ended an hour ago are
 * deleted every five minutes by the limiter.
 *
 * The limits that guard load (`mcp`, `api`: rules.ts LOAD_LIMITS) are counted by each
 * server and added to the shared counts in batches (access/rate-limits/batched-counter.ts),
 * every key's in one statement (rate-tally.ts): counting every /mcp call here cost it an
 * upsert and a round trip. The guards of the sign-in doors are counted here request by
 * request, exactly across servers.
 *
 * Should the database fail to count, the request is let through: a rate limit is a guard,
 * and the request itself then meets the same database and is refused in its own words.
 */

import { RateLimiterPostgres } from 'rate-limiter-flexible';
import { BatchedCounter } from '../../access/rate-limits/batched-counter.js';
import { takeOne } from '../../access/rate-limits/memory-counters.js';
import type { RateCounter, RateCounters } from '../../access/rate-limits/port.js';
import { LOAD_LIMITS, type RateRule } from '../../access/rate-limits/rules.js';
import { EngramError } from '../../memory/model/errors.js';
import type { Pool } from './driver.js';
import { PostgresRateTally } from './rate-tally.js';

/** The table of the counts. */
export const RATE_LIMITS_TABLE = 'rate_limits';

export class PostgresRateCounters implements RateCounters {
  /** Resolves once the table exists; made with the first counter. */
  private table: Promise<void> | undefined;

  /** Every load limit's counts, added in one statement a turn. */
  private readonly tally: PostgresRateTally;

  constructor(private readonly pool: Pool) {
    this.tally = new PostgresRateTally(pool, RATE_LIMITS_TABLE);
  }

  async counter(rule: RateRule): Promise<RateCounter> {
    const options = {
      storeClient: this.pool,
      storeType: 'pool',
      tableName: RATE_LIMITS_TABLE,
      keyPrefix: rule.name,
      points: rule.points,
      duration: rule.windowSeconds,
    };
    const first = this.table === undefined;
    this.table ??= createTable(this.pool);
    await this.table;
    // The first limiter sweeps expired rows for every limit.
    const limiter = new RateLimiterPostgres({ ...options, tableCreated: true, clearExpiredByTimeout: first });
    if (LOAD_LIMITS.has(rule.name)) return new BatchedCounter(this.tally.of(rule.name, rule.windowSeconds), rule);
    return {
      take: async (key) => {
        try {
          return await takeOne(limiter, key);
        } catch {
          return { allowed: true, remaining: rule.points, resetMs: rule.windowSeconds * 1000 };
        }
      },
      giveBack: async (key) => {
        try {
          // Only within the window it was counted in: past it, the count began again without it.
          if (((await limiter.get(key))?.msBeforeNext ?? 0) > 0) await limiter.reward(key, 1);
        } catch {
          // Not given back: the key is counted one more, until its window ends.
        }
      },
    };
  }
}

/**
 * PostgreSQL's codes for a table made meanwhile by another server: duplicate table, its
 * type already there (duplicate object), or its type's unique row.
 */
const MADE_MEANWHILE = new Set(['42P07', '42710', '23505']);

async function createTable(pool: Pool): Promise<void> {
  try {
    await pool.query({
      text: `CREATE UNLOGGED TABLE IF NOT EXISTS ${RATE_LIMITS_TABLE} (
      key varchar(255) PRIMARY KEY,
      points integer NOT NULL DEFAULT 0,
      expire bigint
    )`,
    });
  } catch (error) {
    if (MADE_MEANWHILE.has((error as { code?: string }).code ?? '')) return;
    throw new EngramError(
      'STORE_UNAVAILABLE',
      `The rate limits' table (${RATE_LIMITS_TABLE}) could not be made in the PostgreSQL database: ` +
        `${(error as Error).message}. Let the user Engram connects as create tables in its schema, ` +
        'or start engram serve with --rate-limit off (and limit requests in front of it).',
    );
  }
}
