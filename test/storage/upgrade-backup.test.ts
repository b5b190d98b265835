/**
 * The copy kept before a SQLite schema upgrade (storage/sqlite/upgrade-backup.ts): a file
 * made by an older Engram (a fixture of test/fixtures/schemas, made by that Engram) opened
 * by this one leaves, in backups/ beside it, a copy that is the old file as it was (its
 * version, its rows), and a whole memory: put back, this Engram finds in it everything the
 * old one wrote; a file already current, new, or from a newer Engram gets none; and
 * where the copy cannot be written the upgrade is refused and the file keeps its version.
 */

import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { main } from '../../src/cli/program.js';
import { openBackend } from '../../src/open-store.js';
import { MIGRATIONS } from '../../src/storage/sqlite/migrations.js';
import { expectEverythingKept, FIXTURES, fixtures, open } from '../helpers/schema-fixtures.js';
import { tempDir } from '../helpers/temp-dir.js';
import { engramUnprivileged, unprivilegedRunnable } from '../helpers/unprivileged.js';

const manifestOf = (name: string) => fixtures('sqlite').find((fixture) => fixture.name === name)!.manifest;
const OLD = 12;
const unprivileged = unprivilegedRunnable('upgrade-backup: the unwritable folder case');

/** A copy of the fixture of schema `version` as `memory.db` in a folder of its own. */
function oldFile(version = OLD): { folder: string; path: string } {
  const folder = tempDir().path;
  const path = join(folder, 'memory.db');
  copyFileSync(join(FIXTURES, `sqlite-${version}.db`), path);
  return { folder, path };
}

function read<T>(path: string, work: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return work(db);
  } finally {
    db.close();
  }
}

const versionOf = (path: string) => read(path, (db) => db.prepare('SELECT version FROM schema_version').all());

/** The rows an upgrade must not lose, as stored (the upgrade may reshape them, the copy may not). */
const rowsOf = (path: string) =>
  read(path, (db) => ({
    entries: db.prepare('SELECT * FROM entries ORDER BY id').all(),
    revisions: db.prepare('SELECT * FROM revisions ORDER BY entry_id, revision').all(),
    tokens: db.prepare('SELECT * FROM tokens ORDER BY id').all(),
    accounts: db.prepare('SELECT * FROM accounts ORDER BY user_id').all(),
    grants: db.prepare('SELECT * FROM grants ORDER BY id').all(),
  }));

async function openAndClose(path: string, notes: string[] = []): Promise<void> {
  const store = await openBackend({ kind: 'sqlite', path }, { onWarning: (note) => notes.push(note) });
  await store.close();
}

