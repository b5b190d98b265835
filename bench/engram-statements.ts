/**
 * Engram's own statements for an open and an append, with no code around them: the least
 * those calls can cost on Engram's schema. The floors (inprocess.ts's raw commit of the
 * same rows, floor-sqlite.ts over HTTP) keep the rows a call must touch (entry, revision,
 * usage) with no index beyond their keys; Engram's schema also keeps what DESIGN asks to
 * be read back: each entry's history by revision, each user's activity by time, the live
 * names, the user's counters, the search index's watermark. Running the store's own SQL
 * (statements.ts, the same prepared text, the same pragmas, opened by connection.ts) in a
 * database of its own tells what of a call's cost over the floor is the schema's, and what
 * is the code's: the tool handler, the Memory service, the storage engine, and the search
 * index catching up, which nothing here does.
 */

import { appendText } from '../src/memory/model/edit.js';
import type { IndexRow } from '../src/memory/model/format.js';
import { utf8Bytes } from '../src/memory/model/text.js';
import { entryBytes, revisionBytes } from '../src/memory/model/usage.js';
import type { EntryRow } from '../src/storage/sql-rows.js';
import { openDatabase } from '../src/storage/sqlite/connection.js';
import { sqliteDriver } from '../src/storage/sqlite/drivers.js';
import { CATCH_UP_SQL } from '../src/storage/sqlite/search-backlog.js';
import { prepareStatements } from '../src/storage/sqlite/statements.js';
import type { FloorEntry } from './floor-memory.js';

/** Who the seeded revisions and the appends are by, as history records a caller's label. */
const ACTOR = 'bench';

export interface EngramStatements {
  /** Adds `entries` to `user` as `Transfer.import` leaves them: each its row and one revision, the user's counters moved. */
  seed(user: string, entries: readonly FloorEntry[]): void;
  /** The user's live entry `name`, read by the statement an open runs. */
  open(user: string, name: string): FloorEntry;
  /**
   * Appends `line` to the user's entry `name` by the statements an Engram append runs, in
   * the caller's transaction (`transaction`); returns its new index line's parts.
   */
  append(user: string, name: string, line: string): IndexRow;
  /** Runs `work` in one immediate transaction, committed durably (WAL, synchronous=FULL) when it returns. */
  transaction<T>(work: () => T): T;
  close(): void;
}

export function openEngramStatements(path: string): EngramStatements {
  const { db } = openDatabase({ path, busyDeadlineMs: 5_000 }, undefined, sqliteDriver('better-sqlite3'));
  const s = prepareStatements(db);
  const watermark = db.prepare(CATCH_UP_SQL.watermark).pluck();
  const read = (user: string, name: string) => s.live.get(user, name) as EntryRow;
  const transact = db.transaction((work: () => unknown) => work());
  return {
    seed: db.transaction((user: string, entries: readonly FloorEntry[]) => {
      let total = 0;
      let history = 0;
      for (const { name, description, body } of entries) {
        const at = Date.now();
        const size = utf8Bytes(body);
        const id = Number(s.insert.run(user, name, description, null, size, at, at, 1).lastInsertRowid);
        s.addRevision.run(user, id, 1, 'import', ACTOR, at, description, body, null);
        total += entryBytes(name, description, size);
        history += revisionBytes(description, body);
      }
      // The user's counters, their row made by the first seed, as the store's addUsage does.
      if (s.counters.get(user) === undefined) s.firstUsage.get(user, total, entries.length, history);
      else s.moveUsage.run(total, entries.length, history, user);
    }),
    open: read,
    append: (user, name, line) => {
      const entry = read(user, name);
      s.counters.get(user);
      const body = appendText(entry.body, line);
      const size = utf8Bytes(body);
      const at = Date.now();
      s.update.run(entry.description, null, size, at, entry.revision + 1, entry.id);
      s.addRevision.run(user, entry.id, entry.revision + 1, 'append', ACTOR, at, entry.description, body, null);
      // The search backlog's check that the new revision is past its watermark (search-backlog.ts, revised).
      watermark.get();
      s.moveUsage.run(size - entry.size, 0, revisionBytes(entry.description, body), user);
      return { name, description: entry.description, size };
    },
    transaction: <T>(work: () => T) => transact.immediate(work) as T,
    close: () => db.close(),
  };
}
