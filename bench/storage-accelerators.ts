/**
 * Each storage accelerator (src/storage/accelerators.ts, docs/accelerators.md) against its
 * plain path, side by side in one run: two stores seeded alike, one with the accelerators
 * as they default, one with that accelerator alone switched off, called in turn round
 * after round (the order swapped every round) on the workload the accelerator is for. The
 * machine is shared and noisy: what counts is the ratio of the medians, off / on.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createMemory, type Memory } from '../src/memory/memory.js';
import { writeRules } from '../src/memory/model/apply.js';
import { DEFAULT_POLICY } from '../src/memory/model/policy.js';
import type { Caller, Decide } from '../src/memory/port.js';
import type { AcceleratorName } from '../src/storage/accelerators.js';
import type { StorageBackend } from '../src/storage/backend.js';
import { openPostgresStore } from '../src/storage/postgres/index.js';
import { openSqliteStore } from '../src/storage/sqlite/index.js';
import { createTransfer } from '../src/transfer/transfer.js';
import { appendedLine, exportDocument, subject, subjects } from './content.js';
import { startLatencyProxy } from './latency-proxy.js';
import { createBenchDatabase, findBenchPostgres, roundTripMs } from './postgres.js';
import type { Section, Table } from './report.js';
import { formatMs, formatRatio, type Summary, summarize } from './stats.js';

export interface StorageAcceleratorOptions {
  /** Entries each store is seeded with. */
  readonly entries: number;
  /** Rounds of each workload, each store once per round. */
  readonly rounds: number;
}

export const DEFAULT_STORAGE_ACCELERATORS: StorageAcceleratorOptions = { entries: 10_000, rounds: 200 };
export const QUICK_STORAGE_ACCELERATORS: StorageAcceleratorOptions = { entries: 1_000, rounds: 30 };

const caller: Caller = { user: 'local', label: 'bench' };
const rules = writeRules({ ...DEFAULT_POLICY, historyCap: 2 ** 40 }, Date.now);

/** Writes that arrive together, for the accelerators that share or order them. */
const CONCURRENT_WRITES = 8;
/** Reads that arrive together, for the read batcher. */
const CONCURRENT_READS = 32;
/**
 * Each way, for the PostgreSQL accelerators measured again with the database this far
 * away (a round trip of twice this, as to a managed database in another zone): what they
 * save is round trips, which a database on the same host makes nearly free.
 */
const REMOTE_DELAY_MS = 1;

/** One store under measurement: its backend, and a Memory service over it. */
interface Opened {
  readonly store: StorageBackend;
  readonly memory: Memory;
}

/** A workload: one round's call on a store, resolving to the milliseconds that count. */
type Workload = (opened: Opened, round: number) => Promise<number>;

interface Comparison {
  readonly accelerator: AcceleratorName;
  readonly backend: string;
  readonly workload: string;
  readonly on: Summary;
  readonly off: Summary;
}