describe('the copy kept before a SQLite schema upgrade', () => {
  it('is the old file as it was, in backups/ beside it, named by its version, and said where', async () => {
    const { folder, path } = oldFile();
    const before = rowsOf(path);
    const notes: string[] = [];

    await openAndClose(path, notes);

    const backup = join(folder, 'backups', `memory.db.schema-${OLD}.backup`);
    expect(readdirSync(join(folder, 'backups'))).toEqual([`memory.db.schema-${OLD}.backup`]);
    expect(versionOf(backup)).toEqual([{ version: OLD }]);
    expect(rowsOf(backup)).toEqual(before);
    expect(read(backup, (db) => db.pragma('integrity_check'))).toEqual([{ integrity_check: 'ok' }]);
    expect(versionOf(path)).toEqual([{ version: MIGRATIONS.length }]);
    expect(notes).toEqual([
      `upgrading the memory's database ${path} from schema version ${OLD} to ${MIGRATIONS.length}; ` +
        `a copy of it as it was is kept at ${backup}`,
    ]);
  });

  it('holds the whole memory: put back in place, this Engram finds everything the old one wrote', async () => {
    const { folder, path } = oldFile();
    await openAndClose(path);
    const restored = join(tempDir().path, 'memory.db');
    copyFileSync(join(folder, 'backups', `memory.db.schema-${OLD}.backup`), restored);

    const opened = await open({ kind: 'sqlite', path: restored });
    try {
      await expectEverythingKept(opened, manifestOf(`sqlite-${OLD}`));
    } finally {
      await opened.app.close();
    }
  });

  it('is taken once: a file already at this schema, opened again, gets none', async () => {
    const { folder, path } = oldFile();
    await openAndClose(path);
    const notes: string[] = [];

    await openAndClose(path, notes);

    expect(readdirSync(join(folder, 'backups'))).toEqual([`memory.db.schema-${OLD}.backup`]);
    expect(notes).toEqual([]);
  });

  it('never replaces an earlier copy of the same version: the next is numbered', async () => {
    const { folder, path } = oldFile();
    mkdirSync(join(folder, 'backups'));
    writeFileSync(join(folder, 'backups', `memory.db.schema-${OLD}.backup`), 'an earlier copy');

    await openAndClose(path);

    expect(readdirSync(join(folder, 'backups')).sort()).toEqual([
      `memory.db.schema-${OLD}-2.backup`,
      `memory.db.schema-${OLD}.backup`,
    ]);
    expect(versionOf(join(folder, 'backups', `memory.db.schema-${OLD}-2.backup`))).toEqual([{ version: OLD }]);
  });

  it('is not taken for a new database, nor for one from a newer Engram', async () => {
    const folder = tempDir().path;
    const path = join(folder, 'memory.db');
    await openAndClose(path);
    const newer = MIGRATIONS.length + 1;
    const db = new Database(path);
    db.prepare('UPDATE schema_version SET version = ?').run(newer);
    db.close();

    await expect(openAndClose(path)).rejects.toThrow(`is at schema version ${newer}, newer than this Engram knows`);

    expect(readdirSync(folder).filter((name) => name.startsWith('backups'))).toEqual([]);
  });

  it('that cannot be written refuses the upgrade, saying why and what to do; the file keeps its version', async () => {
    const { folder, path } = oldFile();
    const before = rowsOf(path);
    // What stands where the copy's folder must be: the copy cannot be written there, even by root.
    writeFileSync(join(folder, 'backups'), 'not a folder');

    const attempt = openAndClose(path);

    await expect(attempt).rejects.toMatchObject({ name: 'EngramError', code: 'STORE_UNAVAILABLE' });
    await expect(attempt).rejects.toThrow(
      `The memory's database ${path} is at schema version ${OLD} and this Engram upgrades it to ` +
        `${MIGRATIONS.length}, keeping a copy of it as it is first, but the copy could not be written to ` +
        `${join(folder, 'backups', `memory.db.schema-${OLD}.backup`)}: `,
    );
    await expect(attempt).rejects.toThrow(
      `Nothing was changed: the database is still at version ${OLD}. Let the user running Engram create and ` +
        `write ${join(folder, 'backups')}, with room for about 1 MB on its disk, then try again.`,
    );
    expect(versionOf(path)).toEqual([{ version: OLD }]);
    expect(rowsOf(path)).toEqual(before);
    // Nothing was left of the copy: no partial file, the obstacle as it was.
    expect(readdirSync(folder).filter((name) => !/^memory\.db(-wal|-shm)?$/.test(name))).toEqual(['backups']);
  });

  it.skipIf(!unprivileged)(
    'in a backups folder the user running Engram may not write: the upgrade is refused, the file keeps its version',
    async () => {
      const { folder, path } = oldFile();
      const before = rowsOf(path);
      // The memory's folder and file are the service user's; backups/ was made by root.
      chmodSync(folder, 0o777);
      for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o666);
      mkdirSync(join(folder, 'backups'), { mode: 0o755 });

      const run = await engramUnprivileged(folder, 'index', '--user', 'carol', '--db', path);

      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(
        `but the copy could not be written to ${join(folder, 'backups', `memory.db.schema-${OLD}.backup`)}: `,
      );
      expect(run.stderr).toContain(`(EACCES). Nothing was changed: the database is still at version ${OLD}.`);
      expect(versionOf(path)).toEqual([{ version: OLD }]);
      expect(rowsOf(path)).toEqual(before);
      expect(readdirSync(join(folder, 'backups'))).toEqual([]);
    },
  );

  it('through the CLI: the command says where the copy is, then runs on the upgraded memory', async () => {
    const { folder, path } = oldFile();
    const stdout: string[] = [];
    const stderr: string[] = [];
    const io = { stdout: (text: string) => stdout.push(text), stderr: (text: string) => stderr.push(text) };
    // The CLI's log lines go to the process's stderr itself (cli/output.ts).
    const log = vi.spyOn(process.stderr, 'write').mockImplementation((text) => stderr.push(String(text)) > 0);
    onTestFinished(() => log.mockRestore());

    const code = await main(['index', '--user', 'carol', '--db', path, '--config', tempDir().config({})], io);

    expect(code).toBe(0);
    expect(stderr.join('')).toBe(
      `engram: upgrading the memory's database ${path} from schema version ${OLD} to ${MIGRATIONS.length}; ` +
        `a copy of it as it was is kept at ${join(folder, 'backups', `memory.db.schema-${OLD}.backup`)}\n`,
    );
    expect(stdout.join('')).toContain('topics/hello');
  });
});
