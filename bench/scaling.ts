/**
 * The PostgreSQL figures of docs/scaling.md, run by hand (not part of `npm run bench`):
 * on a database of its own, created on the server that findBenchPostgres picks and
 * dropped at the end, it measures
 *   - a durable write through the Memory service, beside one raw durable commit of a row
 *     of the same size, and beside the same write on SQLite on the same machine;
 *   - concurrent writes: one user (serialised by the user's row lock) against many users
 *     (in parallel), through one store and through two (as two servers);
 *   - the index of 10,000 entries, before and after VACUUM sets the visibility map;
 *   - what a purge leaves in the data files and the WAL, and what VACUUM and VACUUM FULL
 *     do about it.
 *
 *   npm run build && npx tsc -p tsconfig.bench.json && node dist-bench/bench/scaling.js
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createMemory, type Memory } from '../src/memory/memory.js';
import { openPostgresStore, type PostgresStore } from '../src/storage/postgres/index.js';
import { SQL } from '../src/storage/postgres/statements.js';
import { openSqliteStore } from '../src/storage/sqlite/index.js';
import { bodyOf, subject } from './content.js';
import { createBenchDatabase, findBenchPostgres, queryBenchPostgres as sql } from './postgres.js';
import { formatInteger, formatMs, interleave, type Summary, summarize } from './stats.js';

const WRITERS = 32;
const WRITES_EACH = 20;
const INDEX_ENTRIES = 10_000;
const BODY = bodyOf(subject(0));

function line(label: string, summary: Summary): string {
  return `| ${label} | ${formatMs(summary.median)} | ${formatMs(summary.p99)} |`;
}

function postgresMemory(store: PostgresStore): Memory {
  return createMemory({ store, policy: { userCap: 2 ** 40, maxEntries: 2 ** 30 } });
}

/** Durable writes, one at a time: Engram on PostgreSQL, one raw commit, Engram on SQLite. */
async function durableWrites(url: string, memory: Memory): Promise<string[]> {
  const raw = new pg.Client({ connectionString: url });
  await raw.connect();
  await raw.query('CREATE TABLE raw_rows (id bigint PRIMARY KEY, body text NOT NULL)');
  const folder = mkdtempSync(join(tmpdir(), 'engram-bench-pg-'));
  const sqlite = createMemory({ store: openSqliteStore({ path: join(folder, 'm.db') }) });
  const write = (target: Memory, call: number) =>
    target.write({ user: 'serial', label: 'bench' }, { name: `topics/w${call}`, description: 'bench', new: BODY });
  try {
    const figures = await interleave(
      {
        raw: (call) => raw.query('INSERT INTO raw_rows (id, body) VALUES ($1, $2)', [call, BODY]),
        postgres: (call) => write(memory, call),
        sqlite: (call) => write(sqlite, call),
      },
      300,
    );
    return [
      '| one write at a time, ~1 KiB | median | p99 |',
      '|---|---|---|',
      line('raw PostgreSQL commit of one row (INSERT, autocommit)', figures.raw),
      line('Engram memory_write on PostgreSQL (create)', figures.postgres),
      line('Engram memory_write on SQLite, same machine (create)', figures.sqlite),
    ];
  } finally {
    await raw.end();
    await sqlite.store.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

/** Writes per second of WRITERS writers, WRITES_EACH creates each, spread over `memories` (servers). */
async function writeRate(memories: readonly Memory[], userOf: (writer: number) => string, run: string) {
  const start = performance.now();
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, writer) => {
      const memory = memories[writer % memories.length]!;
      for (let i = 0; i < WRITES_EACH; i++) {
        const name = `topics/${run}-${writer}-${i}`;
        await memory.write({ user: userOf(writer), label: 'bench' }, { name, description: 'bench', new: BODY });
      }
    }),
  );
  return (WRITERS * WRITES_EACH) / ((performance.now() - start) / 1000);
}

async function concurrentWrites(url: string): Promise<string[]> {
  const one = await openPostgresStore({ connectionString: url, max: WRITERS });
  const halves = await Promise.all([0, 1].map(() => openPostgresStore({ connectionString: url, max: WRITERS / 2 })));
  const single = [postgresMemory(one)];
  const pair = halves.map(postgresMemory);
  const rates: Record<string, number[]> = { serial: [], oneUser: [], manyUsers: [], twoServers: [] };
  try {
    for (let round = 0; round < 3; round++) {
      const serial = await openPostgresStore({ connectionString: url, max: 1 });
      rates.serial!.push(await writeRate([postgresMemory(serial)], () => 'solo', `s${round}`));
      await serial.close();
      rates.oneUser!.push(await writeRate(single, () => 'team', `o${round}`));
      rates.manyUsers!.push(await writeRate(single, (writer) => `user${writer}`, `m${round}`));
      rates.twoServers!.push(await writeRate(pair, (writer) => `user${writer}`, `t${round}`));
    }
  } finally {
    await Promise.all([one, ...halves].map((store) => store.close()));
  }
  const median = (values: number[]) => formatInteger(summarize(values).median);
  return [
    `| ${WRITERS} writers × ${WRITES_EACH} creates of ~1 KiB | writes/s (median of 3) |`,
    '|---|---|',
    `| one connection, one write at a time (the serial rate) | ${median(rates.serial!)} |`,
    `| ${WRITERS} writers, all one user (queue on the user's row lock) | ${median(rates.oneUser!)} |`,
    `| ${WRITERS} writers, ${WRITERS} users, one server (pool of ${WRITERS}) | ${median(rates.manyUsers!)} |`,
    `| ${WRITERS} writers, ${WRITERS} users, two servers (pools of ${WRITERS / 2}) | ${median(rates.twoServers!)} |`,
  ];
}

