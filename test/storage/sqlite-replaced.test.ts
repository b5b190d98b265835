/**
 * A database file removed or replaced under a running store: SQLite would go on writing
 * into the file it has open, acknowledging writes that the next start cannot find. The
 * store refuses them instead (STORE_REPLACED, nothing written), says so once in its log,
 * and keeps serving reads from the file it has.
 */

import { copyFileSync, renameSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/memory/port.js';
import { appendLine, token } from '../../src/storage/contract/setup.js';
import { openSqliteStore, type SqliteStore } from '../../src/storage/sqlite/index.js';
import { rules } from '../helpers/rules.js';

const alice: Caller = { user: 'alice', label: 'replaced-test' };

function replacedMessage(path: string): string {
  return (
    `The database file at ${path} was removed or replaced while Engram had it open, so nothing was written: ` +
    'a write now would be lost when Engram restarts. Restart Engram so that it opens the file at that path ' +
    '(restore the file from a backup first if it was removed by mistake).'
  );
}

describe.each([
  { label: 'with group commit', groupCommit: true },
  { label: 'without group commit', groupCommit: false },
])('SqliteStore, $label, when its database file is removed or replaced', ({ groupCommit }) => {
  let folder: string;
  let path: string;
  let store: SqliteStore;
  let warnings: string[];

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'engram-sqlite-replaced-'));
    path = join(folder, 'memory.db');
    warnings = [];
    store = openSqliteStore({ path, accelerators: { groupCommit }, onWarning: (message) => warnings.push(message) });
    await store.mutate(alice, 'topics/a', appendLine('acknowledged'), rules);
  });

  afterEach(async () => {
    await store.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('refuses writes once the file (and its -wal and -shm) is removed, says so once, and still reads', async () => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });

    for (const write of [
      () => store.mutate(alice, 'topics/a', appendLine('lost'), rules),
      () => store.mutate(alice, 'topics/b', appendLine('lost'), rules),
      () => store.tokens.add(token('t1')),
    ]) {
      await expect(write()).rejects.toMatchObject({
        name: 'EngramError',
        code: 'STORE_REPLACED',
        message: replacedMessage(path),
      });
    }

    expect(warnings).toEqual([replacedMessage(path)]);
    expect(await store.get('alice', ['topics/a'])).toEqual([
      expect.objectContaining({ body: 'acknowledged\n', revision: 1 }),
    ]);
  });

  it('refuses writes once another database file is renamed over its path', async () => {
    const other = openSqliteStore({ path: join(folder, 'other.db') });
    await other.mutate(alice, 'topics/other', appendLine('from the other file'), rules);
    await other.close();
    renameSync(join(folder, 'other.db'), path);

    await expect(store.mutate(alice, 'topics/a', appendLine('lost'), rules)).rejects.toMatchObject({
      code: 'STORE_REPLACED',
      message: replacedMessage(path),
    });
    expect(warnings).toEqual([replacedMessage(path)]);
  });

  it('refuses writes once a copy is put in its place', async () => {
    copyFileSync(path, join(folder, 'copy.db'));
    rmSync(path);
    renameSync(join(folder, 'copy.db'), path);

    await expect(store.mutate(alice, 'topics/a', appendLine('lost'), rules)).rejects.toMatchObject({
      code: 'STORE_REPLACED',
    });
  });
});
