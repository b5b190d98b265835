/**
 * HTTP: tool calls per second and latency at 1, 8 and 64 connections against `engram
 * serve` (SQLite, and PostgreSQL when a server is there): reads (memory_open of one
 * entry) and durable writes (append), beside a bare node:http server answering a fixed
 * body, byte for byte a read's answer — the ceiling for any server on this machine —
 * and the serial rate of raw durable commits, the limit for writes without group commit.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { appendedLine, bodyOf, subject, subjects } from './content.js';
import { ENGRAM_CLI, type EngramFiles, engramFiles, engramFlags, seedEngram } from './engram.js';
import { type LoadResult, type LoadTarget, postOnce, runLoad } from './load.js';
import { createBenchDatabase, findBenchPostgres, serialPostgresCommitRate } from './postgres.js';
import type { Section, Table, Target } from './report.js';
import { formatInteger, formatMs, formatRatio } from './stats.js';

export interface HttpOptions {
  readonly connections: readonly number[];
  readonly entries: number;
  readonly durationMs: number;
  readonly warmupMs: number;
}

export const DEFAULT_HTTP: HttpOptions = {
  connections: [1, 8, 64],
  entries: 1_000,
  durationMs: 5_000,
  warmupMs: 1_000,
};

const BARE_SERVER = fileURLToPath(new URL('./bare-server.js', import.meta.url));

/** Starts a server process and waits for the line on its stdout that says where it listens. */
function startServer(
  args: string[],
  env: NodeJS.ProcessEnv,
  portPattern: RegExp,
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start: ${output}`)), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = portPattern.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout!.resume();
        resolve({ child, port: Number(match[1]) });
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${output}`)));
  });
}

function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

const MCP_HEADERS = {
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'MCP-Protocol-Version': '2025-06-18',
};

function toolCall(serial: number, name: string, args: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id: serial, method: 'tools/call', params: { name, arguments: args } });
}

function checkToolAnswer(status: number, text: string): void {
  if (status !== 200 || !text.includes('"isError":false')) {
    throw new Error(`engram serve refused a call during the benchmark (HTTP ${status}): ${text.slice(0, 300)}`);
  }
}

/** Serial raw durable commits per second: one 1 KiB row per transaction, WAL, synchronous=FULL. */
function serialCommitRate(folder: string, durationMs: number): number {
  const db = new Database(join(folder, 'raw.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT');
    const insert = db.prepare('INSERT INTO rows (body) VALUES (?)');
    const body = bodyOf(subject(0));
    const end = performance.now() + durationMs;
    let commits = 0;
    while (performance.now() < end) {
      insert.run(body);
      commits++;
    }
    return commits / (durationMs / 1000);
  } finally {
    db.close();
  }
}

interface Backend {
  readonly label: 'SQLite' | 'SQLite without group commit' | 'PostgreSQL';
  readonly port: number;
  /** Raw durable commits per second, one after another: the rate without group commit. */
  readonly serialRate: number;
}

interface Row {
  readonly connections: number;
  readonly workload: string;
  readonly result: LoadResult;
  /** Reads: the share of the ceiling; writes: the multiple of the serial commit rate. */
  readonly ratio: string;
}

