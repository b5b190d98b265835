/**
 * Through MCP stdio: `engram stdio` against `@modelcontextprotocol/server-memory` (the
 * official MCP memory server) holding the same content, both driven by the same MCP SDK
 * v1 client in the same run, call by call in turn: append (memory_write new /
 * add_observations), open one entry (memory_open names / open_nodes), and the index
 * (memory_open() / read_graph). Also what each index costs the model in bytes.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { appendedLine, peerGraphFile, subject, subjects } from './content.js';
import { ENGRAM_CLI, engramFiles, engramFlags, seedEngram } from './engram.js';
import type { Section, Table, Target } from './report.js';
import { describeGrowth, formatInteger, formatMs, formatRatio, interleave, type Summary } from './stats.js';

type Operation = 'append' | 'open' | 'index' | 'ping';

export interface StdioOptions {
  /** Sizes measured for both servers. */
  readonly sizes: readonly number[];
  /** A size measured for Engram alone, to show its cost stays flat (the peer takes seconds per call there). */
  readonly engramOnlySize: number | undefined;
  /** Rounds of calls made back to back; in each, the peer makes one call of each operation. */
  readonly rounds: number;
  /** Rounds of calls each made after a pause of `idleMs`. */
  readonly pausedRounds: number;
  /** Engram's calls of each operation per round (more samples of its much cheaper calls). */
  readonly engramRepeats: Readonly<Record<Operation, number>>;
  /**
   * The pause before every call of the paused rounds. A model thinks between calls, so each
   * of its calls finds both processes idle; on a virtual machine a call after a pause costs
   * more than one right after another (waking an idle process and CPU, cold caches).
   */
  readonly idleMs: number;
}

export const DEFAULT_STDIO: StdioOptions = {
  sizes: [1_000, 5_000],
  engramOnlySize: 100_000,
  rounds: 30,
  pausedRounds: 15,
  engramRepeats: { append: 5, open: 5, index: 2, ping: 5 },
  idleMs: 10,
};

/** Back to back, or each call after a pause. */
type Mode = 'hot' | 'paused';

const PEER_SCRIPT = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/package.json')),
  'dist',
  'index.js',
);

interface CallResult {
  readonly content?: unknown;
  readonly isError?: boolean;
}

/** One MCP server behind the SDK v1 client; every call fails loudly if the server refuses it. */
interface Session {
  call(tool: string, args: Record<string, unknown>): Promise<CallResult>;
  /** One MCP round trip that does nothing: the floor under every call. */
  ping(): Promise<unknown>;
  close(): Promise<void>;
}

async function connect(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Session> {
  const client = new Client({ name: 'engram-bench', version: '1.0.0' });
  const childEnv = Object.fromEntries(
    Object.entries(env).filter((pair): pair is [string, string] => pair[1] !== undefined),
  );
  // The SDK refuses stdio messages over 10 MiB by default; the peer's read_graph passes that at 5,000 entries.
  const transport = new StdioClientTransport({
    command,
    args,
    env: childEnv,
    stderr: 'ignore',
    maxBufferSize: 2 ** 30,
  });
  await client.connect(transport);
  return {
    async call(tool, args) {
      const result = (await client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: 600_000,
      })) as CallResult;
      if (result.isError) throw new Error(`${tool} failed during the benchmark: ${textOf(result)}`);
      return result;
    },
    ping: () => client.ping(),
    close: () => client.close(),
  };
}

/** The text the model reads from a result. */
function textOf(result: CallResult): string {
  return ((result.content ?? []) as { text?: string }[]).map((block) => block.text ?? '').join('');
}

type Figures = Readonly<Record<Mode, Readonly<Record<Operation, Summary>>>>;

interface SizeFigures {
  readonly entries: number;
  readonly engram: Figures;
  readonly peer: Figures | undefined;
  /** Bytes of text the model reads from the index, and bytes of the whole JSON-RPC result. */
  readonly engramIndex: { readonly text: number; readonly result: number };
  readonly peerIndex: { readonly text: number; readonly result: number } | undefined;
}

let serial = 0;

/**
 * Unmeasured appends before each measurement. A server that has just started writes into a
 * new WAL file that grows with every commit, and growing a file makes each fsync dearer; once
 * the WAL has been checkpointed (1,000 pages, ~170 writes) commits reuse its blocks, as in a
 * server that has been running.
 */
