/**
 * One actor's activity and the count of every actor are read from revisions_activity
 * (schema 13), which holds every revision of the user in time order: for an actor with few
 * changes that walks the user's whole history, which the history cap lets reach millions of
 * small revisions. The walk goes some thousands of index rows at a time, the event loop free in
 * between (DESIGN §7): pages and counts come out exact across the steps' edges.
 *
 * Invariant of the activityWalk accelerator (docs/accelerators.md, "Storage"; off, one
 * step over the whole history): a page of one actor's activity and the actors' counts
 * equal the one-statement answer; a walk by position never meets a revision twice, nor
 * skips one at a step's edge.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActivityPosition } from '../../src/memory/activity.js';
import type { Store } from '../../src/memory/port.js';
import { FIRST_STEP_ROWS, STEP_ROWS } from '../../src/storage/sqlite/activity-walk.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';

/** Alice's revisions, oldest first: all by mcp but those at these places (0 the oldest), on both sides of the steps' edges. */
const TOTAL = FIRST_STEP_ROWS + 2 * STEP_ROWS + 10;
const EDGES = [TOTAL - FIRST_STEP_ROWS, TOTAL - FIRST_STEP_ROWS - STEP_ROWS];
const RARE = new Set([0, ...EDGES, ...EDGES.map((at) => at - 1), TOTAL - 1]);
const PER_ENTRY = 100;

/** How many turns of the event loop passed while `work` ran. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let running = true;
  const spin = () => {
    if (!running) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  try {
    return { result: await work(), turns };
  } finally {
    running = false;
  }
}

describe('SQLite: one actor among many revisions', () => {
  let folder: string;
  let store: Store;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-activity-walk-'));
    const path = join(folder, 'memory.db');
    await openSqliteStore({ path }).close();
    const db = new Database(path);
    try {
      db.transaction(() => {
        const entry =
          db.prepare(`INSERT INTO entries (id, user_id, name, description, size, body, created, updated, revision)
          VALUES (?, ?, ?, 'd', 2, NULL, 1, 1, ?)`);
        const revision =
          db.prepare(`INSERT INTO revisions (user_id, entry_id, revision, operation, actor, at, description, body, in_trash)
          VALUES (?, ?, ?, 'append', ?, ?, 'd', 'x\n', 0)`);
        const entries = Math.ceil(TOTAL / PER_ENTRY);
        for (let id = 1; id <= entries; id++) entry.run(id, 'alice', `topics/e${id}`, PER_ENTRY);
        // Two revisions share each millisecond, told apart by their revision numbers.
        for (let at = 0; at < TOTAL; at++) {
          const [id, number] = [1 + Math.floor(at / PER_ENTRY), 1 + (at % PER_ENTRY)];
          revision.run('alice', id, number, RARE.has(at) ? 'rare' : 'mcp', Math.floor(at / 2));
        }
        entry.run(entries + 1, 'bob', 'topics/b', 1);
        revision.run('bob', entries + 1, 1, 'rare', 5);
      })();
    } finally {
      db.close();
    }
    store = openSqliteStore({ path });
  });

  afterAll(async () => {
    await store?.close();
    await rm(folder, { recursive: true, force: true });
  });

  it("finds the actor's every change, newest first, the event loop turning while it walks", async () => {
    const { result, turns } = await turnsDuring(() => store.activity('alice', { limit: 10, actor: 'rare' }));
    expect(result.map((record) => record.actor)).toEqual(Array(RARE.size).fill('rare'));
    expect(result.map((record) => record.at)).toEqual([...RARE].sort((a, b) => b - a).map((at) => Math.floor(at / 2)));
    expect(turns).toBeGreaterThan(0);
  });

  it('pages one change at a time across the edges of its steps, none skipped or repeated', async () => {
    const seen: ActivityPosition[] = [];
    let before: ActivityPosition | undefined;
    for (;;) {
      const [record] = await store.activity('alice', { limit: 1, actor: 'rare', ...(before ? { before } : {}) });
      if (!record) break;
      before = { at: record.at, entry: record.entry, revision: record.revision };
      seen.push(before);
    }
    const all = await store.activity('alice', { limit: 10, actor: 'rare' });
    expect(seen).toEqual(all.map(({ at, entry, revision }) => ({ at, entry, revision })));
    expect(seen).toHaveLength(RARE.size);
  });

  it('reads a page of a frequent actor as it is, and all activity unfiltered', async () => {
    const mcp = await store.activity('alice', { limit: 201, actor: 'mcp' });
    expect(mcp).toHaveLength(201);
    expect(mcp.every((record) => record.actor === 'mcp')).toBe(true);
    const all = await store.activity('alice', { limit: 5 });
    expect(all.map((record) => record.actor)).toEqual(['rare', 'mcp', 'mcp', 'mcp', 'mcp']);
  });

  it('counts every actor of the user exactly, the event loop turning while it walks', async () => {
    const { result, turns } = await turnsDuring(() => store.actors('alice'));
    expect(result).toEqual([
      { actor: 'mcp', changes: TOTAL - RARE.size, last: Math.floor((TOTAL - 2) / 2) },
      { actor: 'rare', changes: RARE.size, last: Math.floor((TOTAL - 1) / 2) },
    ]);
    expect(turns).toBeGreaterThan(0);
    expect(await store.actors('bob')).toEqual([{ actor: 'rare', changes: 1, last: 5 }]);
    expect(await store.actors('nobody')).toEqual([]);
  });
});
