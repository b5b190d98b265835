/**
 * In-process: what memory_open() and memory_write cost inside one Node process on the
 * SQLite store, at 1k, 10k and 100k entries of about 1 KiB, against the physical limit
 * measured beside them — one raw better-sqlite3 durable commit (WAL, synchronous=FULL)
 * of a 1 KiB row in a table of as many rows, on the same disk.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createMemory } from '../src/core/memory.js';
import { openSqliteStore } from '../src/store/sqlite/index.js';
import { createToolHandler, type ToolResult } from '../src/tools/handler.js';
import { appendedLine, bodyOf, exportDocument, markerOf, subject, subjects } from './content.js';
import type { Section, Table, Target } from './report.js';
import { describeGrowth, formatMs, formatRatio, interleave, type Summary, summarize, timeOnce } from './stats.js';

export interface InProcessOptions {
  readonly sizes: readonly number[];
  /** Rounds of each write, per size. */
  readonly writeRounds: number;
  /** Rounds of both opens (one entry, ten entries), per size. */
  readonly openRounds: number;
  /** Calls of the index per size; fewer at the largest sizes, where the index itself is large. */
  readonly indexRounds: (entries: number) => number;
}

export const DEFAULT_IN_PROCESS: InProcessOptions = {
  sizes: [1_000, 10_000, 100_000],
  writeRounds: 400,
  openRounds: 1_000,
  indexRounds: (entries) => (entries >= 100_000 ? 30 : 300),
};

const caller = { user: 'local', label: 'bench' };

function check(result: ToolResult, what: string): ToolResult {
  if (result.isError) throw new Error(`${what} failed during the benchmark: ${result.text}`);
  return result;
}

/** The raw limit: a table of 1 KiB rows, each write one durable commit of one row. */
function openRawTable(path: string) {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT');
  const insert = db.prepare('INSERT INTO rows (id, body) VALUES (?, ?)');
  const update = db.prepare('UPDATE rows SET body = ? WHERE id = ?');
  return {
    grow: db.transaction((from: number, to: number) => {
      for (let index = from; index < to; index++) insert.run(index, bodyOf(subject(index)));
    }),
    commitOne: (id: number, body: string) => update.run(body, id),
    close: () => db.close(),
  };
}

interface SizeFigures {
  readonly entries: number;
  readonly indexBytes: number;
  readonly reads: Record<'index' | 'indexAfterWrite' | 'openOne' | 'openTen', Summary>;
  readonly writes: Record<'raw' | 'append' | 'replace', Summary>;
}

export async function benchInProcess(options: InProcessOptions = DEFAULT_IN_PROCESS): Promise<Section> {
  const folder = mkdtempSync(join(tmpdir(), 'engram-bench-'));
  // Caps lifted: the memory grows to 100,000 entries of 1 KiB, and their history with it.
  const store = openSqliteStore({ path: join(folder, 'engram.db') });
  const memory = createMemory({ store, policy: { userCap: 2 ** 40, maxEntries: 2 ** 30, historyCap: 2 ** 40 } });
  const handler = createToolHandler(memory);
  const raw = openRawTable(join(folder, 'raw.db'));
  const revisions = new Map<number, number>();
  const figures: SizeFigures[] = [];
  let serial = 0;
  try {
    let seeded = 0;
    for (const entries of options.sizes) {
      await memory.transfer.import(caller, exportDocument(subjects(seeded, entries)), { mode: 'merge' });
      raw.grow(seeded, entries);
      seeded = entries;
      const index = check(await handler(caller, 'memory_open', {}), 'memory_open()');
      const lines = index.text.split('\n').length;
      if (lines !== entries) throw new Error(`the index shows ${lines} entries, ${entries} were seeded`);

      const pick = (call: number, salt: number) => (call * 7919 + salt * 104_729) % entries;
      const opens = await interleave(
        {
          openOne: (call) =>
            handler(caller, 'memory_open', { names: [subject(pick(call, 1)).name] }).then((r) => check(r, 'open')),
          openTen: (call) =>
            handler(caller, 'memory_open', {
              names: Array.from({ length: 10 }, (_, k) => subject(pick(call, k + 2)).name),
            }).then((r) => check(r, 'open ten')),
        },
        options.openRounds,
      );
      // Alone: at 100,000 entries each index call leaves megabytes of garbage behind, whose
      // collection would land on whatever is measured next to it.
      const { index: indexCalls } = await interleave(
        { index: () => handler(caller, 'memory_open', {}).then((r) => check(r, 'memory_open()')) },
        options.indexRounds(entries),
      );
      // The same right after a write, which the store's kept index cannot serve: the full scan.
      const afterWrite: number[] = [];
      for (let call = 0; call < options.indexRounds(entries); call++) {
        check(
          await handler(caller, 'memory_write', { name: subject(pick(call, 15)).name, new: appendedLine(serial++) }),
          'append',
        );
        afterWrite.push(
          await timeOnce(() => handler(caller, 'memory_open', {}).then((r) => check(r, 'memory_open()'))),
        );
      }
      const reads = { ...opens, index: indexCalls, indexAfterWrite: summarize(afterWrite) };
      const writes = await interleave(
        {
          raw: (call) => raw.commitOne(pick(call, 11), bodyOf(subject(pick(call, 12)))),
          append: (call) =>
            handler(caller, 'memory_write', { name: subject(pick(call, 13)).name, new: appendedLine(serial++) }).then(
              (r) => check(r, 'append'),
            ),
          replace: (call) => {
            const target = pick(call, 14);
            const revision = revisions.get(target) ?? 0;
            revisions.set(target, revision + 1);
            return handler(caller, 'memory_write', {
              name: subject(target).name,
              old: markerOf(target, revision),
              new: markerOf(target, revision + 1),
            }).then((r) => check(r, 'replace'));
          },
        },
        options.writeRounds,
      );
      figures.push({ entries, indexBytes: Buffer.byteLength(index.text), reads, writes });
    }
  } finally {
    raw.close();
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  }
  return describe(figures, options);
}

