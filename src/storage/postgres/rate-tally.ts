/**
 * The shared counts of the load limits (`mcp`, `api`) in PostgreSQL, every key's points
 * that arrive in one turn of the event loop added in one statement. BatchedCounter sends
 * each key's requests once per sync (some 100 ms), all keys at the same moment: with one
 * statement per key, a server with 64 busy tokens sent 640 upserts a second, one round
 * trip and one backend's work each, about one for every two writes it saved. Now it is one
 * statement per sync however many tokens are busy.
 *
 * Rows and rules are rate-limiter-flexible's (rate-counters.ts): the key `rule:key`, its
 * points, and when its window ends (`expire`, ms since the epoch); points added to a
 * window that has ended start a new one. Keys are written in their sort order, so two
 * servers adding to the same keys at once take the rows' locks in one order, never each
 * waiting for the other.
 */

import type { SharedCount, SharedTally } from '../../access/rate-limits/batched-counter.js';
import type { Pool } from './driver.js';

interface Waiting {
  points: number;
  /** The window's length, for a key whose window starts now. */
  readonly durationMs: number;
  readonly settle: { resolve: (count: SharedCount) => void; reject: (error: unknown) => void }[];
}

/**
 * The statement that adds to the counts in `table`: $1 the keys (sorted, each once), $2
 * their points, $3 their windows' lengths in ms, $4 now. rate-limiter-flexible's upsert,
 * for many keys at once.
 */
const addTo = (table: string) => `INSERT INTO ${table} AS r (key, points, expire)
    SELECT k, p, $4::bigint + d FROM unnest($1::text[], $2::integer[], $3::bigint[]) AS a (k, p, d) ORDER BY k
  ON CONFLICT (key) DO UPDATE SET
    points = CASE WHEN r.expire <= $4::bigint THEN excluded.points ELSE r.points + excluded.points END,
    expire = CASE WHEN r.expire <= $4::bigint THEN excluded.expire ELSE r.expire END
  RETURNING key, points, expire`;

export class PostgresRateTally {
  private waiting = new Map<string, Waiting>();
  private scheduled = false;
  /** The statement that adds a turn's points (addTo). */
  private readonly addStatement: string;

  constructor(
    private readonly pool: Pool,
    table: string,
  ) {
    this.addStatement = addTo(table);
  }

  /** The tally of rule `name`, whose windows last `windowSeconds`: its keys are `name:key` (rate-limiter-flexible's keyPrefix). */
  of(name: string, windowSeconds: number): SharedTally {
    return { add: (key, points) => this.wait(`${name}:${key}`, points, windowSeconds * 1000) };
  }

  private wait(key: string, points: number, durationMs: number): Promise<SharedCount> {
    return new Promise((resolve, reject) => {
      const waiting = this.waiting.get(key);
      if (waiting) {
        waiting.points += points;
        waiting.settle.push({ resolve, reject });
      } else {
        this.waiting.set(key, { points, durationMs, settle: [{ resolve, reject }] });
      }
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.waiting;
    this.waiting = new Map();
    const sorted = [...batch].sort(([a], [b]) => (a < b ? -1 : 1));
    const values = [
      sorted.map(([key]) => key),
      sorted.map(([, { points }]) => points),
      sorted.map(([, { durationMs }]) => durationMs),
      Date.now(),
    ];
    try {
      const { rows } = await this.pool.query<{ key: string; points: number; expire: number | null }>({
        name: 'engram_rate_limits_add',
        text: this.addStatement,
        values,
      });
      const heard = Date.now();
      for (const row of rows) {
        const count = { used: row.points, resetMs: row.expire === null ? -1 : row.expire - heard };
        for (const { resolve } of batch.get(row.key)?.settle ?? []) resolve(count);
        batch.delete(row.key);
      }
      for (const [key, { settle }] of batch) {
        for (const { reject } of settle) reject(new Error(`the count of ${key} was not returned`));
      }
    } catch (error) {
      for (const { settle } of batch.values()) for (const { reject } of settle) reject(error);
    }
  }
}
