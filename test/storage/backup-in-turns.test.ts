/**
 * A backup read through a store's dump (PostgreSQL's way) is written into its SQLite file
 * in turns: the event loop runs between two batches of entries, so a server taking a
 * scheduled backup goes on answering. Shown by counting the turns other work got between
 * two batches, never by timing them. The file is whole all the same: one transaction.
 *
 * Nor does the end of the write hold the loop up: the temporary file is written without a
 * write-ahead log (its writer makes it durable itself, by fsync before it is published), so
 * its pages reach the file as they spill and neither the COMMIT nor the close has a log of
 * the whole dump to fold back into it on the main thread. Shown by the file's journal mode
 * and by no `-wal` file beside it at any point of the write.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createApp } from '../../src/app.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';
import { sqliteBackupFiles } from '../../src/storage/sqlite/backup-files.js';
import { SqliteStore } from '../../src/storage/sqlite/store.js';
import { takeBackup } from '../../src/transfer/backup/take.js';
import { queryDatabase, tempDir } from '../helpers/engram.js';

const ADA = { user: 'ada', label: 'test' };
const ENTRIES = 3_500;

describe('a backup from a dump', () => {
  it('is written with the event loop free between two batches, and holds every entry', async () => {
    const store = openMemoryStore();
    const app = createApp({ store, policy: { userCap: 2 ** 30, maxEntries: 2 ** 20 } });
    onTestFinished(() => app.close());
    for (let at = 0; at < ENTRIES; at++) {
      await app.memory.write(ADA, { name: `topics/n${at}`, description: `Note ${at}`, new: `Body ${at}.` });
    }
    let ticks = 0;
    let ticking = true;
    const tick = () => {
      ticks++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const ticksAtBatch: number[] = [];
    const folder = tempDir().path;
    const destination = join(folder, 'backup.db');
    const besides: string[] = [];
    const files = sqliteBackupFiles();
    try {
      await takeBackup({ kind: 'postgres', store }, destination, {
        files,
        version: '0.0.0-test',
        now: () => Date.now(),
        onProgress: (progress) => {
          if (progress.phase === 'writing' && progress.entries > 0) ticksAtBatch.push(ticks);
          if (progress.phase === 'writing') besides.push(...readdirSync(folder));
        },
      });
    } finally {
      ticking = false;
    }
    expect(ticksAtBatch).toHaveLength(Math.ceil(ENTRIES / 1_000));
    for (let at = 1; at < ticksAtBatch.length; at++) expect(ticksAtBatch[at]!).toBeGreaterThan(ticksAtBatch[at - 1]!);
    expect(besides.some((name) => name.endsWith('.partial'))).toBe(true);
    expect(besides.filter((name) => name.endsWith('-wal'))).toEqual([]);
    expect(readdirSync(folder)).toEqual(['backup.db']);
    expect((await files.inspect(destination)).problems).toEqual([]);
    // Bytes 18 and 19 of the header: 1 for a rollback journal, 2 for WAL; a backup keeps no log.
    expect([...readFileSync(destination).subarray(18, 20)]).toEqual([1, 1]);
    // Each body stored once: in its latest revision, none left in its entry.
    expect(queryDatabase(destination, 'SELECT count(*) AS kept FROM entries WHERE body IS NOT NULL')).toEqual([
      { kept: 0 },
    ]);

    const copy = new SqliteStore({ path: destination });
    onTestFinished(() => copy.close());
    expect(await copy.index('ada')).toHaveLength(ENTRIES);
    expect((await copy.get('ada', ['topics/n3499']))[0]?.body).toBe('Body 3499.\n');
  });

  it('is a file without a write-ahead log while it is written, durable by its writer alone', async () => {
    const path = join(tempDir().path, '.backup.db.partial');
    const partial = new SqliteStore({ path, writtenOnce: true });
    onTestFinished(() => partial.close());
    expect(partial.pragma('journal_mode')).toBe('delete');
    expect(partial.pragma('synchronous')).toBe(0);
  });
});
