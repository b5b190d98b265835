/**
 * The search index catching up after writes on a thread of its own, for a long-running
 * server of many clients (`engram serve`): on the event loop, a catch-up took about a third
 * of a busy server's time per write and held the loop a few milliseconds per batch, while
 * every other request waited. The worker opens its own connection to the same file and
 * runs the same batches (search-backlog.ts) a second after writes; the event loop still
 * catches up itself before a search and as the store closes, so nothing a search must
 * see is left to timing. The two connections take turns through the write gate
 * (write-gate.ts), and the worker steps aside whenever the loop waits to write.
 *
 * The worker opens the file with the store's driver (drivers.ts). It runs the source text
 * of runSearchWorker, prepareCatchUp, catchUpBatch and nodeSqliteDriver (eval): one text
 * works alike from the TypeScript sources, the library's files and the
 * bundled `engram` command, where a file of its own would be found in a different place by
 * each. Those functions use nothing but their arguments: not even require(), which the
 * worker's source passes in, since the bundler renames it in the bundled command's copy
 * (to a __require of its own chunk, not defined in the worker).
 *
 * Its commits need no fsync of their own (synchronous=NORMAL): the index is derived from
 * the entries, the write-ahead log keeps commits in order, so the next durable commit of
 * an entry makes the index's earlier ones durable too, and a crash before it loses only
 * catch-ups, which are done again from the watermark.
 *
 * The worker also checkpoints the write-ahead log after each catch-up, and every
 * CHECKPOINT_MS while one waits, outside the write gate (a passive checkpoint takes no write
 * lock: writes go on meanwhile): the event loop's connection then checkpoints only as a
 * backstop, when the log has grown past LOOP_CHECKPOINT_PAGES (search-backlog.ts); a
 * catch-up that writes keep going checkpoints every CHECKPOINT_BATCHES batches too. A
 * checkpoint that fails is left to the next one or to the backstop; it does not stop the
 * worker. SQLite's automatic checkpoint, every 1,000 pages, ran inside the COMMIT of
 * whichever write crossed them: copying the pages into the file and an fsync on the event
 * loop, ~12% of its CPU per write at 64 connections.
 */

import { Worker } from 'node:worker_threads';
import { MAX_DELAY_MS } from './busy.js';
import type { Database } from './driver.js';
import type { WorkerDriver } from './drivers.js';
import { type DriverConstructor, nodeSqliteDriver } from './node-driver.js';
import {
  CATCH_UP_SQL,
  catchUpBatch,
  prepareCatchUp,
  REVISIONS_PER_ENTRY,
  SEARCH_PARTS,
  WORKER_MMAP_BYTES,
} from './search-backlog.js';
import { GATE_CELLS, HOLDERS, type WriteGate } from './write-gate.js';

/**
 * Entries per batch in the worker; the loop's write waits for one batch at most, a few
 * milliseconds. Each batch is a commit of the worker's connection, a new segment of the
 * search index (merged into larger ones as they pile up) and a page cache the loop's
 * connection must drop: with 64 users writing at once (2026-12-07, server CPU per write
 * over 10,000 writes, interleaved), batches of 16 took 520-726 µs, of 64 480-565 µs, of
 * 256 429-500 µs, where a write could wait for the whole batch.
 */
const WORKER_BATCH = 64;

/** A catch-up that goes on batch after batch (writes keep coming) checkpoints the log every this many. */
const CHECKPOINT_BATCHES = 16;

/**
 * How long after writes the worker catches up, in ms: an entry written again meanwhile is
 * indexed once (catchUpBatch), so the longer, the less indexing per write where writes come
 * back to the same entries; a search never waits for it (it catches up itself first). With
 * 64 connections appending to 500 entries (2026-12-07, interleaved pairs, 6-8 s each), the
 * worker's CPU per write was 60-74 µs at 100 ms and 21-37 at 1,000.
 */
const WORKER_DELAY_MS = 1_000;

/**
 * While a catch-up waits its turn, the worker checkpoints the log every this many ms: the
 * loop's writes fill it faster than a catch-up a second empties it, and the loop's own
 * checkpoint (its backstop, search-backlog.ts) would then run inside its commits.
 */
const CHECKPOINT_MS = 100;

/**
 * How long the worker leaves the gate to a loop that asked for it before taking it anyway
 * (the loop may have given up), in ms: past the loop's longest pause between tries, with
 * room for a late timer. At 20 ms, a loop whose timers ran later than that (a busy
 * server's) came back each time after the worker had taken the gate again, its pauses grew
 * to 100 ms, and a write waited for the whole backlog (seconds after a load).
 */
const STEP_ASIDE_MS = 2 * MAX_DELAY_MS + 50;

/** The worker's pauses while another process holds the lock: doubling from 2 ms up to this, in ms. */
const MAX_BUSY_PAUSE_MS = 100;

