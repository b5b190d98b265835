/**
 * A SQLite write moves its user's counters without reading them back (primitives.ts): the
 * counters after it are those it read plus what it moved. That must be what the row holds
 * after every run of the engine, whether the run read them first or not, whether another
 * connection moved them between two runs, and after a run whose savepoint was rolled back;
 * and the change counter told to the index cache must be the row's.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { UsageDelta } from '../../src/memory/model/apply.js';
import { get, type Work } from '../../src/storage/engine/drive.js';
import type { IndexCache } from '../../src/storage/sqlite/index-cache.js';
import { MIGRATIONS } from '../../src/storage/sqlite/migrations.js';
import { SqlitePrimitives } from '../../src/storage/sqlite/primitives.js';
import type { SearchBacklog } from '../../src/storage/sqlite/search-backlog.js';
import { prepareStatements } from '../../src/storage/sqlite/statements.js';
import { migrateSqliteTo } from '../helpers/sqlite-schema.js';

const moved = (historyBytes: number, totalBytes = 0, entries = 0): UsageDelta => ({
  totalBytes,
  entries,
  historyBytes,
});

/** The work of `steps`, as the engine would hand it to run. */
function* work<T>(steps: () => T): Work<T> {
  return yield* get(steps());
}

describe('SQLite counters moved by a write', () => {
  let folder: string;
  let db: Database.Database;
  let other: Database.Database;
  let counted: Array<[string, number]>;
  let p: SqlitePrimitives;

  const row = (user: string) =>
    db
      .prepare(
        'SELECT total_bytes AS totalBytes, entries, history_bytes AS historyBytes, changes FROM users WHERE user_id = ?',
      )
      .get(user);

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-counters-'));
    db = new Database(join(folder, 'memory.db'));
    db.pragma('journal_mode = WAL');
    migrateSqliteTo(db, MIGRATIONS.length);
    other = new Database(join(folder, 'memory.db'));
    counted = [];
    const indexCache = { counted: (user: string, changes: number) => counted.push([user, changes]) };
    p = new SqlitePrimitives(prepareStatements(db), indexCache as unknown as IndexCache, {} as SearchBacklog);
    db.exec("INSERT INTO users (user_id, total_bytes, entries, history_bytes, changes) VALUES ('ada', 100, 2, 300, 7)");
  });

  afterEach(async () => {
    db.close();
    other.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('gives the counters the row holds after each move, read once before them', () => {
    const after = p.run(
      work(() => {
        expect(p.usage('ada')).toEqual({ totalBytes: 100, entries: 2 });
        const first = p.addUsage('ada', moved(50, 20, 1));
        expect(first).toEqual({ historyBytes: 350, entries: 3 });
        return p.addUsage('ada', moved(-30));
      }),
    );
    expect(after).toEqual({ historyBytes: 320, entries: 3 });
    expect(row('ada')).toEqual({ totalBytes: 120, entries: 3, historyBytes: 320, changes: 9 });
    expect(counted).toEqual([
      ['ada', 8],
      ['ada', 9],
    ]);
  });

  it('reads the counters when the run did not (a purge, a trim on its own)', () => {
    expect(p.run(work(() => p.addUsage('ada', moved(-100, -40, -1))))).toEqual({ historyBytes: 200, entries: 1 });
    expect(row('ada')).toEqual({ totalBytes: 60, entries: 1, historyBytes: 200, changes: 8 });
  });

  it('reads them again in the next run: another connection moved them in between', () => {
    p.run(work(() => p.addUsage('ada', moved(1))));
    other.exec(
      "UPDATE users SET history_bytes = history_bytes + 1000, entries = 5, changes = changes + 4 WHERE user_id = 'ada'",
    );
    expect(p.run(work(() => p.addUsage('ada', moved(1))))).toEqual({ historyBytes: 1302, entries: 5 });
    expect(row('ada')).toEqual({ totalBytes: 100, entries: 5, historyBytes: 1302, changes: 13 });
    expect(counted.at(-1)).toEqual(['ada', 13]);
  });

  it('keeps nothing of a run that failed, whose savepoint was rolled back', () => {
    db.transaction(() => {
      const failing = db.transaction(() =>
        p.run(
          work(() => {
            p.usage('ada');
            p.addUsage('ada', moved(500, 500, 1));
            throw new Error('refused after the counters moved');
          }),
        ),
      );
      expect(() => failing()).toThrow('refused after the counters moved');
      expect(p.run(work(() => p.addUsage('ada', moved(1))))).toEqual({ historyBytes: 301, entries: 2 });
    })();
    expect(row('ada')).toEqual({ totalBytes: 100, entries: 2, historyBytes: 301, changes: 8 });
  });

  it("keeps each user's counters apart within one run", () => {
    db.exec("INSERT INTO users (user_id, total_bytes, entries, history_bytes, changes) VALUES ('bob', 10, 1, 10, 3)");
    p.run(
      work(() => {
        p.usage('ada');
        p.addUsage('bob', moved(5));
        expect(p.addUsage('ada', moved(5))).toEqual({ historyBytes: 305, entries: 2 });
      }),
    );
    expect(row('bob')).toEqual({ totalBytes: 10, entries: 1, historyBytes: 15, changes: 4 });
  });

  it("starts a user's first counters at what moved, their change counter past the floor a load left", () => {
    db.pragma('user_version = 41');
    const after = p.run(
      work(() => {
        expect(p.usage('cy')).toEqual({ totalBytes: 0, entries: 0 });
        p.addUsage('cy', moved(70, 30, 1));
        return p.addUsage('cy', moved(-20));
      }),
    );
    expect(after).toEqual({ historyBytes: 50, entries: 1 });
    expect(row('cy')).toEqual({ totalBytes: 30, entries: 1, historyBytes: 50, changes: 43 });
    expect(counted).toEqual([
      ['cy', 42],
      ['cy', 43],
    ]);
  });

  it('refuses to go on when the counters it read are gone from under the write', () => {
    expect(() =>
      p.run(
        work(() => {
          p.usage('ada');
          db.exec("DELETE FROM users WHERE user_id = 'ada'");
          return p.addUsage('ada', moved(1));
        }),
      ),
    ).toThrow('the counters of ada are gone mid-write');
  });
});
