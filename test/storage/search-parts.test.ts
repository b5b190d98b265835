/**
 * The SQLite search index holds an entry in parts (search-backlog.ts, SEARCH_PARTS): what
 * an append added since the last catch-up goes in as a part of its own, so a catch-up
 * indexes what was appended, not the whole entry again; a search finds an entry by the
 * words of all its parts together. Any other change (an edit, a new description, text
 * added without a line break at the join), a drop, or an entry at its most parts, and the
 * entry is indexed whole again, as one part: no word it no longer holds is found.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemory } from '../../src/memory/memory.js';
import type { Caller, Store } from '../../src/memory/port.js';
import { append, bytes, drop, put, recount } from '../../src/storage/contract/setup.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { SEARCH_PARTS } from '../../src/storage/sqlite/search-backlog.js';
import { rules } from '../helpers/rules.js';
import { migrateSqliteTo } from '../helpers/sqlite-schema.js';

const alice: Caller = { user: 'alice', label: 'search-parts-test' };

async function found(store: Store, query: string): Promise<string[]> {
  return (await createMemory({ store }).search(alice, query)).map((hit) => hit.name);
}

/** What the index holds, read by a connection of its own: its documents' rowids and the rows of search_parts. */
function held(path: string): { rowids: number[]; parts: Array<{ entry_id: number; parts: number; chars: number }> } {
  const db = new Database(path, { readonly: true });
  try {
    return {
      rowids: db.prepare('SELECT id FROM entries_search_docsize ORDER BY id').pluck().all() as number[],
      parts: db.prepare('SELECT entry_id, parts, chars FROM search_parts ORDER BY entry_id').all() as Array<{
        entry_id: number;
        parts: number;
        chars: number;
      }>,
    };
  } finally {
    db.close();
  }
}

/** The rowid of an entry's part. */
const part = (id: number, number: number) => id + number * SEARCH_PARTS.stride;

