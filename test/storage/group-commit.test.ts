/**
 * Group commit in the SQLite store: writes that arrive together share one transaction,
 * yet each stays atomic on its own and is acknowledged only after the commit.
 *
 * Invariant of the groupCommit accelerator (docs/accelerators.md, "Storage"; off, each
 * write is its own transaction): each write of a batch is atomic on its own (a refused or
 * failing one rolls back its savepoint alone, its neighbours commit); a write is
 * acknowledged only once the shared COMMIT is durable, and a batch that cannot commit
 * (a busy database aside: tried again) fails every write in it; the result equals the same writes each in its own transaction,
 * in arrival order.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EngramError } from '../../src/memory/model/errors.js';
import type { Caller, Decide } from '../../src/memory/port.js';
import { GroupCommit } from '../../src/storage/sqlite/group-commit.js';
import { openSqliteStore, type SqliteStore } from '../../src/storage/sqlite/index.js';
import { rules } from '../helpers/rules.js';

const actor: Caller = { user: 'local', label: 'group-commit-test' };

const put =
  (line: string): Decide =>
  (current) => ({
    kind: 'put',
    operation: current ? 'append' : 'create',
    description: 'lines',
    body: `${current?.body ?? ''}${line}\n`,
  });

const refuse: Decide = () => {
  throw new EngramError('NO_MATCH', 'refused on purpose');
};

describe('SQLite group commit', () => {
  let folder: string;
  let path: string;
  let store: SqliteStore;

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-group-commit-'));
    path = join(folder, 'memory.db');
    store = openSqliteStore({ path });
  });

  afterEach(async () => {
    await store.close();
    await rm(folder, { recursive: true, force: true });
  });

  it("tells an observer each committed batch's size, and nothing once it is unset", async () => {
    const sizes: number[] = [];
    store.observeCommitBatches((writes) => sizes.push(writes));
    await Promise.all(['one', 'two', 'three'].map((line) => store.mutate(actor, 'topics/a', put(line), rules)));
    await store.mutate(actor, 'topics/b', put('alone'), rules);
    store.observeCommitBatches(undefined);
    await store.mutate(actor, 'topics/b', put('unseen'), rules);
    expect(sizes).toEqual([3, 1]);
  });

  it('lets a refused write fail alone while its neighbours in the batch commit', async () => {
    const results = await Promise.allSettled([
      store.mutate(actor, 'topics/a', put('one'), rules),
      store.mutate(actor, 'topics/a', refuse, rules),
      store.mutate(actor, 'topics/b', put('two'), rules),
      store.mutate(actor, 'topics/a', put('three'), rules),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'NO_MATCH' });
    const [a] = await store.get(actor.user, ['topics/a']);
    expect(a?.body).toBe('one\nthree\n');
    expect(a?.revision).toBe(2);
    expect(await store.index(actor.user)).toEqual([
      { name: 'topics/a', size: 10, description: 'lines' },
      { name: 'topics/b', size: 4, description: 'lines' },
    ]);
  });

  it('acknowledges a write only once another connection can read it', async () => {
    const reader = new Database(path, { readonly: true });
    try {
      const pending = Promise.all(
        Array.from({ length: 20 }, (_, i) => store.mutate(actor, 'topics/a', put(`line ${i}`), rules)),
      );
      // Queued, not yet committed: nothing is visible from outside.
      expect(reader.prepare("SELECT count(*) AS n FROM entries WHERE name = 'topics/a'").get()).toEqual({ n: 0 });
      await pending;
      const row = reader
        .prepare(`SELECT r.body, e.revision FROM entries e JOIN revisions r ON r.entry_id = e.id AND r.revision = e.revision
          WHERE e.name = 'topics/a'`)
        .get() as {
        body: string;
        revision: number;
      };
      expect(row.revision).toBe(20);
      expect(row.body.split('\n').filter(Boolean)).toHaveLength(20);
    } finally {
      reader.close();
    }
  });

  it('fails the whole batch, changing nothing, when one write makes SQLite roll back the shared transaction', async () => {
    // SQLITE_FULL, SQLITE_IOERR and the like roll back the whole transaction, not just the
    // savepoint; RAISE(ROLLBACK) in a trigger does the same on demand.
    const db = new Database(join(folder, 'raw.db'));
    try {
      db.exec(`CREATE TABLE lines (text TEXT NOT NULL);
        CREATE TRIGGER full BEFORE INSERT ON lines WHEN NEW.text = 'boom' BEGIN SELECT RAISE(ROLLBACK, 'disk full'); END;`);
      const commit = new GroupCommit(db, { busyDeadlineMs: 1_000, beforeBatch: () => {} });
      const insert = (text: string) => commit.run(() => db.prepare('INSERT INTO lines (text) VALUES (?)').run(text));
      const results = await Promise.allSettled([insert('before'), insert('boom'), insert('after')]);
      expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
      expect(db.prepare('SELECT text FROM lines').all()).toEqual([]);
      expect(db.inTransaction).toBe(false);
    } finally {
      db.close();
    }
  });
});

describe('SQLite without group commit', () => {
  it('gives every write its own commit, with the same results', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'engram-no-group-commit-'));
    const store = openSqliteStore({ path: join(folder, 'memory.db'), accelerators: { groupCommit: false } });
    try {
      const results = await Promise.allSettled([
        store.mutate(actor, 'topics/a', put('one'), rules),
        store.mutate(actor, 'topics/a', refuse, rules),
        store.mutate(actor, 'topics/a', put('two'), rules),
      ]);
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((await store.get(actor.user, ['topics/a']))[0]?.body).toBe('one\ntwo\n');
    } finally {
      await store.close();
      await rm(folder, { recursive: true, force: true });
    }
  });
});
