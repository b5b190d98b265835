/**
 * A store failure at the command line: a database file that is not a database, and a
 * PostgreSQL server that cannot be reached, end the command with exit code 1 and the
 * store's message on stderr (with its code under --json), never "internal error", and
 * leave the file as it was.
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { childEnv, runEngram, tempDir } from '../helpers/engram.js';

describe('a store failure ends a command with exit 1 and says what is wrong', () => {
  it('a database file that is not a database: named, with what to do, and left as it was', async () => {
    const dir = tempDir();
    const db = dir.file('memory.db');
    const text = 'These are my notes, not a database.\n'.repeat(200);
    writeFileSync(db, text);
    const env = childEnv(dir.path, { ENGRAM_DB: db });
    const message = `The file ${db} is not a readable Engram database (file is not a database (SQLITE_NOTADB)): it is damaged, or not a database at all. Nothing was changed. Check the path; if the file was damaged, restore it from a backup.`;

    expect(await runEngram(['index'], env)).toEqual({ code: 1, stdout: '', stderr: `${message}\n` });
    const json = await runEngram(['write', 'topics/a', '--description', 'A', '--new', 'a', '--json'], env);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({ error: { code: 'STORE_UNAVAILABLE', message } });
    expect(readFileSync(db, 'utf8')).toBe(text);
  });

  it('a PostgreSQL server that cannot be reached: named by host:port, without the password', async () => {
    const dir = tempDir();
    const env = childEnv(dir.path);

    const run = await runEngram(['index', '--database-url', 'postgres://engram:hunter2@127.0.0.1:1/engram'], env);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^cannot reach PostgreSQL at 127\.0\.0\.1:1: connect ECONNREFUSED 127\.0\.0\.1:1\. Check that the server is running and that the database URL is right\.\n$/,
    );
    expect(run.stderr).not.toContain('hunter2');
  });
});