interface SearchWorkerData {
  readonly driver: WorkerDriver;
  readonly path: string;
  /** The opened file's device and inode (decimal): the worker stops when the path names another. */
  readonly dev: string;
  readonly ino: string;
  readonly mmapBytes: number;
  readonly sql: typeof CATCH_UP_SQL;
  readonly parts: typeof SEARCH_PARTS;
  readonly batch: number;
  readonly revisionsPerEntry: number;
  readonly checkpointBatches: number;
  readonly checkpointMs: number;
  readonly delayMs: number;
  readonly stepAsideMs: number;
  readonly maxBusyPauseMs: number;
  readonly gate: SharedArrayBuffer;
  readonly cells: typeof GATE_CELLS;
  readonly holders: typeof HOLDERS;
}

export interface SearchWorkerOptions {
  /** The store's driver: the worker opens the file with the same one. */
  readonly driver: WorkerDriver;
  readonly path: string;
  /** The device and inode of the file the store opened. */
  readonly identity: { readonly dev: bigint; readonly ino: bigint };
  readonly gate: WriteGate;
  /** The worker stopped on its own (it failed, or the file was replaced): told once, with why. */
  readonly onGone: (reason: string | undefined) => void;
}

export class SearchWorker {
  private readonly thread: Worker;
  private readonly exited: Promise<void>;
  private gone = false;
  private closing = false;

  constructor(private readonly options: SearchWorkerOptions) {
    const data: SearchWorkerData = {
      driver: options.driver,
      path: options.path,
      dev: String(options.identity.dev),
      ino: String(options.identity.ino),
      mmapBytes: WORKER_MMAP_BYTES,
      sql: CATCH_UP_SQL,
      parts: SEARCH_PARTS,
      batch: WORKER_BATCH,
      revisionsPerEntry: REVISIONS_PER_ENTRY,
      checkpointBatches: CHECKPOINT_BATCHES,
      checkpointMs: CHECKPOINT_MS,
      delayMs: WORKER_DELAY_MS,
      stepAsideMs: STEP_ASIDE_MS,
      maxBusyPauseMs: MAX_BUSY_PAUSE_MS,
      gate: options.gate.buffer,
      cells: GATE_CELLS,
      holders: HOLDERS,
    };
    const source = `(${runSearchWorker})(require, ${prepareCatchUp}, ${catchUpBatch}, ${nodeSqliteDriver});`;
    this.thread = new Worker(source, { eval: true, workerData: data });
    // Nothing the worker does is worth keeping a process alive for: the store's close drains what is left.
    this.thread.unref();
    let reason: string | undefined;
    this.thread.on('message', (message: { failed?: string }) => {
      reason = message.failed;
    });
    // An uncaught failure in the worker comes here, then its exit.
    this.thread.on('error', (error) => {
      reason ??= error.message;
    });
    this.exited = new Promise((resolve) => {
      this.thread.once('exit', () => {
        this.gone = true;
        options.gate.workerGone();
        if (!this.closing) options.onGone(reason);
        resolve();
      });
    });
  }

  /** False once the worker stopped: the loop catches up itself. */
  get running(): boolean {
    return !this.gone;
  }

  /** A write committed: the worker catches up a little later (woken if it was idle). */
  wrote(): void {
    if (this.options.gate.wrote()) this.thread.postMessage('wrote');
  }

  /** Writes wait to be indexed: the worker catches up as soon as it can. */
  catchUpNow(): void {
    this.options.gate.wrote();
    this.thread.postMessage('now');
  }

  /** Stops the worker after the batch it may be running; resolves once it has let the file go. */
  async close(): Promise<void> {
    this.closing = true;
    // Kept alive until the worker has exited: unreferenced, a process with nothing else to
    // wait for ended on the spot, the store's close never finished (exit code 13, the
    // store's last catch-up and its connection's close never ran).
    this.thread.ref();
    if (!this.gone) this.thread.postMessage('close');
    await this.exited;
  }
}

/**
 * The worker thread's program, run from its source text: it may use only its arguments
 * and its workerData. It loads modules with the worker's require, passed in as `load`: a
 * require() written here is renamed by the bundler in the bundled `engram` command.
 */
