/**
 * The accelerators benchmark's figures in words and tables (bench/accelerators.ts
 * measures them): each accelerator on and off, as a share or multiple of its floor, and
 * what switching it on gains.
 */

import type { Section, Table, Target } from './report.js';
import { formatInteger, formatMs, formatRatio, roundRatios, spread } from './stats.js';

export const HTTP_SIDES = ['floor', 'on', 'off'] as const;
export type HttpSide = (typeof HTTP_SIDES)[number];
export const HTTP_WORKLOADS = ['reads', 'writes', 'manyUsers'] as const;
export type HttpWorkload = (typeof HTTP_WORKLOADS)[number];

export const STDIO_SIDES = ['floor', 'on', 'off'] as const;
export type StdioSide = (typeof STDIO_SIDES)[number];
export const STDIO_OPERATIONS = ['open', 'append', 'ping'] as const;
export type StdioOperation = (typeof STDIO_OPERATIONS)[number];
export type StdioMode = 'hot' | 'paused';

/** Every block's figure, in block order: calls/s over HTTP, a median round trip in ms over stdio. */
export interface AcceleratorFigures {
  readonly http: Record<HttpWorkload, Record<HttpSide, number[]>>;
  readonly stdio: Record<StdioMode, Record<StdioOperation, Record<StdioSide, number[]>>>;
}

/** What the table needs of the options the figures were measured with. */
interface Settings {
  readonly blocks: number;
  readonly entries: number;
  readonly connections: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly rounds: number;
  readonly pausedRounds: number;
  readonly idleMs: number;
}

/** DESIGN §7: each HTTP workload's share of the MCP floor, at least. */
const HTTP_GOALS: Readonly<Record<HttpWorkload, { readonly label: string; readonly share: number }>> = {
  reads: { label: 'reads', share: 0.8 },
  writes: { label: 'durable writes', share: 0.7 },
  manyUsers: { label: 'durable writes, many users', share: 0.6 },
};

/** DESIGN §7: an open over stdio costs at most this multiple of the bare floor's. */
const STDIO_OPEN_GOAL = 1.3;

const OPERATION_LABELS: Readonly<Record<StdioOperation, string>> = {
  open: 'memory_open([one name])',
  append: 'memory_write (new)',
  ping: 'ping',
};

/** The median over blocks of one side's figure divided by another's in the same block. */
function blockRatio(over: readonly number[], under: readonly number[]): number {
  return roundRatios(over, under).median;
}

const percent = (share: number) => (Number.isFinite(share) ? `${Math.round(share * 100)}%` : '—');

/** `12,345 (11,900–12,800)`: the median and the range over blocks. */
function withRange(values: readonly number[], format: (value: number) => string): string {
  if (values.length === 0) return '—';
  const { median, low, high } = spread(values);
  return `${format(median)} (${format(low)}–${format(high)})`;
}

export function describeAccelerators(figures: AcceleratorFigures, settings: Settings): Section {
  const { http, stdio } = figures;
  const httpTable: Table = {
    title: `MCP over HTTP on SQLite, ${settings.connections} connections: calls/s, median (range) of the blocks counted`,
    header: [
      'workload',
      'blocks',
      'MCP floor',
      'fast path on',
      'fast path off',
      'on / floor',
      'off / floor',
      'DESIGN §7',
      'on / off',
    ],
    rows: HTTP_WORKLOADS.map((workload) => {
      const rates = http[workload];
      return [
        HTTP_GOALS[workload].label,
        `${rates.floor.length} of ${settings.blocks}`,
        withRange(rates.floor, formatInteger),
        withRange(rates.on, formatInteger),
        withRange(rates.off, formatInteger),
        percent(blockRatio(rates.on, rates.floor)),
        percent(blockRatio(rates.off, rates.floor)),
        `≥ ${percent(HTTP_GOALS[workload].share)}`,
        formatRatio(blockRatio(rates.on, rates.off)),
      ];
    }),
  };
  const stdioTable: Table = {
    title: `MCP stdio: round trip, median over ${settings.blocks} blocks of each block's median`,
    header: [
      'operation',
      'calls',
      'bare floor',
      'fast path on',
      'fast path off',
      'on / floor',
      'off / floor',
      'off / on',
    ],
    rows: (['hot', 'paused'] as const).flatMap((mode) =>
      STDIO_OPERATIONS.map((operation) => {
        const times = stdio[mode][operation];
        const floor = times.floor.length > 0;
        return [
          OPERATION_LABELS[operation],
          mode === 'hot' ? 'back to back' : `after ${settings.idleMs} ms idle`,
          floor ? withRange(times.floor, formatMs) : '—',
          withRange(times.on, formatMs),
          withRange(times.off, formatMs),
          floor ? formatRatio(blockRatio(times.on, times.floor)) : '—',
          floor ? formatRatio(blockRatio(times.off, times.floor)) : '—',
          formatRatio(blockRatio(times.off, times.on)),
        ];
      }),
    ),
  };
  const targets: Target[] = [
    ...HTTP_WORKLOADS.flatMap((workload) =>
      (['on', 'off'] as const).map((side) => {
        const share = blockRatio(http[workload][side], http[workload].floor);
        return {
          what: `HTTP ${HTTP_GOALS[workload].label} / MCP floor, fast path ${side}`,
          target: `≥ ${percent(HTTP_GOALS[workload].share)}`,
          measured: percent(share),
          met: share >= HTTP_GOALS[workload].share,
        };
      }),
    ),
    ...(['on', 'off'] as const).map((side) => {
      const ratios = (['hot', 'paused'] as const).map((mode) =>
        blockRatio(stdio[mode].open[side], stdio[mode].open.floor),
      );
      return {
        what: `stdio memory_open([one name]) / bare floor, fast path ${side} (back to back; after ${settings.idleMs} ms idle)`,
        target: `≤ ${STDIO_OPEN_GOAL}x`,
        measured: ratios.map(formatRatio).join('; '),
        met: ratios.every((ratio) => ratio <= STDIO_OPEN_GOAL),
      };
    }),
  ];
  return {
    title: 'Accelerators: each switched on and off, against its floor',
    method:
      'Each accelerator of the MCP door (docs/accelerators.md) measured with its switch on and off, side by side in ' +
      'one run: two servers from the same build on databases seeded alike with ' +
      `${settings.entries.toLocaleString('en-US')} entries of ~1 KiB, one started with the accelerator’s variable set ` +
      'to 0. The figures are taken in blocks, every side measured in each block, its turn rotating from block to block, ' +
      'so that a slow spell of a shared machine falls on every side; each cell is the median over the blocks (with their ' +
      'range), and each ratio the median of the blocks’ ratios. An HTTP block counts only when every side was measured ' +
      'with none refused and at most one request per connection unanswered (on a machine busy with other work, ' +
      'autocannon counted up to one per connection failed, in flight as a run stopped). HTTP: the workloads of the HTTP benchmark (reads open ' +
      'one entry, writes append a durable line, many users each write with a token of their own), from autocannon in a ' +
      `process of its own at ${settings.connections} connections, ${settings.warmupMs / 1000} s of warm-up then ` +
      `${settings.durationMs / 1000} s counted per side per workload per block, against the MCP floor on SQLite ` +
      '(floor-server.ts). stdio: the same SDK v1 client as the stdio benchmark, calls interleaved one each in turn, ' +
      `${settings.rounds} rounds back to back then ${settings.pausedRounds} after ${settings.idleMs} ms of idleness per ` +
      'block (10% more unmeasured first), against the bare JSON-RPC stdio server answering an open’s text.',
    tables: [httpTable, stdioTable],
    targets,
    reading: [],
  };
}
