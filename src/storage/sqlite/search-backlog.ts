/**
 * The search index (FTS5 entries_search) follows the entries in batches rather than inside
 * every write: indexing an entry's words in its own write's transaction cost most of that
 * write's CPU and two thirds of the pages it wrote, where a batch of entries shares one
 * new segment. Every change to an entry adds a revision in its own transaction, and the
 * index catches up from a watermark on the revisions' rowids (migrations.ts, steps 14 and
 * 15): the entries of every revision past it are indexed again, so a write writes no mark
 * of its own and a crash loses none. What the watermark cannot show is marked in
 * search_pending: deleted entries (by a trigger, so no purge or trim can miss one), loaded
 * ones (by the load, dump.ts) and a write's entry whose revision is not past it
 * (`revised`). The index catches up: before every search (a search sees every write
 * acknowledged before it began), inside a purge (no word of a purged entry remains), on
 * its own shortly after writes, and as the store closes. Each catch-up batch is one
 * transaction: the entries of the revisions past the watermark become marks, and at most
 * SEARCH_BATCH marked entries are indexed, in turn (catchUpBatch), so the event loop is
 * never held long however many wait, and an entry written again and again while the others
 * take their turn is indexed once, in parts (SEARCH_PARTS): what its appends added since
 * the last catch-up goes in on its own. A long-running server catches up after writes in a
 * worker thread instead (search-worker.ts), off its event loop.
 */

