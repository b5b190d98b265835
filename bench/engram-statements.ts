/**
 * Engram's own statements for an append, with no code around them: the least an append
 * can cost on Engram's schema. The in-process floor (inprocess.ts) commits the three rows
 * an append must write (entry, revision, usage) with no index beyond their keys; Engram's
 * schema also keeps what DESIGN asks to be read back: each entry's history by revision,
 * each user's activity by time, the live names, the user's counters, the search index's
 * watermark. Running the store's own SQL (statements.ts, the same prepared text, the same
 * pragmas, opened by connection.ts) in a database of its own, in one immediate transaction
 * per append as the group commit runs a write alone, tells what of an append's time over
 * the floor is the schema's and what is the code's: the tool handler, the Memory service
 * and the storage engine.
 */

import { appendText } from '../src/memory/model/edit.js';
import type { EntryRow } from '../src/storage/sql-rows.js';
import { openDatabase } from '../src/storage/sqlite/connection.js';
import { sqliteDriver } from '../src/storage/sqlite/drivers.js';
import { CATCH_UP_SQL } from '../src/storage/sqlite/search-backlog.js';
import { prepareStatements } from '../src/storage/sqlite/statements.js';
import { bodyOf, subject } from './content.js';

const USER = 'local';
const ACTOR = 'bench';

export interface EngramStatements {
  /** Adds the entries `from` to `to` (exclusive) as `Transfer.import` leaves them: each its row and one revision, the user's counters. */
  grow(from: number, to: number): void;
  /** Appends `line` to the entry of subject `id` by the statements an Engram append runs, committed durably. */
  append(id: number, line: string): void;
  close(): void;
}

export function openEngramStatements(path: string): EngramStatements {
  const { db } = openDatabase({ path, busyDeadlineMs: 5_000 }, undefined, sqliteDriver('better-sqlite3'));
  const s = prepareStatements(db);
  const watermark = db.prepare(CATCH_UP_SQL.watermark).pluck();
  const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
  const grow = db.transaction((from: number, to: number) => {
    let total = 0;
    let history = 0;
    for (let index = from; index < to; index++) {
      const { name, description } = subject(index);
      const body = bodyOf(subject(index));
      const at = Date.now();
      const id = Number(s.insert.run(USER, name, description, null, bytes(body), at, at, 1).lastInsertRowid);
      s.addRevision.run(USER, id, 1, 'import', ACTOR, at, description, body, null);
      total += bytes(name) + bytes(description) + bytes(body);
      history += bytes(description) + bytes(body);
    }
    // The user's counters, their row made on the first call, as the store's addUsage does.
    if (s.counters.get(USER) === undefined) s.firstUsage.get(USER, total, to - from, history);
    else s.moveUsage.run(total, to - from, history, USER);
  });
  const append = db.transaction((id: number, line: string) => {
    const entry = s.live.get(USER, subject(id).name) as EntryRow;
    s.counters.get(USER);
    const body = appendText(entry.body, line);
    const size = bytes(body);
    const at = Date.now();
    s.update.run(entry.description, null, size, at, entry.revision + 1, entry.id);
    s.addRevision.run(USER, entry.id, entry.revision + 1, 'append', ACTOR, at, entry.description, body, null);
    // The search backlog's check that the new revision is past its watermark (search-backlog.ts, revised).
    watermark.get();
    s.moveUsage.run(size - entry.size, 0, bytes(entry.description) + size, USER);
  });
  return {
    grow,
    append: (id, line) => append.immediate(id, line),
    close: () => db.close(),
  };
}
