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
 * its own shortly after writes, and as the store closes. Each catch-up is one transaction
 * of at most SEARCH_BATCH marks and as many revisions, so the event loop is never held
 * long however many wait.
 */

import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Database, Statement, Transaction } from './driver.js';
import type { Guard } from './guard.js';
import { bodyOf } from './statements.js';

/** Entries indexed per transaction: a few milliseconds of work. */
const SEARCH_BATCH = 64;

/** How long after a write the index catches up on its own, in ms: writes that come together are indexed together. */
const CATCH_UP_DELAY_MS = 100;

const SQL = {
  anyPending: `SELECT EXISTS (SELECT 1 FROM search_pending)
     OR EXISTS (SELECT 1 FROM revisions WHERE rowid > (SELECT revision FROM search_watermark))`,
  oldestPending: 'SELECT entry_id FROM search_pending ORDER BY entry_id LIMIT ?',
  // [rowid, entry id] of the revisions past the watermark, oldest first.
  newerRevisions: `SELECT rowid, entry_id FROM revisions WHERE rowid > (SELECT revision FROM search_watermark)
     ORDER BY rowid LIMIT ?`,
  lastRevision: 'SELECT coalesce(max(rowid), 0) FROM revisions',
  watermark: 'SELECT revision FROM search_watermark',
  setWatermark: 'UPDATE search_watermark SET revision = @revision WHERE revision IS NOT @revision',
  mark: 'INSERT OR IGNORE INTO search_pending (entry_id) VALUES (?)',
  // Deleting a row the index does not hold (an entry created since) changes nothing.
  unindex: 'DELETE FROM entries_search WHERE rowid = ?',
  index: `INSERT INTO entries_search (rowid, name, description, body)
     SELECT id, name, description, ${bodyOf('entries')} FROM entries WHERE id = ? AND dropped_at IS NULL`,
  done: 'DELETE FROM search_pending WHERE entry_id = ?',
} as const;

export class SearchBacklog {
  private readonly statements: { readonly [K in keyof typeof SQL]: Statement };
  /** One batch in one immediate transaction; true when more entries wait. */
  private readonly batch: Transaction<() => boolean>;
  private timer: NodeJS.Timeout | undefined;
  /** The catch-up running now, if any. */
  private running: Promise<void> | undefined;
  /** This process wrote through the store (wrote() was called). */
  private hasWritten = false;

  constructor(
    private readonly db: Database,
    private readonly guard: Guard,
  ) {
    this.statements = {
      anyPending: db.prepare(SQL.anyPending).pluck(),
      oldestPending: db.prepare(SQL.oldestPending).pluck(),
      newerRevisions: db.prepare(SQL.newerRevisions).raw(),
      lastRevision: db.prepare(SQL.lastRevision).pluck(),
      watermark: db.prepare(SQL.watermark).pluck(),
      setWatermark: db.prepare(SQL.setWatermark),
      mark: db.prepare(SQL.mark),
      unindex: db.prepare(SQL.unindex),
      index: db.prepare(SQL.index),
      done: db.prepare(SQL.done),
    };
    this.batch = db.transaction(() => {
      const s = this.statements;
      const ids = s.oldestPending.all(SEARCH_BATCH) as number[];
      const newer = s.newerRevisions.all(SEARCH_BATCH) as Array<[number, number]>;
      this.catchUp([...new Set([...ids, ...newer.map(([, entry]) => entry)])]);
      // Past the last revision read; when every one past the watermark was read, at the last
      // there is, which is lower when the newest were deleted (their rowids are taken again).
      const last =
        newer.length === SEARCH_BATCH ? (newer[SEARCH_BATCH - 1] as [number, number])[0] : s.lastRevision.get();
      s.setWatermark.run({ revision: last });
      return ids.length === SEARCH_BATCH || newer.length === SEARCH_BATCH;
    });
  }

  /**
   * A write added revision `rowid` of entry `id`, in the caller's transaction: a catch-up
   * finds it past the watermark, unless its rowid is not past it (taken again after the
   * newest revisions were deleted) or it is not `kept` (trimmed at once by a history limit
   * of 0): then the entry is marked.
   */
  revised(id: number, rowid: number, kept: boolean): void {
    const s = this.statements;
    if (!kept || rowid <= (s.watermark.get() as number)) s.mark.run(id);
  }

  /** Indexes the entries `ids` as they are now (a dropped or deleted one: none of its words), inside the caller's transaction. */
  catchUp(ids: readonly number[]): void {
    const s = this.statements;
    for (const id of ids) {
      s.unindex.run(id);
      s.index.run(id);
      s.done.run(id);
    }
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

  private async catchUpAll(): Promise<void> {
    while (await this.guard.write(() => this.batch.immediate())) await nextTurn();
  }

  /**
   * A write marked an entry: the index catches up a little later, on a timer that keeps no
   * process alive. What fails there is left for the next search, which catches up itself
   * and reports the failure to its caller.
   */
  wrote(): void {
    this.hasWritten = true;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.db.open) this.drain().catch(() => {});
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
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.hasWritten && this.db.open) await this.drain().catch(() => {});
  }
}