import { createHash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { bodyOf } from '../sql-rows.js';
import { MMAP_BYTES } from './connection.js';
import type { Database, Statement, Transaction } from './driver.js';
import type { Guard } from './guard.js';
import type { SearchWorker } from './search-worker.js';

/** Entries indexed per transaction: a few milliseconds of work. */
const SEARCH_BATCH = 64;

/**
 * How many times a batch's number of entries it may read of the revisions past the
 * watermark. The entries of the revisions it reads become marks (one per entry however
 * many of its revisions wait) and the watermark moves past them, so that a later batch
 * indexes each of those entries once, as it is then: where writes come back to the same
 * entries (a model appending to one entry line by line, a busy server's clients), an
 * entry written many times while its turn comes is indexed once. What a revision costs
 * here is a rowid and an entry id read and a mark, a small part of indexing an entry.
 */
export const REVISIONS_PER_ENTRY = 16;

/**
 * The log's length, in pages, past which the event loop's connection checkpoints it at a
 * commit while the search worker runs (search-worker.ts), which checkpoints after each
 * catch-up: a backstop, should the worker fall behind, some 16 MB of log. Without a worker,
 * SQLite's own 1,000 (DEFAULT_CHECKPOINT_PAGES).
 */
const LOOP_CHECKPOINT_PAGES = 4_000;
const DEFAULT_CHECKPOINT_PAGES = 1_000;

/**
 * The memory map of the file, in bytes, for both connections while the search worker runs
 * (none): the worker's catch-ups and checkpoints grow the file again and again, and at each
 * new size every connection unmapped its map and faulted its pages in again (munmap and
 * page faults ~8% of the loop's samples with 64 users writing, 2026-12-07). Reads copy the
 * pages SQLite does not hold instead; with the worker's commits resetting the loop's page
 * cache, that cost less: in six interleaved pairs (64 users, or one appending to 500
 * entries, 64 connections) the loop's CPU per write was lower in five, writes/s higher in
 * five. Without a worker (stdio, the CLI), the map of connection.ts.
 */
export const WORKER_MMAP_BYTES = 0;

/** How long after a write the index catches up on its own, in ms: writes that come together are indexed together. */
const CATCH_UP_DELAY_MS = 100;

/**
 * How an entry's words are kept in the search index (schema 22): in parts, each an FTS5
 * document. Part 0, at the entry's id as its rowid, holds its name, description and the
 * body as it was when last indexed whole; each later part, at the id plus `stride` times
 * its number, holds only text appended since. Re-indexing an entry whole after every
 * append cost a catch-up the tokenizing and the words of the whole entry again, growing
 * with it (an entry near the 16 KiB cap, ~1 ms for one appended line); a part costs what
 * was appended. An entry gets `max` parts at most: the next catch-up indexes it whole
 * again, as part 0 alone. A search finds an entry by its parts together (statements.ts).
 */
export const SEARCH_PARTS = { max: 16, stride: 2 ** 40 } as const;

/** The statements of a catch-up batch, shared with the search worker (search-worker.ts). */
export const CATCH_UP_SQL = {
  // The marked entries past an entry id, in id order: catch-ups take them in turn.
  pendingAfter: 'SELECT entry_id FROM search_pending WHERE entry_id > ? ORDER BY entry_id LIMIT ?',
  // Marks the entries of a JSON list of ids (those marked already stay as they are).
  markAll: 'INSERT OR IGNORE INTO search_pending (entry_id) SELECT value FROM json_each(?)',
  watermark: 'SELECT revision FROM search_watermark',
  // [rowid, entry id] of the revisions past a rowid, oldest first.
  revisionsAfter: 'SELECT rowid, entry_id FROM revisions WHERE rowid > ? ORDER BY rowid LIMIT ?',
  lastRevision: 'SELECT coalesce(max(rowid), 0) FROM revisions',
  setWatermark: 'UPDATE search_watermark SET revision = @revision WHERE revision IS NOT @revision',
  // For each id of a JSON list: [id, name, description, body] of its live entry (NULLs for
  // none), then its parts, the length of the text they hold and its digest (NULLs when the
  // index holds no part past 0: indexed whole, or never).
  indexed: `SELECT j.value, e.name, e.description, ${bodyOf('e')}, p.parts, p.chars, p.digest
     FROM json_each(?) j
     LEFT JOIN entries e ON e.id = j.value AND e.dropped_at IS NULL
     LEFT JOIN search_parts p ON p.entry_id = j.value`,
  // Deleting a row the index does not hold (an entry created since) changes nothing.
  unindex: 'DELETE FROM entries_search WHERE rowid = ?',
  // The parts of a JSON list of [rowid, name, description, body], in rowid order (CatchUpStatements.reindex says why).
  index: `INSERT INTO entries_search (rowid, name, description, body)
     SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?)`,
  // What the index holds of a JSON list of [id, parts, chars, digest].
  setParts: `INSERT INTO search_parts (entry_id, parts, chars, digest)
     SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?) WHERE true
     ON CONFLICT (entry_id) DO UPDATE SET parts = excluded.parts, chars = excluded.chars, digest = excluded.digest`,
  forgetParts: 'DELETE FROM search_parts WHERE entry_id IN (SELECT value FROM json_each(?))',
  done: 'DELETE FROM search_pending WHERE entry_id IN (SELECT value FROM json_each(?))',
} as const;

const SQL = {
  anyPending: `SELECT EXISTS (SELECT 1 FROM search_pending)
     OR EXISTS (SELECT 1 FROM revisions WHERE rowid > (SELECT revision FROM search_watermark))`,
  mark: 'INSERT OR IGNORE INTO search_pending (entry_id) VALUES (?)',
} as const;

/** The catch-up's statements that read and move the watermark, and how entries are indexed again. */
export type CatchUpStatements = {
  readonly [K in
    | 'pendingAfter'
    | 'markAll'
    | 'watermark'
    | 'revisionsAfter'
    | 'lastRevision'
    | 'setWatermark']: Statement;
} & {
  /**
   * Indexes the entries `ids` as they are now (a dropped or deleted one: none of its words),
   * inside the caller's transaction, and clears their marks. An entry whose indexed parts
   * hold its name, description and body up to a line break, unchanged (their digest says
   * so), and fewer than SEARCH_PARTS.max parts, gets what follows as a part of its own;
   * any other is indexed whole again, as part 0 alone. The parts go in with one statement,
   * in rowid order: FTS5 keeps the words it is given in memory while their rowids rise,
   * and writes them as one segment when the next statement of the transaction starts or at
   * the commit (or once they pass its hashsize, 1 MB). A statement per entry therefore
   * wrote a segment per entry, and merging those was much of a catch-up's work. Measured at
   * 64 connections (2026-12-07, three interleaved pairs each): the search worker's CPU per
   * write 82–91 µs against 106–139 with 64 users writing, 161–185 against 184–244 with one
   * user appending to 500 entries, FTS5's secure-delete then still on (schema 21 says why it
   * went, and what it cost).
   */
  readonly reindex: (ids: Iterable<number>) => void;
};

/** A digest of text fed in pieces (node:crypto's Hash), copied to read it part way. */
interface Digest {
  update(text: string): Digest;
  copy(): Digest;
  digest(encoding: 'base64'): string;
}

/**
 * The catch-up's statements, prepared on `db`; `createHash` is node:crypto's. It uses
 * nothing but its arguments: the search worker runs its source text on a connection of
 * its own.
 */
export function prepareCatchUp(
  db: Database,
  sql: typeof CATCH_UP_SQL,
  parts: typeof SEARCH_PARTS,
  createHash: (algorithm: 'sha256') => Digest,
): CatchUpStatements {
  const indexed = db.prepare(sql.indexed).raw();
  const unindex = db.prepare(sql.unindex);
  const index = db.prepare(sql.index);
  const setParts = db.prepare(sql.setParts);
  const forgetParts = db.prepare(sql.forgetParts);
  const done = db.prepare(sql.done);
  type Row = [number, string | null, string | null, string | null, number | null, number | null, string | null];
  return {
    pendingAfter: db.prepare(sql.pendingAfter).pluck(),
    markAll: db.prepare(sql.markAll),
    watermark: db.prepare(sql.watermark).pluck(),
    revisionsAfter: db.prepare(sql.revisionsAfter).raw(),
    lastRevision: db.prepare(sql.lastRevision).pluck(),
    setWatermark: db.prepare(sql.setWatermark),
    reindex: (ids) => {
      const entries = [...new Set(ids)].sort((a, b) => a - b);
      const list = JSON.stringify(entries);
      const removed: number[] = [];
      const added: Array<[number, string | null, string | null, string]> = [];
      const kept: Array<[number, number, number, string]> = [];
      const gone: number[] = [];
      // Every part of entry `id` the index holds: without a row of parts (`count` null), part 0 at most.
      const unindexAll = (id: number, count: number | null) => {
        for (let part = 0; part < (count ?? 1); part++) removed.push(id + part * parts.stride);
      };
      for (const [id, name, description, body, count, chars, digest] of indexed.all(list) as Row[]) {
        if (name === null || description === null || body === null) {
          unindexAll(id, count);
          gone.push(id);
          continue;
        }
        const head = `${name}\0${description}\0`;
        // What was appended after a line break to the text the parts hold, if their digest says it is unchanged.
        if (
          count !== null &&
          chars !== null &&
          count < parts.max &&
          body.length > chars &&
          (chars === 0 || body[chars - 1] === '\n' || body[chars] === '\n')
        ) {
          const before = createHash('sha256').update(head).update(body.slice(0, chars));
          if (before.copy().digest('base64') === digest) {
            added.push([id + count * parts.stride, null, null, body.slice(chars)]);
            kept.push([id, count + 1, body.length, before.update(body.slice(chars)).digest('base64')]);
            continue;
          }
        }
        unindexAll(id, count);
        added.push([id, name, description, body]);
        kept.push([id, 1, body.length, createHash('sha256').update(head).update(body).digest('base64')]);
      }
      for (const rowid of removed) unindex.run(rowid);
      if (added.length > 0) index.run(JSON.stringify(added.sort((a, b) => a[0] - b[0])));
      if (kept.length > 0) setParts.run(JSON.stringify(kept));
      if (gone.length > 0) forgetParts.run(JSON.stringify(gone));
      done.run(list);
    },
  };
}

/** Where a run of catch-ups has got to in the marks: the entry id the last batch ended at. */
export interface CatchUpTurn {
  after: number;
}

/**
 * One batch, inside the caller's immediate transaction. First the revisions past the
 * watermark, `revisionsPerEntry` times `limit` of them at most, become marks of their
 * entries, and the watermark moves past them; then the next `limit` marked entries in turn
 * (by id, from where `turn` says the last batch ended, round to the start again) are
 * indexed as they are now (a dropped or deleted one: none of its words) and their marks
 * cleared. An entry marked again after its turn waits for the others' before it is indexed
 * again. True when more wait. Like prepareCatchUp, it uses nothing but its arguments.
 */
export function catchUpBatch(
  s: CatchUpStatements,
  limit: number,
  revisionsPerEntry: number,
  turn: CatchUpTurn,
): boolean {
  const read = limit * revisionsPerEntry;
  const newer = s.revisionsAfter.all(s.watermark.get(), read) as Array<[number, number]>;
  if (newer.length > 0) s.markAll.run(JSON.stringify([...new Set(newer.map(([, entry]) => entry))]));
  // Past the last revision read; when every one past the watermark was read, at the last
  // there is, which is lower when the newest were deleted (their rowids are taken again).
  s.setWatermark.run({ revision: newer.length < read ? s.lastRevision.get() : newer[newer.length - 1]![0] });
  const ids = s.pendingAfter.all(turn.after, limit) as number[];
  if (ids.length < limit) {
    // Round to the start: the marks before where the last batch ended.
    for (const id of s.pendingAfter.all(0, limit - ids.length) as number[]) if (id <= turn.after) ids.push(id);
  }
  if (ids.length > 0) {
    s.reindex(ids);
    turn.after = ids[ids.length - 1]!;
  }
  return ids.length === limit || newer.length === read;
}

export class SearchBacklog {
  private readonly statements: { readonly [K in keyof typeof SQL]: Statement };
  private readonly catchUpStatements: CatchUpStatements;
  /** One batch in one immediate transaction; true when more entries wait. */
  private readonly batch: Transaction<() => boolean>;
  private timer: NodeJS.Timeout | undefined;
  /** The catch-up running now, if any. */
  private running: Promise<void> | undefined;
  /** This process wrote through the store (wrote() was called). */
  private hasWritten = false;
  /**
   * Starts the search worker when the first catch-up is due, when the store has one; it then
   * catches up after writes. Undefined from it: no thread could be started, the loop catches up.
   */
  private startWorker: (() => SearchWorker | undefined) | undefined;
  private worker: SearchWorker | undefined;

  constructor(
    private readonly db: Database,
    private readonly guard: Guard,
    startWorker?: (onGone: () => void) => SearchWorker | undefined,
  ) {
    this.statements = {
      anyPending: db.prepare(SQL.anyPending).pluck(),
      mark: db.prepare(SQL.mark),
    };
    this.catchUpStatements = prepareCatchUp(db, CATCH_UP_SQL, SEARCH_PARTS, createHash);
    const turn: CatchUpTurn = { after: 0 };
    this.batch = db.transaction(() => catchUpBatch(this.catchUpStatements, SEARCH_BATCH, REVISIONS_PER_ENTRY, turn));
    // A worker that stopped (it failed, or the file was replaced) leaves the catch-up, and the checkpoints, to this loop again.
    this.startWorker =
      startWorker &&
      (() =>
        startWorker(() => {
          if (this.db.open) {
            this.db.pragma(`wal_autocheckpoint = ${DEFAULT_CHECKPOINT_PAGES}`);
            this.db.pragma(`mmap_size = ${MMAP_BYTES}`);
          }
          this.scheduleCatchUp();
        }));
  }

  /**
   * A write added revision `rowid` of entry `id`, in the caller's transaction: a catch-up
   * finds it past the watermark, unless its rowid is not past it (taken again after the
   * newest revisions were deleted) or it is not `kept` (trimmed at once by a history limit
   * of 0): then the entry is marked.
   */
  revised(id: number, rowid: number, kept: boolean): void {
    if (!kept || rowid <= (this.catchUpStatements.watermark.get() as number)) this.statements.mark.run(id);
  }

  /** Indexes the entries `ids` as they are now (a dropped or deleted one: none of its words), inside the caller's transaction. */
  catchUp(ids: readonly number[]): void {
    this.catchUpStatements.reindex(ids);
  }

  /**
   * Every marked entry indexed, a batch per transaction, the event loop free between them.
   * One catch-up runs at a time: a timer or a search that comes while one runs waits for it,
   * then indexes what it left (marks made after its last batch). Several at once each took
   * a batch in every turn of the event loop, and more of them started with every write:
   * after an import of 100,000 entries a call waited seconds.
   */
  async drain(): Promise<void> {
    while (this.running) await this.running.catch(() => {});
    if (!this.statements.anyPending.get()) return;
    const run = this.catchUpAll();
    this.running = run;
    try {
      await run;
    } finally {
      this.running = undefined;
    }
  }

  /**
   * Brings forward the catch-up this process's writes made due, and waits for one under
   * way: then none runs on this connection until the next write, so a read transaction
   * held across turns of the event loop (a dump in batches) is not made a write by one.
   */
  async settle(): Promise<void> {
    if (this.timer === undefined && this.running === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.drain();
  }

  private async catchUpAll(): Promise<void> {
    while (await this.guard.write(() => this.batch.immediate())) await nextTurn();
  }

  /**
   * A write marked an entry: the index catches up a little later, on a timer that keeps no
   * process alive; where the store has a search worker, in the worker, started when the
   * first catch-up is due (a process that writes once and closes soon never starts one).
   * What fails there is left for the next search, which catches up itself and reports the
   * failure to its caller.
   */
  wrote(): void {
    this.hasWritten = true;
    if (this.worker?.running) this.worker.wrote();
    else this.scheduleCatchUp();
  }

  private scheduleCatchUp(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.db.open) return;
      const start = this.startWorker;
      this.startWorker = undefined;
      this.worker = start?.();
      if (!this.worker) {
        this.drain().catch(() => {});
        return;
      }
      this.db.pragma(`wal_autocheckpoint = ${LOOP_CHECKPOINT_PAGES}`);
      this.db.pragma(`mmap_size = ${WORKER_MMAP_BYTES}`);
      this.worker.catchUpNow();
    }, CATCH_UP_DELAY_MS).unref();
  }

  /**
   * The process is letting the file go: when it wrote, what is marked is indexed now, not
   * left to the next process that opens it (after an import of 100,000 entries, `engram
   * stdio` spent its first half minute catching up, each call waiting behind a batch); a
   * process that only read leaves the marks to the writers. What fails is left marked, for
   * whoever writes or searches next.
   */
  async close(): Promise<void> {
    this.startWorker = undefined;
    await this.worker?.close();
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.hasWritten && this.db.open) await this.drain().catch(() => {});
  }
}
