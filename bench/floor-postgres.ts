/**
 * The MCP floor's memory in PostgreSQL (floor-server.ts), in a database of its own: the
 * same rows as the SQLite floor (floor-sqlite.ts), on a node-postgres pool of Engram's
 * default size. An open is one indexed read of the entry's latest revision, one round
 * trip, the opens that arrive while others run going together in one statement, as
 * Engram's do (src/storage/postgres/batch.ts): fewer round trips is less work per read,
 * which a floor must count; an append is one statement that reads the head, saves a new revision, moves the
 * head and adds to the user's usage, and commits on its own: one round trip, durable
 * (synchronous_commit on) when it answers. One user's appends go one at a time in this
 * process, as Engram's do (a statement decided on the head it read must not race another
 * of the same entry), and those that arrived while one ran share one transaction and its
 * commit, as Engram's do (src/storage/postgres/shared-commit.ts): one commit for many is
 * less work, which a floor must count. Other users' run in parallel, and PostgreSQL shares
 * their fsyncs.
 */

import pg from 'pg';
import type { IndexRow } from '../src/memory/model/format.js';
import { Batcher, pairKey, pairs } from '../src/storage/postgres/batch.js';
import type { FloorEntry, FloorMemory, FloorSeed } from './floor-memory.js';

/** Engram's default pool size (src/storage/postgres/pool.ts). */
const POOL_SIZE = 10;

/** Opens of many (user, name) pairs in one statement: $1 the users, $2 the names. */
const OPEN = `SELECT e.owner, e.name, e.description, e.size, r.body
  FROM unnest($1::text[], $2::text[]) AS wanted (owner, name)
  JOIN floor_entries e ON e.owner = wanted.owner AND e.name = wanted.name
  JOIN floor_revisions r ON r.id = e.head`;

const APPEND = `WITH old AS (
    SELECT e.id, r.body FROM floor_entries e JOIN floor_revisions r ON r.id = e.head
    WHERE e.owner = $1 AND e.name = $2),
  rev AS (INSERT INTO floor_revisions (entry_id, at, body)
    SELECT id, $4, body || $3 FROM old RETURNING id, entry_id, octet_length(body) AS size),
  head AS (UPDATE floor_entries e SET head = rev.id, size = rev.size FROM rev
    WHERE e.id = rev.entry_id RETURNING e.name, e.description, e.size),
  used AS (UPDATE floor_usage SET bytes = bytes + octet_length($3) WHERE owner = $1 AND EXISTS (SELECT FROM rev))
  SELECT name, description, size FROM head`;

export async function openPostgresFloor(url: string, seed: FloorSeed): Promise<FloorMemory> {
  const pool = new pg.Pool({ connectionString: url, max: POOL_SIZE });
  pool.on('error', () => {});
  await pool.query(`
    CREATE TABLE floor_entries (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, owner text NOT NULL,
      name text NOT NULL, description text NOT NULL, head bigint NOT NULL, size integer NOT NULL, UNIQUE (owner, name));
    CREATE TABLE floor_revisions (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, entry_id bigint NOT NULL,
      at bigint NOT NULL, body text NOT NULL);
    CREATE TABLE floor_usage (owner text PRIMARY KEY, bytes bigint NOT NULL);
  `);
  const rows = seed.flatMap(({ user, entries }) => entries.map((entry) => ({ user, ...entry })));
  const column = (pick: (row: (typeof rows)[number]) => string) => rows.map(pick);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO floor_entries (owner, name, description, head, size)
        SELECT owner, name, description, 0, size FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[])
          AS seed (owner, name, description, size)`,
      [
        column((row) => row.user),
        column((row) => row.name),
        column((row) => row.description),
        rows.map((row) => row.size),
      ],
    );
    await client.query(
      `INSERT INTO floor_revisions (entry_id, at, body)
        SELECT e.id, $4, seed.body FROM unnest($1::text[], $2::text[], $3::text[]) AS seed (owner, name, body)
          JOIN floor_entries e ON e.owner = seed.owner AND e.name = seed.name`,
      [column((row) => row.user), column((row) => row.name), column((row) => row.body), Date.now()],
    );
    await client.query('UPDATE floor_entries e SET head = r.id FROM floor_revisions r WHERE r.entry_id = e.id');
    await client.query(
      'INSERT INTO floor_usage (owner, bytes) SELECT owner, sum(size) FROM floor_entries GROUP BY owner',
    );
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  await pool.query('ANALYZE');

  const appends = new SharedAppends(pool);
  // Keyed by (user, name) as Engram's reads are; each kind of read alone on half the pool at most, as Engram's.
  const opens = new Batcher<string, FloorEntry>(async (keys) => {
    const values = pairs(keys);
    const { rows } = await pool.query<FloorEntry & { owner: string }>({ name: 'floor_open', text: OPEN, values });
    const found = new Map(rows.map((row) => [pairKey(row.owner, row.name), row]));
    return (key) => found.get(key)!;
  }, POOL_SIZE / 2);
  return {
    open: (user, name) => opens.load(pairKey(user, name)),
    append: (user, name, line) => appends.append(user, [user, name, `${line}\n`, Date.now()]),
    close: () => pool.end(),
  };
}

/** Most appends one shared transaction holds, as Engram's (shared-commit.ts, MOST_SHARED). */
const MOST_SHARED = 32;

interface WaitingAppend {
  readonly values: unknown[];
  readonly resolve: (row: IndexRow) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * One user's appends, one at a time: one alone commits on its own; those that arrived
 * while another ran go together in one transaction, all answered once it commits.
 */
class SharedAppends {
  private readonly waiting = new Map<string, WaitingAppend[]>();

  constructor(private readonly pool: pg.Pool) {}

  append(user: string, values: unknown[]): Promise<IndexRow> {
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(user);
      if (queue) {
        queue.push({ values, resolve, reject });
        return;
      }
      this.waiting.set(user, [{ values, resolve, reject }]);
      void this.drain(user);
    });
  }

  private async drain(user: string): Promise<void> {
    for (let queue = this.waiting.get(user)!; queue.length > 0; ) {
      const batch = queue.splice(0, MOST_SHARED);
      try {
        const rows = batch.length === 1 ? [await this.alone(batch[0]!.values)] : await this.together(batch);
        for (const [at, append] of batch.entries()) append.resolve(rows[at]!);
      } catch (error) {
        for (const append of batch) append.reject(error);
      }
    }
    this.waiting.delete(user);
  }

  private async alone(values: unknown[]): Promise<IndexRow> {
    return (await this.pool.query<IndexRow>({ name: 'floor_append', text: APPEND, values })).rows[0]!;
  }

  private async together(batch: readonly WaitingAppend[]): Promise<IndexRow[]> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const rows: IndexRow[] = [];
      for (const { values } of batch) {
        rows.push((await client.query<IndexRow>({ name: 'floor_append', text: APPEND, values })).rows[0]!);
      }
      await client.query('COMMIT');
      return rows;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }
}