describe('SQLite search index in parts', () => {
  let folder: string;
  let path: string;
  let store: Store & { close(): Promise<void> };

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-search-parts-'));
    path = join(folder, 'memory.db');
    store = openSqliteStore({ path });
  });

  afterEach(async () => {
    await store.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('indexes what an append added as a part of its own, and finds an entry by the words of all its parts', async () => {
    await store.mutate(alice, 'topics/a', put('alpha words\n', 'Fruit basket'), rules);
    await store.mutate(alice, 'topics/b', put('alpha only\n', 'Other'), rules);
    expect((await found(store, 'alpha')).sort()).toEqual(['topics/a', 'topics/b']);
    expect(held(path)).toEqual({
      rowids: [1, 2],
      parts: [
        { entry_id: 1, parts: 1, chars: 12 },
        { entry_id: 2, parts: 1, chars: 11 },
      ],
    });

    await store.mutate(alice, 'topics/a', append('omega line'), rules);
    expect(await found(store, 'omega')).toEqual(['topics/a']);
    expect(held(path)).toEqual({
      rowids: [1, 2, part(1, 1)],
      parts: [
        { entry_id: 1, parts: 2, chars: 23 },
        { entry_id: 2, parts: 1, chars: 11 },
      ],
    });
    // Terms of different parts, in either order, the last a prefix; the name's and the description's too.
    expect(await found(store, 'alpha omega')).toEqual(['topics/a']);
    expect(await found(store, 'omega alph')).toEqual(['topics/a']);
    expect(await found(store, 'basket omega')).toEqual(['topics/a']);
    expect(await found(store, 'topics omega')).toEqual(['topics/a']);
    expect(await found(store, 'alpha zeta')).toEqual([]);
    expect(await found(store, 'only omega')).toEqual([]);

    await store.mutate(alice, 'topics/a', append('third part'), rules);
    expect(await found(store, 'alpha omega third')).toEqual(['topics/a']);
    expect(held(path).rowids).toEqual([1, 2, part(1, 1), part(1, 2)]);
  });

  it('ranks an entry by its name and description whatever part its other terms are in', async () => {
    await store.mutate(alice, 'topics/x', put('plain\n', 'Kettle notes'), rules);
    await store.mutate(alice, 'topics/kettle', put('plain\n', 'Other'), rules);
    await found(store, 'plain');
    await store.mutate(alice, 'topics/x', append('boiling kettle'), rules);
    await store.mutate(alice, 'topics/kettle', append('boiling'), rules);
    // topics/kettle has the term in its name, topics/x in its description and in a part.
    expect(await found(store, 'kettle')).toEqual(['topics/kettle', 'topics/x']);
    expect(await found(store, 'boiling kettle')).toEqual(['topics/kettle', 'topics/x']);
  });

  it('indexes an entry whole again when its text changed other than by an append', async () => {
    await store.mutate(alice, 'topics/a', put('alpha beta\n'), rules);
    await found(store, 'alpha');
    await store.mutate(alice, 'topics/a', append('gamma'), rules);
    await found(store, 'gamma');
    // Longer than the text indexed, and a line break where that ended: still not an append.
    await store.mutate(alice, 'topics/a', put('alpha\ngamma\nzzzz\nmore\n'), rules);
    expect(await found(store, 'beta')).toEqual([]);
    expect(await found(store, 'gamma alpha more')).toEqual(['topics/a']);
    expect(held(path)).toEqual({ rowids: [1], parts: [{ entry_id: 1, parts: 1, chars: 22 }] });
  });

  it('indexes an entry whole again when an append gives it a new description', async () => {
    await store.mutate(alice, 'topics/a', put('alpha\n', 'Fruit'), rules);
    await found(store, 'alpha');
    await store.mutate(alice, 'topics/a', append('delta', 'Vegetables now'), rules);
    expect(await found(store, 'fruit')).toEqual([]);
    expect(await found(store, 'vegetables delta alpha')).toEqual(['topics/a']);
    expect(held(path)).toEqual({ rowids: [1], parts: [{ entry_id: 1, parts: 1, chars: 12 }] });
  });

  it('joins no words: text added without a line break at the join is indexed with the entry whole', async () => {
    await store.mutate(alice, 'topics/a', put('x abc'), rules);
    await found(store, 'abc');
    await store.mutate(alice, 'topics/a', put('x abcdef', 'a description', 'append'), rules);
    expect(await found(store, 'abc x')).toEqual([]);
    expect(await found(store, 'abcdef x')).toEqual(['topics/a']);
    expect(held(path)).toEqual({ rowids: [1], parts: [{ entry_id: 1, parts: 1, chars: 8 }] });
  });

  it('adds a part when the line break is the appended text’s first character, as memory_write joins a body without one', async () => {
    await store.mutate(alice, 'topics/a', put('alpha'), rules);
    await found(store, 'alpha');
    await store.mutate(alice, 'topics/a', append('beta'), rules);
    expect(await found(store, 'alpha beta')).toEqual(['topics/a']);
    expect(await found(store, 'alphabeta')).toEqual([]);
    expect(held(path)).toEqual({ rowids: [1, part(1, 1)], parts: [{ entry_id: 1, parts: 2, chars: 11 }] });
  });

  it('indexes entries a load put in place of others, under the same ids, as they are: none of the old words', async () => {
    await store.mutate(alice, 'topics/a', put('alpha\n'), rules);
    await found(store, 'alpha');
    await store.mutate(alice, 'topics/a', append('omega'), rules);
    await found(store, 'omega');
    const dump = await store.dump();
    const entries = dump.entries.map((entry) => {
      const body = 'zeta\n';
      const revisions = entry.revisions.map((revision) => ({ ...revision, body }));
      return { ...entry, body, size: bytes(body), revisions };
    });
    expect(entries.map((entry) => entry.id)).toEqual([1]);
    await store.load({ ...dump, entries, users: recount({ ...dump, entries }) }, { replace: true });
    expect(await found(store, 'alpha')).toEqual([]);
    expect(await found(store, 'omega')).toEqual([]);
    expect(await found(store, 'zeta')).toEqual(['topics/a']);
    expect(held(path)).toEqual({ rowids: [1], parts: [{ entry_id: 1, parts: 1, chars: 5 }] });
  });

  it('indexes an entry whole again, as one part, once it has its most parts', async () => {
    await store.mutate(alice, 'topics/a', put('word0\n'), rules);
    await found(store, 'word0');
    for (let at = 1; at < SEARCH_PARTS.max; at++) {
      await store.mutate(alice, 'topics/a', append(`word${at}`), rules);
      expect(await found(store, `word${at}`)).toEqual(['topics/a']);
    }
    const lines = Array.from({ length: SEARCH_PARTS.max }, (_, at) => `word${at}\n`).join('');
    expect(held(path).parts).toEqual([{ entry_id: 1, parts: SEARCH_PARTS.max, chars: lines.length }]);
    expect(held(path).rowids).toHaveLength(SEARCH_PARTS.max);

    await store.mutate(alice, 'topics/a', append('last'), rules);
    expect(await found(store, 'last word0 word15')).toEqual(['topics/a']);
    expect(held(path)).toEqual({ rowids: [1], parts: [{ entry_id: 1, parts: 1, chars: lines.length + 5 }] });
    await store.mutate(alice, 'topics/a', append('after'), rules);
    expect(await found(store, 'after word7')).toEqual(['topics/a']);
    expect(held(path).rowids).toEqual([1, part(1, 1)]);
  });

  it('forgets every part of a dropped entry, and indexes it whole when it comes back', async () => {
    await store.mutate(alice, 'topics/a', put('alpha\n'), rules);
    await found(store, 'alpha');
    await store.mutate(alice, 'topics/a', append('omega'), rules);
    await found(store, 'omega');
    await store.mutate(alice, 'topics/a', drop, rules);
    expect(await found(store, 'alpha')).toEqual([]);
    expect(await found(store, 'omega')).toEqual([]);
    expect(held(path)).toEqual({ rowids: [], parts: [] });

    await store.undrop(alice, 'topics/a', rules);
    expect(await found(store, 'omega alpha')).toEqual(['topics/a']);
    expect(held(path)).toEqual({ rowids: [1], parts: [{ entry_id: 1, parts: 1, chars: 12 }] });
  });

  it('forgets every part of a purged entry', async () => {
    await store.mutate(alice, 'topics/a', put('alpha\n'), rules);
    await found(store, 'alpha');
    await store.mutate(alice, 'topics/a', append('omega'), rules);
    await found(store, 'omega');
    await store.mutate(alice, 'topics/a', append('sigma'), rules);
    expect(await store.purge('alice', 'topics/a', { includeLive: true })).toBeGreaterThan(0);
    expect(held(path)).toEqual({ rowids: [], parts: [] });
    expect(await found(store, 'sigma')).toEqual([]);
  });
});

