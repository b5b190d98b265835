/**
 * Through MCP stdio: `engram stdio` against `@modelcontextprotocol/server-memory` (the
 * official MCP memory server) holding the same content, both driven by the same MCP SDK
 * v1 client in the same run, one call each in turn, both warm, then the same after
 * idleness: append (memory_write new / add_observations), open one entry (memory_open
 * names / open_nodes), and the index (memory_open() / read_graph). Beside them the floor:
 * a bare JSON-RPC stdio server (no SDK) answering text of an open's size to the same
 * client. Also what each index costs the model in bytes.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
  /** Rounds of calls made back to back; in each, every server makes one call of each operation. */
  readonly rounds: number;
  /** Rounds of calls each made after a pause of `idleMs`. */
  readonly pausedRounds: number;
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
  rounds: 60,
  pausedRounds: 30,
  idleMs: 10,
};

/** `npm run bench -- --quick`: every row, briefly, at one small size. */
export const QUICK_STDIO: StdioOptions = {
  sizes: [1_000],
  engramOnlySize: undefined,
  rounds: 20,
  pausedRounds: 10,
  idleMs: 10,
};

/** Back to back, or each call after a pause. */
type Mode = 'hot' | 'paused';

const BARE_SERVER = fileURLToPath(new URL('./bare-stdio-server.js', import.meta.url));

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

/**
 * Each server measured: Engram, Engram with its stdio fast path switched off (every request
 * through the SDK, ENGRAM_STDIO_FAST_PATH=0: the "before"), the official memory server (the
 * peer), the bare JSON-RPC floor.
 */
type Side = 'engram' | 'sdkOnly' | 'peer' | 'bare';

type Figures = Readonly<Record<Mode, Readonly<Partial<Record<Operation, Summary>>>>>;

