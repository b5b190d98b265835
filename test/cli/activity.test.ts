/**
 * `engram activity` on a temporary database: the changes to the whole memory newest first
 * with who made them, a page at a time with the way to the next, by actor, --json for
 * scripts; bad flags are usage errors, a bad cursor a refusal.
 */

import { copyFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { postgresBackend } from '../helpers/backends.js';
import { childEnv, tempDir } from '../helpers/engram.js';
import { findTestPostgres } from '../helpers/postgres.js';
import { type Cli, cli, expectRefused, expectUsageError, ok, runInProcess } from './fixtures.js';

const postgres = await findTestPostgres();

/** Three changes by the CLI: topics/a created and appended, topics/b created. */
async function withChanges(): Promise<Cli> {
  const engram = cli();
  await ok(engram.run('write', 'topics/a', '-d', 'About a', '--new', 'one'));
  await ok(engram.run('write', 'topics/b', '-d', 'About b', '--new', 'two'));
  await ok(engram.run('write', 'topics/a', '--new', 'more'));
  return engram;
}

const LINE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ {2}(\S+) +(\S+)@(\d+) {2}(\S+) {2}\((\d+) bytes\): (.*)$/;

describe('engram activity', () => {
  it('lists every change newest first: when, operation, entry@revision, who, size, description', async () => {
    const engram = await withChanges();
    const lines = (await ok(engram.run('activity'))).trimEnd().split('\n');
    expect(lines.map((line) => LINE.exec(line)?.slice(1))).toEqual([
      ['append', 'topics/a', '2', 'cli', expect.any(String), 'About a'],
      ['create', 'topics/b', '1', 'cli', expect.any(String), 'About b'],
      ['create', 'topics/a', '1', 'cli', expect.any(String), 'About a'],
    ]);
  });

  it('shows a page at a time, the last line saying how to see the next', async () => {
    const engram = await withChanges();
    const first = (await ok(engram.run('activity', '--limit', '2'))).trimEnd().split('\n');
    expect(first).toHaveLength(3);
    const more = /^More: engram activity --limit 2 --before (\S+)$/.exec(first[2] ?? '');
    expect(more).not.toBeNull();
    const second = (await ok(engram.run('activity', '--limit', '2', '--before', more?.[1] ?? ''))).trimEnd();
    expect(LINE.exec(second)?.slice(1, 3)).toEqual(['create', 'topics/a']);
  });

  it('repeats in its hint every option that shaped the page: the next page is of the same listing', async () => {
    const engram = await withChanges();
    await ok(engram.run('write', 'topics/c', '-d', 'About c', '--new', 'three', '--user', 'ada'));
    const db = engram.dir.file('other memory.db');
    copyFileSync(engram.db, db);
    const args = ['activity', '--actor', 'cli', '--limit', '1', '--db', db, '--user', 'local'];
    const first = (await ok(engram.run(...args))).trimEnd().split('\n');
    const hint = /^More: (engram activity .*)$/.exec(first[1] ?? '')?.[1] ?? '';
    const cursor = /--before (\S+)$/.exec(hint)?.[1] ?? '';
    expect(hint).toBe(`engram activity --db '${db}' --user local --actor cli --limit 1 --before ${cursor}`);

    const second = (await ok(engram.run(...args, '--before', cursor))).trimEnd().split('\n');
    expect(LINE.exec(second[0] ?? '')?.slice(1, 3)).toEqual(['create', 'topics/b']);
    expect(second[1]).toMatch(/^More: engram activity --db '.*' --user local --actor cli --limit 1 --before \S+$/);
    expect(second[1]).not.toContain(cursor);
  });

  it.skipIf(postgres === undefined)(
    'never prints the password of --database-url in its hint, and says so',
    async () => {
      const dir = tempDir();
      const env = childEnv(dir.path);
      const database = await postgresBackend(postgres ?? '').create(dir);
      const url = new URL(database.args[1] ?? '');
      url.password = 's3cret';
      const engram = (...args: string[]) => runInProcess([...args, '--database-url', url.toString()], env);
      await ok(engram('write', 'topics/a', '-d', 'About a', '--new', 'one'));
      await ok(engram('write', 'topics/b', '-d', 'About b', '--new', 'two'));
      const page = await ok(engram('activity', '--limit', '1'));
      expect(page).not.toContain('s3cret');
      const lines = page.trimEnd().split('\n');
      url.password = '';
      expect(lines[1]).toBe(
        'Note: the password in --database-url is left out of the next line: run it with PGPASSWORD set ' +
          '(or the password in ~/.pgpass), or put the password back in.',
      );
      expect(lines[2]).toMatch(/^More: engram activity --database-url '(.*)' --limit 1 --before \S+$/);
      expect(/--database-url '(.*)'/.exec(lines[2] ?? '')?.[1]).toBe(url.toString());
    },
  );

  it('leaves out of its hint what the environment set, which holds when it is run', async () => {
    const engram = await withChanges();
    const first = (await ok(engram.run('activity', '--limit', '1'))).trimEnd().split('\n');
    expect(first[1]).toMatch(/^More: engram activity --limit 1 --before \S+$/);
  });

  it('filters by actor, and says when there is nothing', async () => {
    const engram = await withChanges();
    expect(await ok(engram.run('activity', '--actor', 'claude'))).toBe('No changes.\n');
    expect((await ok(engram.run('activity', '--actor', 'cli'))).trimEnd().split('\n')).toHaveLength(3);
  });

  it('gives scripts the page with --json', async () => {
    const engram = await withChanges();
    const page = JSON.parse(await ok(engram.run('activity', '--json', '--limit', '1')));
    expect(page).toEqual({
      items: [
        {
          name: 'topics/a',
          revision: 2,
          operation: 'append',
          actor: 'cli',
          at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          size: expect.any(Number),
          description: 'About a',
          cursor: expect.any(String),
        },
      ],
      next: expect.any(String),
    });
  });

  it('refuses a limit out of range as a usage error, and a cursor it did not give', async () => {
    const engram = await withChanges();
    await expectUsageError(engram, ['activity', '--limit', '0'], /expected a whole number from 1 to 200/);
    await expectUsageError(engram, ['activity', '--limit', '201'], /expected a whole number from 1 to 200/);
    await expectRefused(
      engram,
      ['activity', '--before', 'yesterday'],
      '"yesterday" is not an activity cursor: pass the cursor of an item (or the page\'s next) as it was given.',
    );
  });
});
