/**
 * The two SQLite drivers side by side (DESIGN §4): better-sqlite3, the native addon, on the
 * Node running the benchmark, and Node's built-in node:sqlite on Node 22 (the `node@22`
 * npm package, as `npm run test:node-sqlite` gets it: scripts/node-binaries.mjs). Each
 * runs in a child process of its own (sqlite-driver-child.ts) on its own file, seeded alike;
 * they are given blocks of calls in turn, the order swapped every block, so both see the
 * same machine. What a user picks between is exactly this pair: the addon where it builds,
 * the built-in driver where it does not (Node 22 with --omit=optional, the Claude Desktop
 * bundle, the container image). The Node versions differ with the drivers, and say so.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Section, Table } from './report.js';
import { formatMs, formatRatio, type Summary, summarize } from './stats.js';

export interface SqliteDriversOptions {
  readonly entries: number;
  /** Blocks of calls per driver, taken in turn. */
  readonly blocks: number;
  /** Rounds (an append, an open, the index) per block. */
  readonly rounds: number;
}

export const DEFAULT_SQLITE_DRIVERS: SqliteDriversOptions = { entries: 10_000, blocks: 10, rounds: 100 };
export const QUICK_SQLITE_DRIVERS: SqliteDriversOptions = { entries: 1_000, blocks: 2, rounds: 30 };

/** The Node 22 the node:sqlite side runs on: the oldest line the driver supports. */
const NODE_22 = '22.23.3';
const CHILD = fileURLToPath(new URL('./sqlite-driver-child.js', import.meta.url));
const NODE_BINARIES = new URL('../../scripts/node-binaries.mjs', import.meta.url).href;

type Operation = 'append' | 'open' | 'index';
const OPERATIONS: readonly Operation[] = ['append', 'open', 'index'];
const WHAT: Record<Operation, string> = {
  append: 'memory_write (new): a durable append',
  open: 'memory_open([one name])',
  index: 'memory_open(): the index',
};

interface Side {
  readonly label: string;
  readonly child: ChildProcess;
  readonly lines: AsyncIterableIterator<string>;
  readonly samples: Record<Operation, number[]>;
}

async function nextLine(side: { lines: AsyncIterableIterator<string>; label: string }): Promise<string> {
  const next = await side.lines.next();
  if (next.done) throw new Error(`the ${side.label} side of the drivers benchmark stopped`);
  return next.value;
}

async function startSide(node: string, driver: string, path: string, entries: number): Promise<Side> {
  const child = spawn(node, [CHILD, driver, path, String(entries)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = (createInterface({ input: child.stdout! }) as Interface)[Symbol.asyncIterator]();
  const ready = JSON.parse(await nextLine({ lines, label: driver })) as { driver: string; node: string };
  if (ready.driver !== driver) throw new Error(`asked for ${driver}, the store opened ${ready.driver}`);
  return {
    label: `${driver === 'node' ? 'node:sqlite' : driver} (Node ${ready.node.slice(1)})`,
    child,
    lines,
    samples: { append: [], open: [], index: [] },
  };
}

export async function benchSqliteDrivers(options: SqliteDriversOptions = DEFAULT_SQLITE_DRIVERS): Promise<Section> {
  const { nodeBinary } = (await import(NODE_BINARIES)) as { nodeBinary: (version: string) => string };
  const folder = mkdtempSync(join(tmpdir(), 'engram-bench-drivers-'));
  const sides: Side[] = [];
  try {
    sides.push(await startSide(process.execPath, 'better-sqlite3', join(folder, 'addon.db'), options.entries));
    sides.push(await startSide(nodeBinary(NODE_22), 'node', join(folder, 'builtin.db'), options.entries));
    // One unmeasured block each first: both warm.
    for (let block = -1; block < options.blocks; block++) {
      for (const side of block % 2 === 0 ? sides : [...sides].reverse()) {
        side.child.stdin!.write(`${JSON.stringify({ rounds: options.rounds, from: (block + 1) * options.rounds })}\n`);
        const samples = JSON.parse(await nextLine(side)) as Record<Operation, number[]>;
        if (block >= 0) for (const operation of OPERATIONS) side.samples[operation].push(...samples[operation]);
      }
    }
  } finally {
    for (const side of sides) side.child.stdin!.end();
    await Promise.all(sides.map((side) => new Promise((resolve) => side.child.once('exit', resolve))));
    rmSync(folder, { recursive: true, force: true });
  }
  const [addon, builtin] = sides as [Side, Side];
  const summaries = (side: Side) =>
    Object.fromEntries(OPERATIONS.map((operation) => [operation, summarize(side.samples[operation])])) as Record<
      Operation,
      Summary
    >;
  const a = summaries(addon);
  const b = summaries(builtin);
  const table: Table = {
    title: 'The same calls on each driver (median / p99)',
    header: ['operation', addon.label, builtin.label, 'node:sqlite / better-sqlite3'],
    rows: OPERATIONS.map((operation) => [
      WHAT[operation],
      `${formatMs(a[operation].median)} / ${formatMs(a[operation].p99)}`,
      `${formatMs(b[operation].median)} / ${formatMs(b[operation].p99)}`,
      formatRatio(b[operation].median / a[operation].median),
    ]),
  };
  return {
    title: 'SQLite drivers: better-sqlite3 and node:sqlite',
    method:
      `Two stores of ${options.entries.toLocaleString('en-US')} entries of ~1 KiB, each in a process of its own: ` +
      `${addon.label} and ${builtin.label} (from the node@${NODE_22} npm package). Each call goes through the tool ` +
      `handler, as in the in-process section. ${options.blocks} blocks of ${options.rounds} rounds (an append, an ` +
      'open, the index) per driver, taken in turn, the order swapped every block, after one unmeasured block each.',
    tables: [table],
    targets: [],
    reading: [
      'The drivers differ in Node version too: the pair is what a user gets, better-sqlite3 where the addon ' +
        'builds (Node 20 here), node:sqlite where it does not.',
    ],
  };
}