function runSearchWorker(
  load: NodeJS.Require,
  prepare: typeof prepareCatchUp,
  batchOf: typeof catchUpBatch,
  nodeDriver: typeof nodeSqliteDriver,
): void {
  const threads = load('node:worker_threads') as typeof import('node:worker_threads');
  const data = threads.workerData as SearchWorkerData;
  const port = threads.parentPort as import('node:worker_threads').MessagePort;
  const { statSync } = load('node:fs') as typeof import('node:fs');
  const Driver: DriverConstructor =
    data.driver.name === 'node' ? nodeDriver(load) : (load(data.driver.path) as DriverConstructor);
  const cells = new Int32Array(data.gate);
  const { holder, loopWaiting, wrote, idle } = data.cells;
  const { FREE, LOOP, WORKER } = data.holders;

  let db: Database | undefined;
  let timer: NodeJS.Timeout | undefined;
  let checkpointTimer: NodeJS.Timeout | undefined;
  let running = false;
  let closing = false;

  const finish = (failed?: unknown) => {
    if (failed !== undefined) port.postMessage({ failed: failed instanceof Error ? failed.message : String(failed) });
    try {
      db?.close();
    } finally {
      process.exit(0);
    }
  };

  const sameFile = () => {
    const now = statSync(data.path, { bigint: true, throwIfNoEntry: false });
    return now !== undefined && String(now.dev) === data.dev && String(now.ino) === data.ino;
  };

  // The loop first while it waits to write (for a while: it may have given up), then whoever is free.
  const enter = () => {
    for (;;) {
      if (Atomics.load(cells, loopWaiting) === 1) {
        if (Atomics.wait(cells, loopWaiting, 1, data.stepAsideMs) === 'timed-out') Atomics.store(cells, loopWaiting, 0);
      }
      if (Atomics.compareExchange(cells, holder, FREE, WORKER) === FREE) return;
      Atomics.wait(cells, holder, LOOP, data.stepAsideMs);
    }
  };
  const leave = () => {
    Atomics.store(cells, holder, FREE);
    Atomics.notify(cells, holder);
  };

  try {
    db = new Driver(data.path, { fileMustExist: true });
    // Never wait inside the gate for another process's lock: step out, pause, try again.
    db.pragma('busy_timeout = 0');
    db.pragma('synchronous = NORMAL');
    // Its checkpoints come after its catch-ups, outside the gate: never inside a batch's COMMIT.
    db.pragma('wal_autocheckpoint = 0');
    db.pragma('secure_delete = ON');
    db.pragma(`mmap_size = ${data.mmapBytes}`);
  } catch (error) {
    finish(error);
    return;
  }
  const { createHash } = load('node:crypto') as typeof import('node:crypto');
  const statements = prepare(db, data.sql, data.parts, createHash);
  const turn = { after: 0 };
  const batch = db.transaction(() => batchOf(statements, data.batch, data.revisionsPerEntry, turn));
  const checkpointStatement = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  // What the log holds now goes into the file, as far as no reader needs it still.
  const checkpoint = () => {
    try {
      checkpointStatement.get();
    } catch {
      // Another connection's checkpoint, a recovery under way, a passing I/O error: the next one, or the backstop.
    }
  };

  /** One batch: true when more wait, 'busy' when another process holds the lock. */
  const oneBatch = (): boolean | 'busy' => {
    if (!sameFile()) throw new Error(`${data.path} was removed or replaced`);
    enter();
    try {
      return batch.immediate();
    } catch (error) {
      if (String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY')) return 'busy';
      throw error;
    } finally {
      leave();
    }
  };

  const catchUp = async () => {
    timer = undefined;
    running = true;
    try {
      Atomics.store(cells, wrote, 0);
      for (let tries = 0, batches = 0; !closing; ) {
        const more = oneBatch();
        if (more === false) break;
        tries = more === 'busy' ? tries + 1 : 0;
        // Writes that keep a catch-up going do not leave the checkpoints to the loop's backstop.
        if (more === true && ++batches % data.checkpointBatches === 0) checkpoint();
        const pauseMs = Math.min(data.maxBusyPauseMs, 2 ** tries);
        await new Promise((resolve) => (tries > 0 ? setTimeout(resolve, pauseMs) : setImmediate(resolve)));
      }
      if (!closing) checkpoint();
    } catch (error) {
      finish(error);
      return;
    }
    running = false;
    if (closing) return finish();
    // Writes came while it ran: again, a little later. Else idle, unless one came just now.
    if (Atomics.load(cells, wrote) === 1) later();
    else {
      Atomics.store(cells, idle, 1);
      if (Atomics.load(cells, wrote) === 1 && Atomics.compareExchange(cells, idle, 1, 0) === 1) later();
    }
  };

  // The next catch-up, a while from now, and the log checkpointed meanwhile.
  const later = () => {
    timer = setTimeout(catchUp, data.delayMs);
    checkpointTimer ??= setTimeout(tick, data.checkpointMs);
  };
  const tick = () => {
    checkpointTimer = undefined;
    // A catch-up under way or done since checkpoints at its end; closing, nothing more.
    if (closing || timer === undefined) return;
    checkpoint();
    checkpointTimer = setTimeout(tick, data.checkpointMs);
  };

  port.on('message', (message: string) => {
    if (message === 'close') {
      closing = true;
      clearTimeout(timer);
      clearTimeout(checkpointTimer);
      if (!running) finish();
    } else if (running || closing) {
      // The running catch-up looks at `wrote` when it ends.
    } else if (message === 'now') {
      clearTimeout(timer);
      void catchUp();
    } else if (message === 'wrote' && !timer) {
      later();
    }
  });
}