const WARMUP_WRITES = 250;

/** Each operation of one server, called with the number of its call. */
type Operations = Readonly<Record<Operation, (call: number) => Promise<unknown>>>;

function engramOperations(engram: Session, entries: number, indexBytes: (result: CallResult) => void): Operations {
  const pick = (call: number, salt: number) => subject((call * 7919 + salt * 104_729) % entries).name;
  return {
    append: (call: number) => engram.call('memory_write', { name: pick(call, 1), new: appendedLine(serial++) }),
    open: (call: number) => engram.call('memory_open', { names: [pick(call, 2)] }),
    index: () => engram.call('memory_open', {}).then(indexBytes),
    ping: () => engram.ping(),
  };
}

function peerOperations(peer: Session, entries: number, indexBytes: (result: CallResult) => void): Operations {
  const pick = (call: number, salt: number) => subject((call * 7919 + salt * 104_729) % entries).name;
  return {
    append: (call: number) =>
      peer.call('add_observations', {
        observations: [{ entityName: pick(call, 1), contents: [appendedLine(serial++)] }],
      }),
    open: (call: number) => peer.call('open_nodes', { names: [pick(call, 2)] }),
    index: () => peer.call('read_graph', {}).then(indexBytes),
    ping: () => peer.ping(),
  };
}

const OPERATION_KEYS: readonly Operation[] = ['append', 'open', 'index', 'ping'];

/** `{ engram: { open: x } }` -> `{ 'engram.open': x }`, so both servers' calls interleave in one run. */
function prefixed<T>(sides: Readonly<Record<string, Readonly<Record<Operation, T>>>>): Record<string, T> {
  return Object.fromEntries(
    OPERATION_KEYS.flatMap((key) => Object.entries(sides).map(([side, values]) => [`${side}.${key}`, values[key]])),
  );
}

function sizesOf(result: CallResult) {
  return { text: Buffer.byteLength(textOf(result)), result: Buffer.byteLength(JSON.stringify(result)) };
}