export async function benchHttp(options: HttpOptions = DEFAULT_HTTP): Promise<Section> {
  const folder = mkdtempSync(join(tmpdir(), 'engram-bench-http-'));
  const children: ChildProcess[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const start = async (files: EngramFiles) => {
    seedEngram(files, subjects(0, options.entries));
    const server = await startServer(
      [ENGRAM_CLI, 'serve', '--port', '0', ...engramFlags(files)],
      files.env,
      /serving MCP at http:\/\/127\.0\.0\.1:(\d+)\/mcp/,
    );
    children.push(server.child);
    return server.port;
  };
  try {
    const backends: Backend[] = [
      {
        label: 'SQLite',
        port: await start(engramFiles(folder)),
        serialRate: serialCommitRate(folder, SERIAL_MS),
      },
    ];
    // The same server with every write in its own commit: what group commit brings.
    backends.push({
      label: 'SQLite without group commit',
      port: await start(engramFiles(mkdtempSync(join(folder, 'solo-')), undefined, { groupCommit: false })),
      serialRate: backends[0]!.serialRate,
    });
    const postgres = await findBenchPostgres();
    if (postgres) {
      const database = await createBenchDatabase(postgres);
      cleanups.push(database.drop);
      backends.push({
        label: 'PostgreSQL',
        port: await start(engramFiles(mkdtempSync(join(folder, 'pg-')), database.url)),
        serialRate: await serialPostgresCommitRate(database.url, bodyOf(subject(0)), SERIAL_MS),
      });
    }
    const pick = (serial: number) => subject((serial * 7919) % options.entries).name;
    const reads = (port: number): LoadTarget => ({
      port,
      path: '/mcp',
      headers: MCP_HEADERS,
      body: (serial) => toolCall(serial, 'memory_open', { names: [pick(serial)] }),
      check: checkToolAnswer,
    });
    const writes = (port: number): LoadTarget => ({
      ...reads(port),
      body: (serial) => toolCall(serial, 'memory_write', { name: pick(serial), new: appendedLine(serial) }),
    });
    // The ceiling answers, byte for byte, what engram serve answers to a read.
    const sample = await postOnce(reads(backends[0]!.port), reads(0).body(0));
    checkToolAnswer(sample.status, sample.text);
    const bare = await startServer([BARE_SERVER, sample.text], process.env, /listening (\d+)/);
    children.push(bare.child);
    const ceiling: LoadTarget = { ...reads(bare.port), check: (status) => void (status === 200 || fail(status)) };

    const rows: Row[] = [];
    const measure = (target: LoadTarget, connections: number) =>
      runLoad(target, connections, options.durationMs, options.warmupMs);
    for (const connections of options.connections) {
      const top = await measure(ceiling, connections);
      rows.push({ connections, workload: 'bare node:http (ceiling)', result: top, ratio: '100%' });
      for (const backend of backends) {
        const read = await measure(reads(backend.port), connections);
        const share = `${Math.round((read.perSecond / top.perSecond) * 100)}% of ceiling`;
        rows.push({ connections, workload: `${backend.label} reads`, result: read, ratio: share });
        const write = await measure(writes(backend.port), connections);
        const multiple = `${formatRatio(write.perSecond / backend.serialRate)} serial commits`;
        rows.push({ connections, workload: `${backend.label} durable writes`, result: write, ratio: multiple });
      }
    }
    return describe(options, rows, backends, postgres !== undefined);
  } finally {
    for (const child of children) await stopServer(child);
    for (const cleanup of cleanups) await cleanup();
    rmSync(folder, { recursive: true, force: true });
  }
}

/** How long each serial commit rate is measured. */
const SERIAL_MS = 3_000;

function fail(status: number): never {
  throw new Error(`the bare server answered HTTP ${status}`);
}

function describe(
  options: HttpOptions,
  rows: readonly Row[],
  backends: readonly Backend[],
  withPostgres: boolean,
): Section {
  const table: Table = {
    title: 'Tool calls per second and latency',
    header: ['connections', 'workload', 'calls/s', 'p50', 'p99', 'against the limit'],
    rows: rows.map((row) => [
      String(row.connections),
      row.workload,
      formatInteger(row.result.perSecond),
      formatMs(row.result.latency.median),
      formatMs(row.result.latency.p99),
      row.ratio,
    ]),
  };
  const most = Math.max(...options.connections);
  const rate = (workload: string) =>
    rows.find((row) => row.connections === most && row.workload === workload)?.result.perSecond ?? Number.NaN;
  const ceiling = rate('bare node:http (ceiling)');
  const solo = 'SQLite without group commit';
  const targets: Target[] = backends
    .filter((backend) => backend.label !== solo)
    .flatMap((backend) => {
      const readShare = rate(`${backend.label} reads`) / ceiling;
      const writeGain = rate(`${backend.label} durable writes`) / backend.serialRate;
      return [
        {
          what: `${backend.label}: reads at ${most} connections / bare node:http`,
          target: '≥ 50%',
          measured: `${Math.round(readShare * 100)}%`,
          met: readShare >= 0.5,
        },
        {
          what: `${backend.label}: durable writes at ${most} connections / serial commits (${formatInteger(backend.serialRate)}/s)`,
          target: '≥ 5x',
          measured: formatRatio(writeGain),
          met: writeGain >= 5,
        },
      ];
    });
  const serialRates = backends.map((b) => `${b.label} ${formatInteger(b.serialRate)}/s`).join(', ');
  return {
    title: 'HTTP: engram serve under load',
    method:
      '`engram serve` (no auth, on loopback, logging one line per request to stderr as it does by default) holds ' +
      `${options.entries.toLocaleString('en-US')} entries of ~1 KiB seeded with \`engram import\`, on SQLite` +
      (withPostgres
        ? ' and, in a second server, on PostgreSQL (a database created for the run on the local server)'
        : '') +
      '. Each request is one stateless Streamable HTTP POST of a `tools/call`: reads open one entry, writes append a new ' +
      'line to an entry (a durable commit each). The ceiling is a bare `node:http` server in its own process answering every ' +
      'POST with a fixed body, byte for byte what Engram answers to a read. The load generator runs in the benchmark process: ' +
      'N connections, one keep-alive socket each, each sending its next request when the previous answer has fully arrived, ' +
      `${options.warmupMs / 1000} s of warm-up then ${options.durationMs / 1000} s counted, for each workload and each N in turn. ` +
      'Servers and load generator share the machine’s cores, the same way for every row. ' +
      'The serial commit rate is raw durable commits of one 1 KiB row each, one after another, on the same disk ' +
      `(better-sqlite3 in WAL mode with synchronous=FULL; node-postgres on one connection): ${serialRates}.` +
      (withPostgres ? '' : ' No PostgreSQL server answered, so PostgreSQL was not measured.'),
    tables: [table],
    targets,
    reading: [
      `Group commit at ${most} connections: SQLite durable writes ${formatInteger(rate('SQLite durable writes'))}/s with it, ` +
        `${formatInteger(rate(`${solo} durable writes`))}/s without (every write its own commit and fsync).`,
      ...backends
        .filter((backend) => backend.label !== solo)
        .map((backend) => {
          const read = rate(`${backend.label} reads`);
          const write = rate(`${backend.label} durable writes`);
          const writeGain = write / backend.serialRate;
          const why =
            writeGain >= 5
              ? 'writes that arrive together share commits.'
              : write >= 0.7 * read
                ? 'writes run nearly as fast as reads, so the work each call costs the server, not the disk, is what caps both.'
                : 'writes wait for commits of their own; group commit is what lifts them.';
          return (
            `${backend.label}: at ${most} connections reads run at ${Math.round((read / ceiling) * 100)}% of the ceiling, ` +
            `durable writes at ${formatRatio(writeGain)} the serial commit rate: ${why}`
          );
        }),
    ],
  };
}