/** How PostgreSQL answers the index query: the scan, and how many table pages it still had to read. */
async function heapFetches(url: string): Promise<string> {
  const plan = await sql<{ 'QUERY PLAN': string }>(url, `EXPLAIN (ANALYZE, COSTS OFF) ${SQL.index}`, ['indexed']);
  const text = plan.map((row) => row['QUERY PLAN']).join('\n');
  const scan = /(Index Only Scan|Index Scan|Bitmap Heap Scan|Seq Scan)/.exec(text)?.[1] ?? 'unknown plan';
  const fetches = /Heap Fetches: (\d+)/.exec(text)?.[1];
  const took = /Execution Time: ([\d.]+) ms/.exec(text)?.[1];
  return `${scan}${fetches === undefined ? '' : `, ${fetches} heap fetches`}, ${took} ms in the server`;
}

async function indexLatency(url: string, memory: Memory): Promise<string[]> {
  await memory.store.mutateAll(
    { user: 'indexed', label: 'bench' },
    () =>
      Array.from({ length: INDEX_ENTRIES }, (_, index) => {
        const item = subject(index);
        const change = { kind: 'put', operation: 'create', description: item.description, body: bodyOf(item) } as const;
        return { name: item.name, change };
      }),
    memory.rules,
  );
  await sql(url, 'ANALYZE');
  const caller = { user: 'indexed', label: 'bench' };
  const time = () => interleave({ index: () => memory.index(caller) }, 200);
  const before = { plan: await heapFetches(url), figures: await time() };
  await sql(url, 'VACUUM entries');
  const after = { plan: await heapFetches(url), figures: await time() };
  return [
    `| memory_open() index, ${formatInteger(INDEX_ENTRIES)} entries of ~1 KiB | median | p99 | plan |`,
    '|---|---|---|---|',
    `| just written (visibility map not yet set) | ${formatMs(before.figures.index.median)} | ${formatMs(before.figures.index.p99)} | ${before.plan} |`,
    `| after VACUUM (what autovacuum keeps) | ${formatMs(after.figures.index.median)} | ${formatMs(after.figures.index.p99)} | ${after.plan} |`,
  ];
}

/** How many times `marker` occurs in the data files of `tables` and in the WAL segments on disk. */
async function copiesOf(url: string, marker: string, tables: readonly string[]) {
  await sql(url, 'CHECKPOINT');
  const count = async (path: string) => {
    const [row] = await sql<{ data: Buffer }>(url, 'SELECT pg_read_binary_file($1) AS data', [path]);
    let found = 0;
    for (let at = row!.data.indexOf(marker); at >= 0; at = row!.data.indexOf(marker, at + 1)) found++;
    return found;
  };
  let data = 0;
  for (const table of tables) {
    const [file] = await sql<{ path: string }>(url, 'SELECT pg_relation_filepath($1) AS path', [table]);
    data += await count(file!.path);
  }
  let wal = 0;
  for (const { name } of await sql<{ name: string }>(url, 'SELECT name FROM pg_ls_waldir()')) {
    if (/^[0-9A-F]{24}$/.test(name)) wal += await count(`pg_wal/${name}`);
  }
  return `${data} in the table files, ${wal} in the WAL`;
}

async function purgeLeftovers(url: string, store: PostgresStore): Promise<string[]> {
  const marker = `purge-marker-${randomBytes(6).toString('hex')}`;
  const memory = postgresMemory(store);
  const caller = { user: 'forgetful', label: 'bench' };
  await memory.write(caller, { name: 'topics/secret', description: 'secret', new: `${marker} one` });
  await memory.write(caller, { name: 'topics/secret', new: `${marker} two` });
  const tables = ['entries', 'revisions'];
  const rows = [['written (2 revisions)', await copiesOf(url, marker, tables)]];
  await store.purge('forgetful', 'topics/secret', { includeLive: true });
  rows.push(['purged (rows deleted, committed)', await copiesOf(url, marker, tables)]);
  await sql(url, 'VACUUM entries');
  await sql(url, 'VACUUM revisions');
  rows.push(['after VACUUM', await copiesOf(url, marker, tables)]);
  await sql(url, 'VACUUM FULL entries');
  await sql(url, 'VACUUM FULL revisions');
  rows.push(['after VACUUM FULL', await copiesOf(url, marker, tables)]);
  return ['| a purged entry’s text | copies found on disk |', '|---|---|', ...rows.map(([a, b]) => `| ${a} | ${b} |`)];
}

async function main(): Promise<void> {
  const server = await findBenchPostgres();
  if (!server) throw new Error('no PostgreSQL server answered: set ENGRAM_BENCH_DATABASE_URL');
  const database = await createBenchDatabase(server);
  const url = database.url;
  const store = await openPostgresStore({ connectionString: url, max: WRITERS });
  try {
    const [settings] = await sql<Record<string, string>>(
      url,
      "SELECT current_setting('server_version') AS version, current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS synchronous_commit, current_setting('shared_buffers') AS shared_buffers",
    );
    const sections = [
      [
        `PostgreSQL ${settings!.version}, fsync=${settings!.fsync}, synchronous_commit=${settings!.synchronous_commit}, shared_buffers=${settings!.shared_buffers}; Node ${process.version}`,
      ],
      await durableWrites(url, postgresMemory(store)),
      await concurrentWrites(url),
      await indexLatency(url, postgresMemory(store)),
      await purgeLeftovers(url, store),
    ];
    process.stdout.write(`${sections.map((section) => section.join('\n')).join('\n\n')}\n`);
  } finally {
    await store.close();
    await database.drop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