async function measureSize(entries: number, withPeer: boolean, options: StdioOptions): Promise<SizeFigures> {
  const folder = mkdtempSync(join(tmpdir(), 'engram-bench-stdio-'));
  const sessions: Session[] = [];
  try {
    const list = subjects(0, entries);
    const files = engramFiles(folder);
    seedEngram(files, list);
    const engram = await connect(process.execPath, [ENGRAM_CLI, 'stdio', ...engramFlags(files)], files.env);
    sessions.push(engram);
    let engramIndex = { text: 0, result: 0 };
    let peerIndex: SizeFigures['peerIndex'];
    const engramOps = engramOperations(engram, entries, (result) => {
      engramIndex = sizesOf(result);
    });
    for (let call = 0; call < WARMUP_WRITES; call++) await engramOps.append(call);
    if (!withPeer) {
      // One index call per round: at this size each takes most of a second.
      const repeats = { ...options.engramRepeats, index: 1 };
      const hot = await interleave(engramOps, options.rounds, { repeats });
      const paused = await interleave(engramOps, options.pausedRounds, { repeats, idleMs: options.idleMs });
      return { entries, engram: { hot, paused }, peer: undefined, engramIndex, peerIndex };
    }
    const graphFile = join(folder, 'memory.jsonl');
    writeFileSync(graphFile, peerGraphFile(list));
    const peer = await connect(process.execPath, [PEER_SCRIPT], { ...process.env, MEMORY_FILE_PATH: graphFile });
    sessions.push(peer);
    const peerOps = peerOperations(peer, entries, (result) => {
      peerIndex = sizesOf(result);
    });
    const operations = prefixed<(call: number) => Promise<unknown>>({ engram: engramOps, peer: peerOps });
    const repeats = prefixed({ engram: options.engramRepeats });
    const hot = await interleave(operations, options.rounds, { repeats });
    const paused = await interleave(operations, options.pausedRounds, { repeats, idleMs: options.idleMs });
    const side = (prefix: string): Figures => {
      const pick = (summaries: Record<string, Summary>) =>
        Object.fromEntries(OPERATION_KEYS.map((key) => [key, summaries[`${prefix}.${key}`]!])) as Record<
          Operation,
          Summary
        >;
      return { hot: pick(hot), paused: pick(paused) };
    };
    return { entries, engram: side('engram'), peer: side('peer'), engramIndex, peerIndex };
  } finally {
    for (const session of sessions) await session.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

export async function benchStdio(options: StdioOptions = DEFAULT_STDIO): Promise<Section[]> {
  const figures: SizeFigures[] = [];
  for (const entries of options.sizes) figures.push(await measureSize(entries, true, options));
  if (options.engramOnlySize !== undefined) figures.push(await measureSize(options.engramOnlySize, false, options));
  return [describeLatency(figures, options), describeTokens(figures)];
}

const OPERATIONS: readonly { key: Operation; engram: string; peer: string; target?: number }[] = [
  { key: 'append', engram: 'memory_write (new)', peer: 'add_observations', target: 40 },
  { key: 'open', engram: 'memory_open([one name])', peer: 'open_nodes([one name])', target: 80 },
  { key: 'index', engram: 'memory_open()', peer: 'read_graph', target: 20 },
  { key: 'ping', engram: 'ping (the floor: one round trip)', peer: 'ping' },
];

function describeLatency(figures: readonly SizeFigures[], options: StdioOptions): Section {
  const count = (n: number) => n.toLocaleString('en-US');
  const cell = (summary: Summary | undefined) => (summary ? formatMs(summary.median) : 'not run');
  const ratio = (f: SizeFigures, mode: Mode, key: Operation) =>
    f.peer ? formatRatio(f.peer[mode][key].median / f.engram[mode][key].median) : '—';
  const table: Table = {
    title: 'Round trip through MCP stdio, median',
    header: [
      'entries',
      'operation (Engram / peer)',
      'Engram',
      'peer',
      'peer / Engram',
      `Engram, after ${options.idleMs} ms idle`,
      `peer, after ${options.idleMs} ms idle`,
      'peer / Engram',
    ],
    rows: figures.flatMap((f) =>
      OPERATIONS.map(({ key, engram, peer }) => [
        count(f.entries),
        `${engram} / ${peer}`,
        cell(f.engram.hot[key]),
        cell(f.peer?.hot[key]),
        ratio(f, 'hot', key),
        cell(f.engram.paused[key]),
        cell(f.peer?.paused[key]),
        ratio(f, 'paused', key),
      ]),
    ),
  };
  const at5k = figures.find((f) => f.entries === 5_000 && f.peer);
  const targets: Target[] = OPERATIONS.flatMap(({ key, engram, target }) => {
    if (target === undefined) return [];
    const measured = (mode: Mode) =>
      at5k?.peer ? at5k.peer[mode][key].median / at5k.engram[mode][key].median : Number.NaN;
    return [
      {
        what: `${engram} vs peer at 5,000 entries (back to back; after ${options.idleMs} ms idle)`,
        target: `≥ ${target}x faster`,
        measured: `${formatRatio(measured('hot'))}; ${formatRatio(measured('paused'))}`,
        met: Number.isNaN(measured('hot')) ? undefined : measured('hot') >= target,
      },
    ];
  });
  const first = figures[0]!;
  const last = figures[figures.length - 1]!;
  const growth = (key: Operation) => describeGrowth(first.engram.hot[key].median, last.engram.hot[key].median);
  const peerFirst = figures[0]?.peer;
  const peerLast = [...figures].reverse().find((f) => f.peer);
  const peerGrowth = (key: Operation) =>
    peerFirst && peerLast?.peer ? describeGrowth(peerFirst.hot[key].median, peerLast.peer.hot[key].median) : 'n/a';
  const floor = (f: SizeFigures, mode: Mode) => formatMs(f.engram[mode].ping.median);
  return {
    title: 'MCP stdio: Engram against the official MCP memory server',
    method:
      '`engram stdio` (SQLite, durable writes) and `@modelcontextprotocol/server-memory` (a JSONL file it reads whole ' +
      'and rewrites whole on every call), both started as child processes and driven by the same ' +
      '`@modelcontextprotocol/sdk` v1 `Client` over stdio in the same run, their calls interleaved one by one: ' +
      `${options.rounds} rounds of calls made back to back, then ${options.pausedRounds} rounds of calls each made after ` +
      `${options.idleMs} ms of idleness, as a model’s calls come after it has thought (on this virtual machine, waking an ` +
      'idle process costs some hundreds of microseconds). In each round the peer makes one call of each operation and Engram ' +
      `${options.engramRepeats.append} appends, ${options.engramRepeats.open} opens, ${options.engramRepeats.index} index calls ` +
      `and ${options.engramRepeats.ping} pings; each series starts with 10% unmeasured warm-up rounds. ` +
      'A ping is one MCP round trip that does nothing: the floor under every call. ' +
      'Both servers hold the same subjects: Engram entries of ~1 KiB in 8 lines, seeded with `engram import`; the peer one ' +
      'entity per subject, its observations the description then the 8 lines, its JSONL file written directly. ' +
      'Each append adds a new, distinct line to a different subject. ' +
      `Engram makes ${WARMUP_WRITES} unmeasured appends first, so that its WAL file has reached its working size, as in a ` +
      'server that has been running (a fresh WAL grows with every commit, which makes the first ~170 fsyncs dearer). ' +
      (options.engramOnlySize
        ? `At ${count(options.engramOnlySize)} entries only Engram is measured (one index call per round): ` +
          'the peer would take seconds per call.'
        : ''),
    tables: [table],
    targets,
    reading: [
      `From ${count(first.entries)} to ${count(last.entries)} entries (back to back) Engram's append ${growth('append')} ` +
        `and its open ${growth('open')}; its index ${growth('index')}, as its output does (one line per entry).`,
      `From ${count(first.entries)} to ${count(peerLast?.entries ?? 0)} entries the peer's append ${peerGrowth('append')}, ` +
        `its open ${peerGrowth('open')} and its read_graph ${peerGrowth('index')}: every call reads and parses the whole file, ` +
        'and every write rewrites it whole (without fsync: its writes are not durable; Engram’s are).',
      `An Engram open costs little more than the round trip itself: the ping floor is ${floor(first, 'hot')} back to back ` +
        `and ${floor(first, 'paused')} after idleness, which is what narrows the ratios in the last columns.`,
      ...overLimit(figures),
    ],
  };
}

/** The SDK client's default cap on one stdio message, which this benchmark lifts for both servers. */
const SDK_STDIO_LIMIT = 10 * 1024 * 1024;

function overLimit(figures: readonly SizeFigures[]): string[] {
  const first = figures.find((f) => f.peerIndex && f.peerIndex.result > SDK_STDIO_LIMIT);
  if (!first) return [];
  return [
    `With the SDK client’s default settings the peer’s read_graph fails outright at ${first.entries.toLocaleString('en-US')} ` +
      `entries: its answer (${(first.peerIndex!.result / 2 ** 20).toFixed(1)} MiB) is over the 10 MiB a stdio message may have ` +
      '(`maxBufferSize`); this benchmark lifts that limit for both servers.',
  ];
}

function describeTokens(figures: readonly SizeFigures[]): Section {
  const perEntry = (bytes: number, entries: number) => formatInteger(bytes / entries);
  const rows = figures
    .filter((f) => f.peerIndex)
    .map((f) => [
      f.entries.toLocaleString('en-US'),
      perEntry(f.engramIndex.text, f.entries),
      perEntry(f.peerIndex!.text, f.entries),
      formatRatio(f.peerIndex!.text / f.engramIndex.text),
      perEntry(f.engramIndex.result, f.entries),
      perEntry(f.peerIndex!.result, f.entries),
    ]);
  return {
    title: 'Tokens: what the index costs the model',
    method:
      'Bytes per entry of the text the model reads when it asks for the whole memory: Engram’s index ' +
      '(`memory_open()`, one line per entry) against the peer’s `read_graph` (its only way to see what it holds: ' +
      'every entity with every observation, as indented JSON), for the same content, from the same calls as above. ' +
      'Bytes, not tokens: token counts depend on the tokenizer, at roughly 3–4 bytes per token for English text. ' +
      'The last two columns count the whole JSON-RPC result (the peer sends the graph twice: as text and as structured content).',
    tables: [
      {
        title: 'Index bytes per entry',
        header: [
          'entries',
          'Engram index text',
          'peer read_graph text',
          'peer / Engram',
          'Engram result',
          'peer result',
        ],
        rows,
      },
    ],
    targets: [],
    reading: [
      'Engram’s index carries the name, size and description of each entry and nothing else; ' +
        'the model opens the few entries it needs. The peer has no index: to learn what it remembers, the model reads everything.',
    ],
  };
}
