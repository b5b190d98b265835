/**
 * The SQLite search index follows writes in batches (search-backlog.ts): a write only leaves
 * its entry waiting (a revision past the watermark, or a mark where that cannot show it), in
 * its own transaction; a search first indexes every waiting entry, whichever
 * connection wrote it, and the store catches up on its own shortly after writes; a
 * database at schema 8, whose index triggers kept up to date, keeps its index on
 * upgrading and follows the writes after. The store's timers are faked (not its
 * setImmediate), so that what a write leaves marked is seen before the catch-up it schedules.
 *
 * Invariant of the search backlog (docs/accelerators.md, "Storage": not switchable, the
 * watermark and the marks are the schema's): after a catch-up, entries_search holds
 * exactly the words of the live entries; every revision past the watermark and every mark
 * is indexed before any search and inside a purge; a crash loses no mark.
 */

import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMemory } from '../../src/memory/memory.js';
import type { Caller, Store } from '../../src/memory/port.js';
import { appendLine, bytes, drop, put } from '../../src/storage/contract/setup.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import {
  CATCH_UP_SQL,
  type CatchUpTurn,
  catchUpBatch,
  prepareCatchUp,
  SEARCH_PARTS,
} from '../../src/storage/sqlite/search-backlog.js';
import { rules } from '../helpers/rules.js';
import { migrateSqliteTo } from '../helpers/sqlite-schema.js';

const alice: Caller = { user: 'alice', label: 'search-backlog-test' };

async function found(store: Store, query: string): Promise<string[]> {
  return (await createMemory({ store }).search(alice, query)).map((hit) => hit.name);
}

/**
 * The ids of the entries waiting for the index, read by a connection of its own: those
 * marked, and those of the revisions past the watermark (schema 14).
 */
function marked(path: string): number[] {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare(`SELECT entry_id FROM search_pending UNION
        SELECT entry_id FROM revisions WHERE rowid > (SELECT revision FROM search_watermark) ORDER BY entry_id`)
      .pluck()
      .all() as number[];
  } finally {
    db.close();
  }
}

/** The search watermark: the rowid of the last revision whose entry is marked or indexed. */
function watermark(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT revision FROM search_watermark').pluck().get() as number;
  } finally {
    db.close();
  }
}

/**
 * How many segments the search index is made of, from FTS5's structure record (rowid 10 of
 * entries_search_data: a 4-byte cookie, the 4-byte mark of its second format, then the
 * number of levels and of segments as varints; one byte each below 128).
 */
function segments(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    const record = db.prepare('SELECT block FROM entries_search_data WHERE id = 10').pluck().get() as Buffer;
    const at = record.readUInt32BE(4) === 0xff000001 ? 8 : 4;
    expect(record[at]! < 128 && record[at + 1]! < 128).toBe(true);
    return record[at + 1]!;
  } finally {
    db.close();
  }
}

/**
 * Runs catch-up batches of `limit` entries on a connection of its own, as the search worker
 * does, taking turns from `turn`; returns what each said of more waiting.
 */
function batches(
  path: string,
  limit: number,
  revisionsPerEntry: number,
  count: number,
  turn: CatchUpTurn = { after: 0 },
): boolean[] {
  const db = new Database(path);
  try {
    const statements = prepareCatchUp(db, CATCH_UP_SQL, SEARCH_PARTS, createHash);
    const batch = db.transaction(() => catchUpBatch(statements, limit, revisionsPerEntry, turn));
    return Array.from({ length: count }, () => batch.immediate());
  } finally {
    db.close();
  }
}