interface SizeFigures {
  readonly entries: number;
  readonly sides: Readonly<Partial<Record<Side, Figures>>>;
  /** Bytes of text the model reads from the index, and bytes of the whole JSON-RPC result. */
  readonly engramIndex: { readonly text: number; readonly result: number };
  readonly peerIndex: { readonly text: number; readonly result: number } | undefined;
  /** Bytes of text in an Engram open of one entry, which the bare server answers with. */
  readonly openText: number;
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
type Operations = Readonly<Partial<Record<Operation, (call: number) => Promise<unknown>>>>;

function engramOperations(engram: Session, entries: number, indexBytes: (result: CallResult) => void) {
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

/** The bare floor answers an open (any tools/call, with text of an open's size) and a ping. */
function bareOperations(bare: Session): Operations {
  return { open: () => bare.call('open', {}), ping: () => bare.ping() };
}

const OPERATION_KEYS: readonly Operation[] = ['append', 'open', 'index', 'ping'];

/** `{ engram: { open: x } }` -> `{ 'engram.open': x }`, so every server's calls interleave in one run, one each. */
function prefixed<T>(sides: Readonly<Partial<Record<Side, Readonly<Partial<Record<Operation, T>>>>>>) {
  return Object.fromEntries(
    OPERATION_KEYS.flatMap((key) =>
      Object.entries(sides).flatMap(([side, values]) => {
        const value = values?.[key];
        return value === undefined ? [] : [[`${side}.${key}`, value]];
      }),
    ),
  ) as Record<string, T>;
}

/** `{ 'engram.open': x }` -> the figures of each side. */
function bySide(hot: Record<string, Summary>, paused: Record<string, Summary>, sides: readonly Side[]) {
  const pick = (summaries: Record<string, Summary>, side: Side) =>
    Object.fromEntries(
      OPERATION_KEYS.flatMap((key) => {
        const summary = summaries[`${side}.${key}`];
        return summary === undefined ? [] : [[key, summary]];
      }),
    ) as Partial<Record<Operation, Summary>>;
  return Object.fromEntries(
    sides.map((side) => [side, { hot: pick(hot, side), paused: pick(paused, side) }]),
  ) as Partial<Record<Side, Figures>>;
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
    // The last index each server answered, kept as it is: its size is counted after the timing, not inside it.
    let engramIndex: CallResult | undefined;
    let peerIndex: CallResult | undefined;
    const engramOps = engramOperations(engram, entries, (result) => {
      engramIndex = result;
    });
    for (let call = 0; call < WARMUP_WRITES; call++) await engramOps.append(call);
    const openText = Buffer.byteLength(textOf((await engramOps.open(0)) as CallResult));
    const bare = await connect(process.execPath, [BARE_SERVER, String(openText)], process.env);
    sessions.push(bare);
    // The same server on a database of its own, seeded alike, with the fast path off.
    const sdkFiles = engramFiles(mkdtempSync(join(folder, 'sdk-only-')));
    seedEngram(sdkFiles, list);
    const sdkOnly = await connect(process.execPath, [ENGRAM_CLI, 'stdio', ...engramFlags(sdkFiles)], {
      ...sdkFiles.env,
      ENGRAM_STDIO_FAST_PATH: '0',
    });
    sessions.push(sdkOnly);
    const sdkOnlyOps = engramOperations(sdkOnly, entries, () => {});
    for (let call = 0; call < WARMUP_WRITES; call++) await sdkOnlyOps.append(call);
    const sides: Partial<Record<Side, Operations>> = {
      engram: engramOps,
      sdkOnly: sdkOnlyOps,
      bare: bareOperations(bare),
    };
    if (withPeer) {
      const graphFile = join(folder, 'memory.jsonl');
      writeFileSync(graphFile, peerGraphFile(list));
      const peer = await connect(process.execPath, [PEER_SCRIPT], { ...process.env, MEMORY_FILE_PATH: graphFile });
      sessions.push(peer);
      sides.peer = peerOperations(peer, entries, (result) => {
        peerIndex = result;
      });
    }
    const operations = prefixed<(call: number) => Promise<unknown>>(sides);
    // Operation by operation, the servers' turns rotating each round: none always follows the same one.
    const order = (round: number) =>
      OPERATION_KEYS.flatMap((key) => {
        const names = Object.keys(sides).filter((side) => `${side}.${key}` in operations);
        const start = round % names.length;
        return [...names.slice(start), ...names.slice(0, start)].map((side) => `${side}.${key}`);
      });
    const hot = await interleave(operations, options.rounds, { order });
    const paused = await interleave(operations, options.pausedRounds, { idleMs: options.idleMs, order });
    return {
      entries,
      sides: bySide(hot, paused, Object.keys(sides) as Side[]),
      engramIndex: engramIndex ? sizesOf(engramIndex) : { text: 0, result: 0 },
      peerIndex: peerIndex && sizesOf(peerIndex),
      openText,
    };
  } finally {
    for (const session of sessions) await session.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

export async function benchStdio(options: StdioOptions = DEFAULT_STDIO): Promise<Section[]> {
  const figures: SizeFigures[] = [];
  for (const entries of options.sizes) figures.push(await measureSize(entries, true, options));
  if (options.engramOnlySize !== undefined) figures.push(await measureSize(options.engramOnlySize, false, options));
  return [describeLatency(figures, options), describeFastPath(figures, options), describeTokens(figures)];
}

const OPERATIONS: readonly { key: Operation; engram: string; peer: string; target?: number }[] = [
  { key: 'append', engram: 'memory_write (new)', peer: 'add_observations', target: 40 },
  { key: 'open', engram: 'memory_open([one name])', peer: 'open_nodes([one name])', target: 40 },
  { key: 'index', engram: 'memory_open()', peer: 'read_graph', target: 40 },
  { key: 'ping', engram: 'ping (one round trip)', peer: 'ping' },
];

/** DESIGN §7: an open costs at most this multiple of the bare JSON-RPC floor's answer of the same size. */
const FLOOR_TARGET = 1.3;

function describeLatency(figures: readonly SizeFigures[], options: StdioOptions): Section {
  const count = (n: number) => n.toLocaleString('en-US');
  const median = (f: SizeFigures, side: Side, mode: Mode, key: Operation) => f.sides[side]?.[mode][key]?.median;
  const cell = (value: number | undefined) => (value === undefined ? '—' : formatMs(value));
  const ratio = (over: number | undefined, under: number | undefined) =>
    over === undefined || under === undefined ? '—' : formatRatio(over / under);
  const columns = (f: SizeFigures, mode: Mode, key: Operation) => {
    const engram = median(f, 'engram', mode, key);
    const bare = median(f, 'bare', mode, key);
    const peer = median(f, 'peer', mode, key);
    return [cell(engram), cell(bare), ratio(engram, bare), cell(peer), ratio(peer, engram)];
  };
  const idle = `after ${options.idleMs} ms idle`;
  const table: Table = {
    title: 'Round trip through MCP stdio, median',
    header: [
      'entries',
      'operation (Engram / peer)',
      'Engram',
      'bare floor',
      'Engram / floor',
      'peer',
      'peer / Engram',
      `Engram, ${idle}`,
      `floor, ${idle}`,
      'Engram / floor',
      `peer, ${idle}`,
      'peer / Engram',
    ],
    rows: figures.flatMap((f) =>
      OPERATIONS.map(({ key, engram, peer }) => [
        count(f.entries),
        `${engram} / ${peer}`,
        ...columns(f, 'hot', key),
        ...columns(f, 'paused', key),
      ]),
    ),
  };
  const at5k = figures.find((f) => f.entries === 5_000 && f.sides.peer);
  const peerTargets: Target[] = OPERATIONS.flatMap(({ key, engram, target }) => {
    if (target === undefined) return [];
    const measured = (mode: Mode) => {
      const peer = at5k && median(at5k, 'peer', mode, key);
      const ours = at5k && median(at5k, 'engram', mode, key);
      return peer === undefined || ours === undefined ? Number.NaN : peer / ours;
    };
    return [
      {
        what: `${engram} vs peer at 5,000 entries (both warm, back to back; after ${options.idleMs} ms idle)`,
        target: `≥ ${target}x faster`,
        measured: `${formatRatio(measured('hot'))}; ${formatRatio(measured('paused'))}`,
        met: Number.isNaN(measured('hot')) ? undefined : measured('hot') >= target,
      },
    ];
  });
  const worstFloor = (mode: Mode) =>
    Math.max(
      ...figures.map((f) => (median(f, 'engram', mode, 'open') ?? Number.NaN) / (median(f, 'bare', mode, 'open') ?? 1)),
    );
  const targets: Target[] = [
    ...peerTargets,
    {
      what: `memory_open([one name]) / bare JSON-RPC floor, worst size (back to back; after ${options.idleMs} ms idle)`,
      target: `≤ ${FLOOR_TARGET}x`,
      measured: `${formatRatio(worstFloor('hot'))}; ${formatRatio(worstFloor('paused'))}`,
      met: Number.isNaN(worstFloor('hot')) ? undefined : worstFloor('hot') <= FLOOR_TARGET,
    },
  ];
  const first = figures[0]!;
  const last = figures[figures.length - 1]!;
  const growthOf = (side: Side, from: SizeFigures, to: SizeFigures, key: Operation) => {
    const before = median(from, side, 'hot', key);
    const after = median(to, side, 'hot', key);
    return before === undefined || after === undefined ? 'n/a' : describeGrowth(before, after);
  };
  const peerLast = [...figures].reverse().find((f) => f.sides.peer) ?? first;
  return {
    title: 'MCP stdio: Engram against the official MCP memory server and the bare floor',
    method:
      '`engram stdio` (SQLite, durable writes), `@modelcontextprotocol/server-memory` (a JSONL file it reads whole ' +
      'and rewrites whole on every call) and a bare JSON-RPC stdio server (no SDK: it answers `initialize`, `ping`, and ' +
      'every `tools/call` with a text of the size of an Engram open’s, the floor for that answer), all started as child ' +
      'processes and driven by the same `@modelcontextprotocol/sdk` v1 `Client` over stdio in the same run. Their calls ' +
      'are interleaved one each in turn — every server makes one call of each operation per round, so each is as warm as ' +
      `the others — in ${options.rounds} rounds of calls made back to back, then ${options.pausedRounds} rounds of calls each ` +
      `made after ${options.idleMs} ms of idleness, as a model’s calls come after it has thought (on a virtual machine, ` +
      'waking an idle process costs some hundreds of microseconds); each series starts with 10% unmeasured warm-up rounds. ' +
      'A ping is one MCP round trip that does nothing. ' +
      'Engram and the peer hold the same subjects: Engram entries of ~1 KiB in 8 lines, seeded with `engram import`; the ' +
      'peer one entity per subject, its observations the description then the 8 lines, its JSONL file written directly. ' +
      'Each append adds a new, distinct line to a different subject. ' +
      `Engram makes ${WARMUP_WRITES} unmeasured appends first, so that its WAL file has reached its working size, as in a ` +
      'server that has been running (a fresh WAL grows with every commit, which makes the first ~170 fsyncs dearer). ' +
      (options.engramOnlySize
        ? `At ${count(options.engramOnlySize)} entries the peer is not measured: it would take seconds per call.`
        : ''),
    tables: [table],
    targets,
    reading: [
      `From ${count(first.entries)} to ${count(last.entries)} entries (back to back) Engram's append ` +
        `${growthOf('engram', first, last, 'append')} and its open ${growthOf('engram', first, last, 'open')}; its index ` +
        `${growthOf('engram', first, last, 'index')}, as its output does (one line per entry).`,
      `From ${count(first.entries)} to ${count(peerLast.entries)} entries the peer's append ` +
        `${growthOf('peer', first, peerLast, 'append')}, its open ${growthOf('peer', first, peerLast, 'open')} and its ` +
        `read_graph ${growthOf('peer', first, peerLast, 'index')}: every call reads and parses the whole file, ` +
        'and every write rewrites it whole (without fsync: its writes are not durable; Engram’s are).',
      `The bare floor answers an open’s ${formatInteger(first.openText)} bytes of text in ` +
        `${cell(median(first, 'bare', 'hot', 'open'))} back to back and ${cell(median(first, 'bare', 'paused', 'open'))} ` +
        'after idleness: what any stdio server pays for that answer to this client.',
      ...overLimit(figures),
    ],
  };
}

/** Engram with and without its stdio fast path, from the same interleaved calls. */
function describeFastPath(figures: readonly SizeFigures[], options: StdioOptions): Section {
  const median = (f: SizeFigures, side: Side, mode: Mode, key: Operation) => f.sides[side]?.[mode][key]?.median;
  const columns = (f: SizeFigures, mode: Mode, key: Operation) => {
    const before = median(f, 'sdkOnly', mode, key);
    const after = median(f, 'engram', mode, key);
    return [
      before === undefined ? '—' : formatMs(before),
      after === undefined ? '—' : formatMs(after),
      before === undefined || after === undefined ? '—' : formatRatio(before / after),
    ];
  };
  const idle = `after ${options.idleMs} ms idle`;
  return {
    title: 'MCP stdio: the fast path, before and after',
    method:
      'The same `engram stdio`, twice in the same run on databases seeded alike: once as shipped, where `ping`, ' +
      '`tools/list` and `tools/call` are answered straight from the tool handler (src/mcp/stdio-fast-path.ts), once with ' +
      '`ENGRAM_STDIO_FAST_PATH=0`, where the SDK answers everything. Their calls are interleaved with the others above.',
    tables: [
      {
        title: 'Round trip, median: SDK only (before) and with the fast path (after)',
        header: [
          'entries',
          'operation',
          'before',
          'after',
          'before / after',
          `before, ${idle}`,
          `after, ${idle}`,
          'before / after',
        ],
        rows: figures.flatMap((f) =>
          OPERATIONS.map(({ key, engram }) => [
            f.entries.toLocaleString('en-US'),
            engram,
            ...columns(f, 'hot', key),
            ...columns(f, 'paused', key),
          ]),
        ),
      },
    ],
    targets: [],
    reading: [],
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
