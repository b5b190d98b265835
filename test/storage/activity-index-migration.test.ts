/**
 * Upgrading a SQLite database to schema 13, where one revision index (revisions_activity,
 * the actor after its key) serves activity, one actor's activity and the actors, and
 * revisions_actor is gone: every revision is kept byte for byte, activity and the actors
 * read the same as before the upgrade, and writes after it are found by both.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendLine } from '../../src/storage/contract/setup.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { rules } from '../helpers/rules.js';
import { migrateSqliteTo } from '../helpers/sqlite-schema.js';

const NEWEST = { at: Number.MAX_SAFE_INTEGER, entry: Number.MAX_SAFE_INTEGER, revision: Number.MAX_SAFE_INTEGER };

/** Revisions of schema 12: [user, entry, revision, operation, actor, at, body]; entry 3 is alice's too. */
const REVISIONS = [
  ['alice', 1, 1, 'create', 'cli', 10, 'one\n'],
  ['alice', 1, 2, 'append', 'claude', 20, 'one\ntwo\n'],
  ['alice', 2, 1, 'create', 'claude', 20, 'ünï ✓\n'],
  ['bob', 4, 1, 'create', 'cli', 15, 'bob\n'],
  ['alice', 3, 1, 'create', 'web', 30, 'web\n'],
  ['alice', 1, 3, 'append', 'cli', 40, 'one\ntwo\nthree\n'],
] as const;

function indexes(db: Database.Database): string[] {
  return db
    .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'revisions' ORDER BY name")
    .pluck()
    .all() as string[];
}

describe('SQLite: a database at schema version 12, revisions indexed by time and by actor', () => {
  let folder: string;
  let path: string;
  let revisionsBefore: unknown[];

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-activity-index-'));
    path = join(folder, 'memory.db');
    const db = new Database(path);
    try {
      migrateSqliteTo(db, 12);
      const addEntry =
        db.prepare(`INSERT INTO entries (id, user_id, name, description, size, body, created, updated, revision)
        VALUES (?, ?, ?, 'about it', 1, NULL, 1, 2, ?)`);
      addEntry.run(1, 'alice', 'topics/a', 3);
      addEntry.run(2, 'alice', 'topics/b', 1);
      addEntry.run(3, 'alice', 'topics/c', 1);
      addEntry.run(4, 'bob', 'topics/a', 1);
      const addRevision = db.prepare(`INSERT INTO revisions
        (user_id, entry_id, revision, operation, actor, at, description, body, in_trash) VALUES (?, ?, ?, ?, ?, ?, 'about it', ?, 0)`);
      for (const revision of REVISIONS) addRevision.run(...revision);
      db.exec(
        `INSERT INTO users (user_id, total_bytes, entries, history_bytes, changes) VALUES ('alice', 0, 3, 0, 5), ('bob', 0, 1, 0, 1)`,
      );
      revisionsBefore = db.prepare('SELECT rowid, * FROM revisions ORDER BY rowid').all();
      expect(indexes(db)).toEqual(['revisions_activity', 'revisions_actor', 'sqlite_autoindex_revisions_1']);
    } finally {
      db.close();
    }
  });

  afterEach(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('keeps every revision, and reads activity and the actors from the one index as before', async () => {
    const store = openSqliteStore({ path });
    try {
      const db = new Database(path, { readonly: true });
      try {
        expect(db.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
        // The columns the revisions had then: a later step may add one (a revision's note).
        const columns = Object.keys(revisionsBefore[0] ?? {}).join(', ');
        expect(db.prepare(`SELECT ${columns} FROM revisions ORDER BY rowid`).all()).toEqual(revisionsBefore);
        expect(indexes(db)).toEqual(['revisions_activity', 'sqlite_autoindex_revisions_1']);
      } finally {
        db.close();
      }

      const all = await store.activity('alice', { limit: 10 });
      expect(all.map((record) => [record.entry, record.revision, record.actor, record.at])).toEqual([
        [1, 3, 'cli', 40],
        [3, 1, 'web', 30],
        [2, 1, 'claude', 20],
        [1, 2, 'claude', 20],
        [1, 1, 'cli', 10],
      ]);
      const byCli = await store.activity('alice', { limit: 1, actor: 'cli' });
      expect(byCli.map((record) => [record.entry, record.revision])).toEqual([[1, 3]]);
      const before = { at: 40, entry: 1, revision: 3 };
      const olderByCli = await store.activity('alice', { limit: 5, actor: 'cli', before });
      expect(olderByCli.map((record) => [record.entry, record.revision, record.name, record.size])).toEqual([
        [1, 1, 'topics/a', 4],
      ]);
      expect(await store.activity('alice', { limit: 5, actor: 'nobody', before: NEWEST })).toEqual([]);
      expect(await store.actors('alice')).toEqual([
        { actor: 'claude', changes: 2, last: 20 },
        { actor: 'cli', changes: 2, last: 40 },
        { actor: 'web', changes: 1, last: 30 },
      ]);
      expect(await store.actors('bob')).toEqual([{ actor: 'cli', changes: 1, last: 15 }]);

      // Written after the upgrade: found by activity, one actor's activity and the actors.
      await store.mutate({ user: 'alice', label: 'mcp' }, 'topics/b', appendLine('more'), rules);
      expect((await store.activity('alice', { limit: 1, actor: 'mcp' }))[0]).toMatchObject({
        entry: 2,
        revision: 2,
        operation: 'append',
        actor: 'mcp',
      });
      expect((await store.activity('alice', { limit: 1 }))[0]).toMatchObject({ entry: 2, revision: 2 });
      expect((await store.actors('alice')).find((count) => count.actor === 'mcp')?.changes).toBe(1);
      expect((await store.history('alice', 'topics/b')).map((record) => record.body)).toEqual([
        'ünï ✓\n',
        'ünï ✓\nmore\n',
      ]);
    } finally {
      await store.close();
    }
  });
});
