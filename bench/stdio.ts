/**
 * Through MCP stdio: `engram stdio` against the memory servers a user would pick instead
 * (bench/peers.ts: the official MCP memory server, mcp-memory-keeper, memorix) holding the
 * same content, all driven by the same MCP SDK v1 client in the same run, one call each
 * in turn, all warm, then the same after idleness: create an entry, append a line to one,
 * open one, and the index. Beside them the floor: a bare JSON-RPC stdio server (no SDK)
 * answering text of an open's size to the same client. Also what each index costs the
 * model in bytes.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { bodyOf, subjects } from './content.js';
import { ENGRAM_CLI, engramFiles, engramFlags, seedEngram } from './engram.js';
import { type CallResult, connect, type Session, textOf } from './mcp-client.js';
import { PEERS_FOLDER } from './peer-install.js';
import { creations, nextLine, type Operation, type Operations, PEERS, type PeerSide, pickName } from './peers.js';
import type { Section } from './report.js';
import { settleWrites } from './settle.js';
import { interleave, type Summary } from './stats.js';
import {
  type Bytes,
  describeFastPath,
  describeLatency,
  describeTokens,
  type Figures,
  type Settings,
  type Side,
  type SizeFigures,
} from './stdio-report.js';

export interface StdioOptions {
  /** Sizes measured for every server. */
  readonly sizes: readonly number[];
  /** A size measured for Engram alone, to show its cost stays flat (some peers take seconds per call there). */
  readonly engramOnlySize: number | undefined;
  /** Rounds of calls made back to back; in each, every server makes one call of each operation. */
  readonly rounds: number;
  /** Rounds of calls each made after a pause of `idleMs`. */
  readonly pausedRounds: number;
  /**
   * The pause before every call of the paused rounds. A model thinks between calls, so each
   * of its calls finds every process idle; on a virtual machine a call after a pause costs
   * more than one right after another (waking an idle process and CPU, cold caches).
   */
  readonly idleMs: number;
  /**
   * A peer's operation leaves a series' rounds once its measured calls have taken this long
   * (and number MIN_PEER_SAMPLES at least): some take seconds per call, and every round
   * would wait for them.
   */
  readonly peerBudgetMs: number;
}

export const DEFAULT_STDIO: StdioOptions = {
  sizes: [1_000, 5_000],
  engramOnlySize: 100_000,
  rounds: 60,
  pausedRounds: 30,
  idleMs: 10,
  peerBudgetMs: 6_000,
};

/** `npm run bench -- --quick`: every row, briefly, at one small size. */
export const QUICK_STDIO: StdioOptions = {
  sizes: [1_000],
  engramOnlySize: undefined,
  rounds: 20,
  pausedRounds: 10,
  idleMs: 10,
  peerBudgetMs: 2_000,
};

const BARE_SERVER = fileURLToPath(new URL('./bare-stdio-server.js', import.meta.url));

/**
 * Unmeasured appends before each measurement. A server that has just started writes into a
 * new WAL file that grows with every commit, and growing a file makes each fsync dearer; once
 * the WAL has been checkpointed (1,000 pages, ~170 writes) commits reuse its blocks, as in a
 * server that has been running.
 */
const WARMUP_WRITES = 250;

function engramOperations(engram: Session, entries: number, indexed: (result: CallResult) => void) {
  const created = creations(entries);
  return {
    create: () => {
      const item = created();
      return engram.call('memory_write', { name: item.name, description: item.description, new: bodyOf(item) });
    },
    append: (call: number) => engram.call('memory_write', { name: pickName(entries, call, 1), new: nextLine() }),
    open: (call: number) => engram.call('memory_open', { names: [pickName(entries, call, 2)] }),
    index: () => engram.call('memory_open', {}).then(indexed),
    ping: () => engram.ping(),
  };
}

/** The bare floor answers an open (any tools/call, with text of an open's size) and a ping. */
function bareOperations(bare: Session): Operations {
  return { open: () => bare.call('open', {}), ping: () => bare.ping() };
}

