/**
 * Purging on SQLite, at the file level: no copy of the purged text may remain in the
 * database files, and when another connection's long read keeps the write-ahead log
 * from being emptied, the purge must say so instead of claiming success. The end-to-end
 * purge test through the CLI is in test/cli/recovery.test.ts.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemory } from '../../src/memory/memory.js';
import { EngramError } from '../../src/memory/model/errors.js';
import type { Caller, Decide } from '../../src/memory/port.js';
import { openSqliteStore, type SqliteStore } from '../../src/storage/sqlite/index.js';
import { rules } from '../helpers/rules.js';

const alice: Caller = { user: 'alice', label: 'purge-test' };

function put(body: string): Decide {
  return (current) => ({ kind: 'put', operation: current ? 'replace' : 'create', description: 'secret', body });
}

describe('SqliteStore purge', () => {
  let folder: string;
  let path: string;
  let store: SqliteStore;
  let marker: string;

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-sqlite-purge-'));
    path = join(folder, 'memory.db');
    store = openSqliteStore({ path, busyTimeoutMs: 50 });
    marker = `PURGE-MARKER-${process.pid}-${Math.random().toString(36).slice(2)}`;
  });

  afterEach(async () => {
    await store.close();
    await rm(folder, { recursive: true, force: true });
  });

  /** The database files that hold the marker's bytes. */
  function filesHoldingMarker(): string[] {
    const needle = Buffer.from(marker);
    return readdirSync(folder).filter((name) => readFileSync(join(folder, name)).includes(needle));
  }

  /** topics/secret, its older revisions holding the marker, then dropped. */
  async function droppedSecret(): Promise<void> {
    await store.mutate(alice, 'topics/secret', put(`the secret: ${marker}\n`), rules);
    await store.mutate(alice, 'topics/secret', put(`${'padding line\n'.repeat(400)}again ${marker}\n`), rules);
    await store.mutate(alice, 'topics/secret', put('nothing secret now\n'), rules);
    await store.mutate(alice, 'topics/kept', put('kept\n'), rules);
    await store.mutate(alice, 'topics/secret', () => ({ kind: 'drop' }), rules);
  }

  it('leaves no copy of the text in the main file or the WAL while the store stays open', async () => {
    await droppedSecret();
    expect(filesHoldingMarker()).not.toEqual([]);

    expect(await store.purge('alice', 'topics/secret', { includeLive: false })).toBe(1);

    expect(filesHoldingMarker()).toEqual([]);
    expect(await store.get('alice', ['topics/kept'])).toHaveLength(1);
  });

  it("says so when another connection's read keeps the WAL from being emptied, and the text goes when it ends", async () => {
    await droppedSecret();
    const reader = new Database(path);
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM revisions').get();

    let refusal: unknown;
    try {
      await store.purge('alice', 'topics/secret', { includeLive: false });
    } catch (error) {
      refusal = error;
    }

    expect(refusal).toBeInstanceOf(EngramError);
    expect(refusal).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect((refusal as Error).message).toMatch(/^The entries were deleted, but another connection/);
    expect(await store.history('alice', 'topics/secret')).toEqual([]);
    expect(filesHoldingMarker()).not.toEqual([]);

    reader.exec('COMMIT');
    reader.close();
    await store.close();
    expect(filesHoldingMarker()).toEqual([]);
  });
});

describe('a drop with no trash retention while another connection reads', () => {
  it('still succeeds: the drop and the purge commit, the WAL is emptied when the reader is gone', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'engram-retention-0-'));
    const path = join(folder, 'memory.db');
    const policy = { trashRetentionDays: 0 };
    const caller = { user: 'local', label: 'test' };
    try {
      const first = createMemory({ store: openSqliteStore({ path, busyTimeoutMs: 50 }), policy });
      await first.write(caller, { name: 'topics/x', description: 'x', new: 'gone soon' });
      const reader = new Database(path);
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM entries').get();

      expect((await first.drop(caller, 'topics/x')).entry.name).toBe('topics/x');
      expect(await first.index(caller)).toEqual([]);
      expect(await first.recovery.trash(caller)).toEqual([]);
      expect(readFileSync(`${path}-wal`).includes(Buffer.from('gone soon'))).toBe(true);

      reader.exec('COMMIT');
      reader.close();
      await first.store.close();
      expect(
        readdirSync(folder).filter((name) => readFileSync(join(folder, name)).includes(Buffer.from('gone soon'))),
      ).toEqual([]);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