describe('SQLite search backlog', () => {
  let folder: string;
  let path: string;

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-search-backlog-'));
    path = join(folder, 'memory.db');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });

  afterEach(async () => {
    vi.useRealTimers();
    await rm(folder, { recursive: true, force: true });
  });

  it('marks each written entry once in its write, and a search indexes them all before it looks', async () => {
    const store = openSqliteStore({ path });
    try {
      await store.mutate(alice, 'topics/a', put('alpha words\n'), rules);
      await store.mutate(alice, 'topics/a', put('alpha beta\n'), rules);
      await store.mutate(alice, 'topics/b', put('gamma\n'), rules);
      await store.mutate(alice, 'topics/c', put('beta too\n'), rules);
      await store.mutate(alice, 'topics/c', drop, rules);
      expect(marked(path)).toEqual([1, 2, 3]);

      expect(await found(store, 'beta')).toEqual(['topics/a']);
      expect(await found(store, 'words')).toEqual([]);
      expect(marked(path)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("indexes what another connection wrote before this one's search", async () => {
    const writer = openSqliteStore({ path });
    const reader = openSqliteStore({ path });
    try {
      expect(await found(reader, 'delta')).toEqual([]);
      await writer.mutate(alice, 'topics/d', put('delta\n'), rules);
      expect(await found(reader, 'delta')).toEqual(['topics/d']);
      await writer.purge('alice', 'topics/d', { includeLive: true });
      expect(await found(reader, 'delta')).toEqual([]);
    } finally {
      await writer.close();
      await reader.close();
    }
  });

  it('catches up on its own a while after writes', async () => {
    const store = openSqliteStore({ path });
    try {
      await store.mutate(alice, 'topics/e', put('epsilon\n'), rules);
      expect(marked(path)).toEqual([1]);
      await vi.runOnlyPendingTimersAsync();
      await vi.waitFor(() => expect(marked(path)).toEqual([]));
    } finally {
      await store.close();
    }
  });

  it('runs one catch-up at a time: searches that come while one runs wait for it, then look again', async () => {
    const store = openSqliteStore({ path });
    try {
      for (let i = 0; i < 200; i++) await store.mutate(alice, `topics/n${i}`, put(`common word${i}\n`), rules);
      // Each search starts a catch-up whose first batch (64 entries) runs before it returns;
      // the second and third wait for that one, so only one batch is done here, not three.
      const searches = [0, 1, 2].map(() => store.search('alice', ['word199'], { limit: 1 }));
      expect(marked(path)).toHaveLength(200 - 64);
      const results = await Promise.all(searches);
      expect(results.map((hits) => hits.map((hit) => hit.name))).toEqual(Array(3).fill(['topics/n199']));
      expect(marked(path)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('indexes what is marked before its store closes, leaving nothing to the next process', async () => {
    const store = openSqliteStore({ path });
    for (let i = 0; i < 100; i++) await store.mutate(alice, `topics/n${i}`, put(`common word${i}\n`), rules);
    expect(marked(path)).toHaveLength(100);
    await store.close();
    expect(marked(path)).toEqual([]);
    const reopened = openSqliteStore({ path });
    try {
      expect(await found(reopened, 'word42')).toEqual(['topics/n42']);
    } finally {
      await reopened.close();
    }
  });

  it('leaves the marks to the writer when it only read: a read-only command does not pay for them', async () => {
    const writer = openSqliteStore({ path });
    try {
      for (let i = 0; i < 3; i++) await writer.mutate(alice, `topics/n${i}`, put(`common word${i}\n`), rules);
      const reader = openSqliteStore({ path });
      expect((await reader.index('alice')).map((row) => row.name)).toHaveLength(3);
      await reader.close();
      expect(marked(path)).toHaveLength(3);
    } finally {
      await writer.close();
    }
    expect(marked(path)).toEqual([]);
  });

  it('many marks are indexed batch by batch, none left out', async () => {
    const store = openSqliteStore({ path });
    try {
      for (let i = 0; i < 150; i++) await store.mutate(alice, `topics/n${i}`, put(`common word${i}\n`), rules);
      expect(marked(path)).toHaveLength(150);
      const all = await createMemory({ store }).search(alice, 'common', { limit: 50 });
      expect(all).toHaveLength(50);
      expect(await found(store, 'word149')).toEqual(['topics/n149']);
      expect(marked(path)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('indexes an entry once however many of its revisions wait: 300 appends to 3 entries are one batch', async () => {
    const store = openSqliteStore({ path });
    try {
      for (let i = 0; i < 300; i++) await store.mutate(alice, `topics/n${i % 3}`, appendLine(`line${i}`), rules);
      expect(marked(path)).toEqual([1, 2, 3]);
      expect(batches(path, 64, 16, 1)).toEqual([false]);
      expect(marked(path)).toEqual([]);
      expect(await found(store, 'line299')).toEqual(['topics/n2']);
      expect(await found(store, 'line0')).toEqual(['topics/n0']);
    } finally {
      await store.close();
    }
  });

  it('adds one segment to the index a batch, whatever order its entries were written in', async () => {
    const store = openSqliteStore({ path });
    try {
      for (let i = 1; i <= 4; i++) await store.mutate(alice, `topics/n${i}`, appendLine(`first${i}`), rules);
      expect(batches(path, 64, 16, 1)).toEqual([false]);
      expect(segments(path)).toBe(1);
      // The newest entry first. A statement an entry made FTS5 write a segment for each (and
      // merge them, eight at a time), the words it was given in rising rowids or not.
      for (let i = 4; i >= 1; i--) await store.mutate(alice, `topics/n${i}`, appendLine(`second${i}`), rules);
      expect(batches(path, 64, 16, 1)).toEqual([false]);
      expect(segments(path)).toBe(2);
      expect(await found(store, 'second1')).toEqual(['topics/n1']);
      expect(await found(store, 'first4 second4')).toEqual(['topics/n4']);
    } finally {
      await store.close();
    }
  });

  it('marks the entries of the revisions it reads, moves the watermark past them, and indexes its number of marks', async () => {
    const store = openSqliteStore({ path });
    try {
      for (const name of ['a', 'a', 'b', 'a', 'c', 'd']) {
        await store.mutate(alice, `topics/${name}`, appendLine(`word${name}`), rules);
      }
      // All six revisions read (2 × 16 at most): four marks, the first two indexed.
      const turn = { after: 0 };
      expect(batches(path, 2, 16, 1, turn)).toEqual([true]);
      expect(marked(path)).toEqual([3, 4]);
      expect(watermark(path)).toBe(6);
      expect(turn.after).toBe(2);
      expect(batches(path, 2, 16, 2, turn)).toEqual([true, false]);
      expect(marked(path)).toEqual([]);
      expect(await found(store, 'worda')).toEqual(['topics/a']);
      expect(await found(store, 'wordd')).toEqual(['topics/d']);
    } finally {
      await store.close();
    }
  });

  it('reads at most its number of entries times revisionsPerEntry revisions a batch, and loses none', async () => {
    const store = openSqliteStore({ path });
    try {
      for (let i = 0; i < 18; i++) await store.mutate(alice, `topics/n${i % 6}`, appendLine(`line${i}`), rules);
      // Two entries a batch, two revisions each at most: four revisions read a batch, until the
      // watermark is past all 18; the marks of the six entries indexed two at a time.
      expect(batches(path, 2, 2, 4)).toEqual([true, true, true, true]);
      expect(watermark(path)).toBe(16);
      expect(batches(path, 2, 2, 3)).toEqual([true, true, false]);
      expect(marked(path)).toEqual([]);
      for (let n = 0; n < 6; n++) expect(await found(store, `line${12 + n}`)).toEqual([`topics/n${n}`]);
    } finally {
      await store.close();
    }
  });

  it('takes the marks in turn: an entry written again after its turn waits for the others', async () => {
    const store = openSqliteStore({ path });
    try {
      for (let i = 1; i <= 4; i++) await store.mutate(alice, `topics/n${i}`, appendLine(`first${i}`), rules);
      const turn = { after: 0 };
      expect(batches(path, 2, 16, 1, turn)).toEqual([true]);
      expect(marked(path)).toEqual([3, 4]);
      // Entry 1 written again: its mark comes after 3 and 4, whose turn it is.
      await store.mutate(alice, 'topics/n1', appendLine('second1'), rules);
      expect(batches(path, 2, 16, 1, turn)).toEqual([true]);
      expect(marked(path)).toEqual([1]);
      // Round to the start: 1 is next, and then nothing waits.
      expect(batches(path, 2, 16, 1, turn)).toEqual([false]);
      expect(marked(path)).toEqual([]);
      expect(await found(store, 'second1')).toEqual(['topics/n1']);
      expect(await found(store, 'first4')).toEqual(['topics/n4']);
    } finally {
      await store.close();
    }
  });

  it('marks a write whose revision takes a rowid again, after the newest revisions were purged', async () => {
    const store = openSqliteStore({ path });
    try {
      await store.mutate(alice, 'topics/a', put('apple\n'), rules);
      await store.mutate(alice, 'topics/b', put('banana\n'), rules);
      expect(await found(store, 'banana')).toEqual(['topics/b']);
      await store.purge('alice', 'topics/b', { includeLive: true });
      // The purged revision's rowid, behind the watermark, is the next one given out.
      await store.mutate(alice, 'topics/a', put('cherry\n'), rules);
      expect(marked(path)).toEqual([1]);
      expect(await found(store, 'cherry')).toEqual(['topics/a']);
      expect(await found(store, 'apple')).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('marks a rowid taken again when another connection moved the watermark, and then loses nothing', async () => {
    const searcher = openSqliteStore({ path });
    const writer = openSqliteStore({ path });
    try {
      await writer.mutate(alice, 'topics/a', put('apple\n'), rules);
      await writer.mutate(alice, 'topics/b', put('banana\n'), rules);
      // The searcher's catch-up sets the watermark at the writer's last revision.
      expect(await found(searcher, 'banana')).toEqual(['topics/b']);
      await writer.purge('alice', 'topics/b', { includeLive: true });
      await writer.mutate(alice, 'topics/a', put('cherry\n'), rules);
      await writer.mutate(alice, 'topics/c', put('damson\n'), rules);
      expect(marked(path)).toEqual([1, 2]);
      expect(await found(searcher, 'cherry')).toEqual(['topics/a']);
      expect(await found(searcher, 'damson')).toEqual(['topics/c']);
      expect(await found(searcher, 'apple')).toEqual([]);
      expect(await found(searcher, 'banana')).toEqual([]);
    } finally {
      await writer.close();
      await searcher.close();
    }
  });

  it('marks a write whose revision a history limit of 0 trims at once', async () => {
    const store = openSqliteStore({ path });
    try {
      await store.mutate(alice, 'topics/a', put('apple\n'), rules);
      expect(await found(store, 'apple')).toEqual(['topics/a']);
      await store.mutate(alice, 'topics/a', put('cherry\n'), { ...rules, historyLimit: 0 });
      expect(marked(path)).toEqual([1]);
      expect(await found(store, 'cherry')).toEqual(['topics/a']);
      expect(await found(store, 'apple')).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('indexes every loaded entry, one without any revision too', async () => {
    const source = openSqliteStore({ path: ':memory:' });
    let dump: Awaited<ReturnType<Store['dump']>>;
    try {
      await source.mutate(alice, 'topics/a', put('apple\n'), rules);
      await source.mutate(alice, 'topics/b', put('banana\n'), rules);
      const dumped = await source.dump();
      // As an older Engram could leave it: an entry no revision of which is kept.
      dump = {
        ...dumped,
        entries: dumped.entries.map((entry, at) => (at === 1 ? { ...entry, revisions: [] } : entry)),
      };
    } finally {
      await source.close();
    }
    const store = openSqliteStore({ path });
    try {
      await store.load(dump, { replace: false });
      expect(marked(path)).toEqual([1, 2]);
      expect(await found(store, 'apple')).toEqual(['topics/a']);
      expect(await found(store, 'banana')).toEqual(['topics/b']);
    } finally {
      await store.close();
    }
  });

  it('forgets the words of a dropped entry the history cap deletes before the index caught up', async () => {
    const store = openSqliteStore({ path });
    try {
      await store.mutate(alice, 'topics/a', put('apple\n'), rules);
      expect(await found(store, 'apple')).toEqual(['topics/a']);
      await store.mutate(alice, 'topics/a', drop, rules);
      // A cap of one byte deletes the trash whole, with the drop's revision, in the next write.
      await store.mutate(alice, 'topics/b', put('banana\n'), { ...rules, historyCap: 1 });
      expect(await store.trash('alice')).toEqual([]);
      expect(marked(path)).toContain(1);
      expect(await found(store, 'apple')).toEqual([]);
      const db = new Database(path, { readonly: true });
      try {
        expect(db.prepare('SELECT rowid FROM entries_search ORDER BY rowid').pluck().all()).toEqual([2]);
      } finally {
        db.close();
      }
    } finally {
      await store.close();
    }
  });
});

describe('SQLite: a database at schema version 8, its index kept by triggers', () => {
  let folder: string;
  let path: string;

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-search-backlog-upgrade-'));
    path = join(folder, 'memory.db');
    const db = new Database(path);
    try {
      migrateSqliteTo(db, 8);
      const addEntry = db.prepare(`INSERT INTO entries
        (user_id, name, description, size, body, created, updated, revision, dropped_at, dropped_by)
        VALUES ('alice', ?, ?, ?, ?, 1, 1, 1, ?, ?)`);
      addEntry.run('topics/tea', 'Tea', bytes('Green tea.\n'), 'Green tea.\n', null, null);
      addEntry.run('topics/gone', 'Gone', bytes('Green but dropped.\n'), 'Green but dropped.\n', 2, 'cli');
    } finally {
      db.close();
    }
  });

  afterEach(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('keeps the index it had, marks nothing, and follows every write after', async () => {
    const store = openSqliteStore({ path });
    try {
      expect(marked(path)).toEqual([]);
      expect(await found(store, 'green')).toEqual(['topics/tea']);
      await store.mutate(alice, 'topics/tea', put('Oolong.\n', 'Tea'), rules);
      await store.undrop(alice, 'topics/gone', rules);
      expect(await found(store, 'green')).toEqual(['topics/gone']);
      expect(await found(store, 'oolong')).toEqual(['topics/tea']);
    } finally {
      await store.close();
    }
  });
});

describe('SQLite: a database at schema version 13, an entry still marked for the index', () => {
  let folder: string;
  let path: string;

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-search-backlog-13-'));
    path = join(folder, 'memory.db');
    const db = new Database(path);
    try {
      migrateSqliteTo(db, 13);
      db.exec(`INSERT INTO entries (id, user_id, name, description, size, body, created, updated, revision)
        VALUES (1, 'alice', 'topics/a', 'Apple', 6, NULL, 1, 1, 1), (2, 'alice', 'topics/b', 'Banana', 7, NULL, 1, 1, 1)`);
      db.exec(`INSERT INTO revisions (user_id, entry_id, revision, operation, actor, at, description, body, in_trash)
        VALUES ('alice', 1, 1, 'create', 'cli', 1, 'Apple', 'apple\n', 0), ('alice', 2, 1, 'create', 'cli', 1, 'Banana', 'banana\n', 0)`);
      // As schema 13 leaves it: topics/a indexed, topics/b written and marked, not indexed yet.
      db.exec(`INSERT INTO entries_search (rowid, name, description, body) VALUES (1, 'topics/a', 'Apple', 'apple\n');
        DELETE FROM search_pending WHERE entry_id = 1`);
      expect(db.prepare('SELECT entry_id FROM search_pending').pluck().all()).toEqual([2]);
    } finally {
      db.close();
    }
  });

  afterEach(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('keeps the mark, starts the watermark at the last revision, and finds every entry', async () => {
    const store = openSqliteStore({ path });
    try {
      expect(marked(path)).toEqual([2]);
      expect(await found(store, 'banana')).toEqual(['topics/b']);
      expect(await found(store, 'apple')).toEqual(['topics/a']);
      await store.mutate(alice, 'topics/a', put('avocado\n', 'Apple'), rules);
      expect(marked(path)).toEqual([1]);
      expect(await found(store, 'avocado')).toEqual(['topics/a']);
      expect(await found(store, 'apple')).toEqual(['topics/a']);
    } finally {
      await store.close();
    }
  });
});