describe('SQLite: a database at schema version 21, indexed whole', () => {
  let folder: string;
  let path: string;

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-search-parts-21-'));
    path = join(folder, 'memory.db');
    const db = new Database(path);
    try {
      migrateSqliteTo(db, 21);
      db.exec(`INSERT INTO entries (id, user_id, name, description, size, body, created, updated, revision)
        VALUES (1, 'alice', 'topics/a', 'Apple', 6, NULL, 1, 1, 1)`);
      db.exec(`INSERT INTO revisions (user_id, entry_id, revision, operation, actor, at, description, body, in_trash)
        VALUES ('alice', 1, 1, 'create', 'cli', 1, 'Apple', 'apple\n', 0)`);
      db.exec(`INSERT INTO entries_search (rowid, name, description, body) VALUES (1, 'topics/a', 'Apple', 'apple\n');
        UPDATE search_watermark SET revision = 1`);
    } finally {
      db.close();
    }
  });

  afterEach(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('finds its entries as indexed, indexes an entry whole at its next catch-up, then in parts', async () => {
    const store = openSqliteStore({ path });
    try {
      expect(await found(store, 'apple')).toEqual(['topics/a']);
      expect(held(path)).toEqual({ rowids: [1], parts: [] });
      await store.mutate(alice, 'topics/a', append('banana'), rules);
      expect(await found(store, 'apple banana')).toEqual(['topics/a']);
      expect(held(path)).toEqual({ rowids: [1], parts: [{ entry_id: 1, parts: 1, chars: 13 }] });
      await store.mutate(alice, 'topics/a', append('cherry'), rules);
      expect(await found(store, 'apple banana cherry')).toEqual(['topics/a']);
      expect(held(path)).toEqual({ rowids: [1, part(1, 1)], parts: [{ entry_id: 1, parts: 2, chars: 20 }] });
    } finally {
      await store.close();
    }
  });
});