const OPERATION_KEYS: readonly Operation[] = ['create', 'append', 'open', 'index', 'ping'];

/** A peer's operation has at least this many measured calls in each series, whatever they take. */
const MIN_PEER_SAMPLES = 5;

/** In the warm-up rounds, a peer's operation is called until its calls have taken this long (once at least). */
const WARMUP_BUDGET_MS = 1_000;

/**
 * One series of interleaved rounds in which the peers' operations (`limited`) are called
 * every round until they have taken their budget: `keep` says whether a call is made in a
 * round, from the time the wrapped operations have taken so far.
 */
function budgeted(
  operations: Readonly<Record<string, (call: number) => Promise<unknown>>>,
  limited: (name: string) => boolean,
  warmup: number,
  budgetMs: number,
) {
  const spent = new Map<string, { warmup: number; measured: number; calls: number }>();
  let warming = true;
  // Only the peers' calls are accounted for: the others' timings carry nothing of this.
  const accounted =
    (name: string, operation: (call: number) => Promise<unknown>) =>
    async (call: number): Promise<unknown> => {
      const start = performance.now();
      try {
        return await operation(call);
      } finally {
        const took = performance.now() - start;
        const so = spent.get(name) ?? { warmup: 0, measured: 0, calls: 0 };
        spent.set(
          name,
          warming ? { ...so, warmup: so.warmup + took } : { ...so, measured: so.measured + took, calls: so.calls + 1 },
        );
      }
    };
  const wrapped = Object.fromEntries(
    Object.entries(operations).map(([name, operation]) => [
      name,
      limited(name) ? accounted(name, operation) : operation,
    ]),
  );
  return {
    operations: wrapped,
    /** Called once at the start of each round, before its calls. */
    keep(name: string, round: number): boolean {
      warming = round < warmup;
      if (!limited(name)) return true;
      const so = spent.get(name) ?? { warmup: 0, measured: 0, calls: 0 };
      return warming ? so.warmup < WARMUP_BUDGET_MS : so.calls < MIN_PEER_SAMPLES || so.measured < budgetMs;
    },
  };
}

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

function sizesOf(result: CallResult): Bytes {
  return { text: Buffer.byteLength(textOf(result)), result: Buffer.byteLength(JSON.stringify(result)) };
}

const PEER_SIDES = new Set<string>(PEERS.map((peer) => peer.side));

