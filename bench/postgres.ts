/**
 * PostgreSQL for benchmarks: which server to measure ($ENGRAM_BENCH_DATABASE_URL, else
 * the local default if it answers), a database of the benchmark's own on it (dropped
 * afterwards, so the server's own databases are never written to), and the physical
 * limit for writes without group commit: raw durable commits, one after another; and a
 * connection's round trip (roundTripMs), to say how far a database is.
 */

import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { summarize } from './stats.js';

const LOCAL_DEFAULT = 'postgres://postgres@127.0.0.1:5432/postgres';

/** The server to measure, or undefined when none is named and the local default does not answer. */
export async function findBenchPostgres(): Promise<string | undefined> {
  const configured = process.env.ENGRAM_BENCH_DATABASE_URL;
  if (configured) return configured;
  const client = new pg.Client({ connectionString: LOCAL_DEFAULT, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return LOCAL_DEFAULT;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Runs one statement on a connection of its own and returns its rows. */
export async function queryBenchPostgres<Row>(url: string, sql: string, params: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as Row[];
  } finally {
    await client.end();
  }
}

export interface BenchDatabase {
  readonly url: string;
  /** Drops the database, closing whatever connections are still open to it. */
  readonly drop: () => Promise<void>;
}

/** A new, empty database `engram_bench_<random>` on the server at `serverUrl`. */
export async function createBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  const name = `engram_bench_${randomBytes(6).toString('hex')}`;
  await queryBenchPostgres(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await queryBenchPostgres(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** Serial raw durable commits per second on one connection: one row of `body` per transaction. */
export async function serialPostgresCommitRate(url: string, body: string, durationMs: number): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      'CREATE TABLE raw_rows (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body text NOT NULL)',
    );
    const end = performance.now() + durationMs;
    let commits = 0;
    while (performance.now() < end) {
      await client.query({ name: 'raw_insert', text: 'INSERT INTO raw_rows (body) VALUES ($1)', values: [body] });
      commits++;
    }
    return commits / (durationMs / 1000);
  } finally {
    await client.end();
  }
}

/** The median round trip of `SELECT 1` on one connection to `url`, in milliseconds. */
export async function roundTripMs(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const samples: number[] = [];
    for (let call = 0; call < 60; call++) {
      const start = performance.now();
      await client.query('SELECT 1');
      if (call >= 10) samples.push(performance.now() - start);
    }
    return summarize(samples).median;
  } finally {
    await client.end();
  }
}