function appending(line: string): Decide {
  return (current) => ({
    kind: 'put',
    operation: current ? 'append' : 'create',
    description: current?.description ?? 'appended lines',
    body: `${current?.body ?? ''}${line}`,
  });
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

let serial = 0;
const append = (store: StorageBackend, index: number) =>
  store.mutate(caller, subject(index).name, appending(appendedLine(serial++)), rules);

const WORKLOADS: Readonly<Record<AcceleratorName, { readonly what: string; readonly run: Workload }>> = {
  indexCache: {
    what: 'memory_open() index right after a write',
    run: async ({ store }, round) => {
      await append(store, round * 7919);
      return timed(() => store.index(caller.user));
    },
  },
  groupCommit: {
    what: `${CONCURRENT_WRITES} appends at once, until the last is durable`,
    run: ({ store }, round) =>
      timed(() => Promise.all(Array.from({ length: CONCURRENT_WRITES }, (_, k) => append(store, round * 31 + k)))),
  },
  searchWorker: {
    what: `event-loop busy time: ${CONCURRENT_WRITES} appends at once, then their search catch-up`,
    run: async ({ store }, round) => {
      const start = performance.eventLoopUtilization();
      await Promise.all(Array.from({ length: CONCURRENT_WRITES }, (_, k) => append(store, round * 37 + k)));
      await sleep(150);
      return performance.eventLoopUtilization(start).active;
    },
  },
  activityWalk: {
    what: "one rare actor's activity page over the whole history",
    run: ({ store }) => timed(() => store.activity(caller.user, { actor: 'rare', limit: 20 })),
  },
  optimisticSave: {
    what: 'one append, alone',
    run: ({ store }, round) => timed(() => append(store, round * 7919)),
  },
  writeCache: {
    what: 'one append to the entry written just before',
    run: async ({ store }, round) => {
      await append(store, round);
      return timed(() => append(store, round));
    },
  },
  readBatcher: {
    what: `${CONCURRENT_READS} reads of one entry each, at once`,
    run: ({ memory }, round) =>
      timed(() =>
        Promise.all(
          Array.from({ length: CONCURRENT_READS }, (_, k) => memory.open(caller, [subject(round * 41 + k).name])),
        ),
      ),
  },
  userQueue: {
    what: `${CONCURRENT_WRITES} appends of one user at once`,
    run: ({ store }, round) =>
      timed(() => Promise.all(Array.from({ length: CONCURRENT_WRITES }, (_, k) => append(store, round * 43 + k)))),
  },
};

const SQLITE: readonly AcceleratorName[] = ['indexCache', 'groupCommit', 'searchWorker', 'activityWalk'];
const POSTGRES: readonly AcceleratorName[] = ['optimisticSave', 'writeCache', 'readBatcher', 'userQueue'];

/** Defaults, and the accelerator alone off; searchWorker, off by default, is measured on against off. */
function variants(accelerator: AcceleratorName): { on: Record<string, boolean>; off: Record<string, boolean> } {
  return accelerator === 'searchWorker'
    ? { on: { searchWorker: true }, off: { searchWorker: false } }
    : { on: {}, off: { [accelerator]: false } };
}

async function seed(memory: Memory, entries: number): Promise<void> {
  await createTransfer(memory).import(caller, exportDocument(subjects(0, entries)), { mode: 'merge' });
  // The search index catches up with the import before anything is timed.
  await memory.search(caller, 'subject');
  // One change of a rare actor, at the far end of the history from the newest.
  await memory.store.mutate({ user: caller.user, label: 'rare' }, subject(0).name, appending('rare\n'), rules);
}

async function compare(
  backend: Comparison['backend'],
  accelerator: AcceleratorName,
  open: (accelerators: Record<string, boolean>) => Promise<StorageBackend>,
  options: StorageAcceleratorOptions,
): Promise<Comparison> {
  const { on, off } = variants(accelerator);
  const opened: Opened[] = [];
  try {
    for (const accelerators of [on, off]) {
      const store = await open(accelerators);
      const memory = createMemory({ store, policy: { userCap: 2 ** 40, maxEntries: 2 ** 30, historyCap: 2 ** 40 } });
      opened.push({ store, memory });
      await seed(memory, options.entries);
    }
    const samples: [number[], number[]] = [[], []];
    const workload = WORKLOADS[accelerator];
    const warmup = Math.ceil(options.rounds / 10);
    for (let round = 0; round < warmup + options.rounds; round++) {
      for (const which of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const took = await workload.run(opened[which]!, round % options.entries);
        if (round >= warmup) samples[which]!.push(took);
      }
    }
    return { accelerator, backend, workload: workload.what, on: summarize(samples[0]), off: summarize(samples[1]) };
  } finally {
    for (const { store } of opened) await store.close();
  }
}

export async function benchStorageAccelerators(
  options: StorageAcceleratorOptions = DEFAULT_STORAGE_ACCELERATORS,
): Promise<Section> {
  const folder = mkdtempSync(join(tmpdir(), 'engram-bench-accelerators-'));
  const comparisons: Comparison[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  let roundTrips: { readonly direct: number; readonly through: number } | undefined;
  try {
    let files = 0;
    for (const accelerator of SQLITE) {
      comparisons.push(
        await compare(
          'SQLite',
          accelerator,
          async (accelerators) => openSqliteStore({ path: join(folder, `${files++}.db`), accelerators }),
          options,
        ),
      );
    }
    const server = await findBenchPostgres();
    if (server) {
      const proxy = await startLatencyProxy(server, REMOTE_DELAY_MS);
      cleanups.push(async () => proxy.stop());
      // What the proxy really adds: timers fire late on a busy machine.
      roundTrips = { direct: await roundTripMs(server), through: await roundTripMs(proxy.through(server)) };
      const places = [
        { backend: 'PostgreSQL', url: (database: string) => database },
        { backend: `PostgreSQL, ${REMOTE_DELAY_MS} ms away`, url: proxy.through },
      ];
      for (const place of places) {
        for (const accelerator of POSTGRES) {
          comparisons.push(
            await compare(
              place.backend,
              accelerator,
              async (accelerators) => {
                const database = await createBenchDatabase(server);
                cleanups.push(database.drop);
                return openPostgresStore({ connectionString: place.url(database.url), accelerators });
              },
              options,
            ),
          );
        }
      }
    }
  } finally {
    for (const cleanup of cleanups) await cleanup();
    rmSync(folder, { recursive: true, force: true });
  }
  const table: Table = {
    title: 'Each accelerator on and off (median / p99; off / on of the medians)',
    header: ['accelerator', 'store', 'workload', 'on', 'off', 'off / on'],
    rows: comparisons.map((c) => [
      c.accelerator,
      c.backend,
      c.workload,
      `${formatMs(c.on.median)} / ${formatMs(c.on.p99)}`,
      `${formatMs(c.off.median)} / ${formatMs(c.off.p99)}`,
      formatRatio(c.off.median / c.on.median),
    ]),
  };
  return {
    title: 'Storage accelerators, each against its plain path',
    method:
      `Two stores seeded alike with ${options.entries.toLocaleString('en-US')} entries of ~1 KiB: the accelerators as they ` +
      'default, and the same with one switched off (the search worker, off by default, on against off). ' +
      `Each workload runs ${options.rounds} rounds, each store once a round, the order swapped every round, ` +
      'after 10% unmeasured warm-up rounds. PostgreSQL rows only where a server answers: once on it directly, ' +
      `once through a proxy (a child process) that holds every chunk ${REMOTE_DELAY_MS} ms each way, as a database ` +
      'in another zone would: what the PostgreSQL accelerators save is round trips.' +
      (roundTrips === undefined
        ? ''
        : ` A \`SELECT 1\` took ${formatMs(roundTrips.direct)} directly and ${formatMs(roundTrips.through)} ` +
          'through the proxy (medians of 50).'),
    tables: [table],
    targets: [],
    reading: [
      'Above 1x, the accelerator pays on its workload; near 1x (within the noise of a shared machine, some 10%), it does not.',
    ],
  };
}