async function measureSize(entries: number, withPeers: boolean, options: StdioOptions): Promise<SizeFigures> {
  const folder = mkdtempSync(join(tmpdir(), 'engram-bench-stdio-'));
  const sessions: Session[] = [];
  try {
    const list = subjects(0, entries);
    // Each server's files in a folder of its own, settled after each of its calls (settle.ts).
    const folders: Partial<Record<Side, string>> = {};
    folders.engram = mkdtempSync(join(folder, 'engram-'));
    const files = engramFiles(folders.engram);
    seedEngram(files, list);
    const engram = await connect(process.execPath, [ENGRAM_CLI, 'stdio', ...engramFlags(files)], files.env);
    sessions.push(engram);
    // The last index each server answered, kept as it is: its size is counted after the timing, not inside it.
    const indexes: Partial<Record<Side, CallResult>> = {};
    const engramOps = engramOperations(engram, entries, (result) => {
      indexes.engram = result;
    });
    for (let call = 0; call < WARMUP_WRITES; call++) await engramOps.append(call);
    const openText = Buffer.byteLength(textOf((await engramOps.open(0)) as CallResult));
    const bare = await connect(process.execPath, [BARE_SERVER, String(openText)], process.env);
    sessions.push(bare);
    // The same server on a database of its own, seeded alike, with the fast path off.
    folders.sdkOnly = mkdtempSync(join(folder, 'sdk-only-'));
    const sdkFiles = engramFiles(folders.sdkOnly);
    seedEngram(sdkFiles, list);
    const sdkOnly = await connect(process.execPath, [ENGRAM_CLI, 'stdio', ...engramFlags(sdkFiles)], {
      ...sdkFiles.env,
      ENGRAM_ACCEL_STDIO_FAST_PATH: '0',
    });
    sessions.push(sdkOnly);
    const sdkOnlyOps = engramOperations(sdkOnly, entries, () => {});
    for (let call = 0; call < WARMUP_WRITES; call++) await sdkOnlyOps.append(call);
    const sides: Partial<Record<Side, Operations>> = {
      engram: engramOps,
      sdkOnly: sdkOnlyOps,
      bare: bareOperations(bare),
    };
    const notMeasured: Partial<Record<PeerSide, string>> = {};
    for (const peer of withPeers ? PEERS : []) {
      try {
        const peerFolder = mkdtempSync(join(folder, `${peer.side}-`));
        folders[peer.side] = peerFolder;
        const started = await peer.start(peerFolder, list, (result) => {
          indexes[peer.side] = result;
        });
        sessions.push(started.session);
        sides[peer.side] = started.operations;
      } catch (error) {
        notMeasured[peer.side] = error instanceof Error ? error.message : String(error);
        process.stderr.write(`bench: ${peer.name} not measured at ${entries} entries: ${notMeasured[peer.side]}\n`);
      }
    }
    const operations = prefixed<(call: number) => Promise<unknown>>(sides);
    const series = async (keys: readonly Operation[], rounds: number, idleMs?: number) => {
      const warmup = Math.ceil(rounds / 10);
      const run = budgeted(operations, (name) => PEER_SIDES.has(name.split('.')[0]!), warmup, options.peerBudgetMs);
      // Operation by operation, the servers' turns rotating each round: none always follows the same one.
      const order = (round: number) =>
        keys.flatMap((key) => {
          const names = Object.keys(sides).filter((side) => `${side}.${key}` in operations);
          const start = round % names.length;
          return [...names.slice(start), ...names.slice(0, start)]
            .map((side) => `${side}.${key}`)
            .filter((name) => run.keep(name, round));
        });
      const afterCall = (name: string) => {
        const settled = folders[name.split('.')[0] as Side];
        if (settled !== undefined) settleWrites(settled);
      };
      return interleave(run.operations, rounds, {
        warmup,
        order,
        afterCall,
        ...(idleMs === undefined ? {} : { idleMs }),
      });
    };
    // The whole index is timed in series of its own: an answer of megabytes (the official
    // server's read_graph is 12 MB at 5,000 entries, Engram's index 10 MB at 100,000) leaves
    // the one client process parsing and collecting garbage, which landed on the calls after
    // it (a ping measured 6.4 ms in rounds with the index, 0.6 ms without, same server).
    const calls = OPERATION_KEYS.filter((key) => key !== 'index');
    const only = (keys: readonly Operation[], summaries: Record<string, Summary>) =>
      Object.fromEntries(Object.entries(summaries).filter(([name]) => keys.includes(name.split('.')[1] as Operation)));
    const both = async (rounds: number, idleMs?: number) => ({
      ...only(calls, await series(calls, rounds, idleMs)),
      ...only(['index'], await series(['index'], rounds, idleMs)),
    });
    const hot = await both(options.rounds);
    const paused = await both(options.pausedRounds, options.idleMs);
    const peerIndexes: Partial<Record<PeerSide, { bytes: Bytes; shown: string }>> = {};
    for (const peer of PEERS) {
      const index = indexes[peer.side];
      if (index) peerIndexes[peer.side] = { bytes: sizesOf(index), shown: peer.shown(index, entries) };
    }
    return {
      entries,
      sides: bySide(hot, paused, Object.keys(sides) as Side[]),
      engramIndex: indexes.engram ? sizesOf(indexes.engram) : { text: 0, result: 0 },
      peerIndexes,
      notMeasured,
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
  const settings: Settings = {
    ...options,
    minPeerSamples: MIN_PEER_SAMPLES,
    warmupWrites: WARMUP_WRITES,
    peersFolder: PEERS_FOLDER,
  };
  return [describeLatency(figures, settings), describeFastPath(figures, settings), describeTokens(figures)];
}