function describe(figures: readonly SizeFigures[], options: InProcessOptions): Section {
  const count = (n: number) => n.toLocaleString('en-US');
  const reads: Table = {
    title: 'Reads (median / p99)',
    header: [
      'entries',
      'memory_open() index',
      'index right after a write',
      'index size',
      'open 1 entry',
      'open 10 entries',
    ],
    rows: figures.map((f) => [
      count(f.entries),
      `${formatMs(f.reads.index.median)} / ${formatMs(f.reads.index.p99)}`,
      `${formatMs(f.reads.indexAfterWrite.median)} / ${formatMs(f.reads.indexAfterWrite.p99)}`,
      `${(f.indexBytes / 1024).toFixed(0)} KiB`,
      `${formatMs(f.reads.openOne.median)} / ${formatMs(f.reads.openOne.p99)}`,
      `${formatMs(f.reads.openTen.median)} / ${formatMs(f.reads.openTen.p99)}`,
    ]),
  };
  const writes: Table = {
    title: 'Durable writes against the limit (median / p99)',
    header: ['entries', 'raw commit (limit)', 'append', 'replace', 'append / raw', 'replace / raw'],
    rows: figures.map((f) => [
      count(f.entries),
      `${formatMs(f.writes.raw.median)} / ${formatMs(f.writes.raw.p99)}`,
      `${formatMs(f.writes.append.median)} / ${formatMs(f.writes.append.p99)}`,
      `${formatMs(f.writes.replace.median)} / ${formatMs(f.writes.replace.p99)}`,
      formatRatio(f.writes.append.median / f.writes.raw.median),
      formatRatio(f.writes.replace.median / f.writes.raw.median),
    ]),
  };
  const at10k = figures.find((f) => f.entries === 10_000);
  const worstWrite = Math.max(
    ...figures.flatMap((f) => [
      f.writes.append.median / f.writes.raw.median,
      f.writes.replace.median / f.writes.raw.median,
    ]),
  );
  const targets: Target[] = [
    {
      what: 'memory_open() index, 10,000 entries (median)',
      target: '< 5 ms',
      measured: at10k ? formatMs(at10k.reads.index.median) : 'n/a',
      met: at10k ? at10k.reads.index.median < 5 : undefined,
    },
    {
      what: 'memory_open() index right after a write, 10,000 entries (median)',
      target: '< 5 ms',
      measured: at10k ? formatMs(at10k.reads.indexAfterWrite.median) : 'n/a',
      met: at10k ? at10k.reads.indexAfterWrite.median < 5 : undefined,
    },
    {
      what: 'durable write (append, replace) / raw commit, worst size (median)',
      target: '≤ 1.3x',
      measured: formatRatio(worstWrite),
      met: worstWrite <= 1.3,
    },
  ];
  const first = figures[0]!;
  const last = figures[figures.length - 1]!;
  const growth = (pick: (f: SizeFigures) => Summary) => describeGrowth(pick(first).median, pick(last).median);
  return {
    title: 'In-process (SQLite store, tool handler)',
    method:
      'Each call goes through the tool handler (argument checks, the Memory service, the SQLite store, ' +
      'formatting), exactly what an embedding agent gets from `handleToolCall`. Entries hold ~1 KiB bodies in 8 lines; ' +
      'the memory is seeded with `memory.transfer.import` and grown between sizes in the same database. ' +
      'The limit is measured in the same run on the same disk: one `UPDATE` of a 1 KiB row in its own transaction ' +
      'on a better-sqlite3 database in WAL mode with `synchronous=FULL`, in a table of as many rows. ' +
      `The writes are interleaved call by call (${options.writeRounds} rounds per size), and so are the two opens ` +
      `(${options.openRounds} rounds); the index is measured on its own (${options.sizes.map((s) => `${options.indexRounds(s)} calls at ${count(s)}`).join(', ')}), ` +
      'since at 100,000 entries each call leaves megabytes of garbage whose collection would land on its neighbours. ' +
      'Each series starts with 10% unmeasured warm-up rounds.',
    tables: [reads, writes],
    targets,
    reading: [
      `From ${count(first.entries)} to ${count(last.entries)} entries: append ${growth((f) => f.writes.append)}, ` +
        `replace ${growth((f) => f.writes.replace)}, the raw commit beside them ${growth((f) => f.writes.raw)}; ` +
        `opening one entry ${growth((f) => f.reads.openOne)}, ten ${growth((f) => f.reads.openTen)}.`,
      `The index grows with the number of entries because its output does (${count(last.indexBytes)} bytes at ${count(last.entries)}); ` +
        'it reads the covering index only, never bodies.',
      'A durable write is one commit and one fsync either way. The raw commit writes one row; an Engram write in the same ' +
        'commit also records a revision (a second copy of the body), updates the covering index and the user’s usage, so it ' +
        'writes several database pages to the WAL where the raw commit writes one or two.',
    ],
  };
}
