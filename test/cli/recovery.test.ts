/**
 * Seeing, undoing and forgetting from the command line, end to end: history, show, diff,
 * restore, trash, undrop, purge, export, import and wipe run as the built CLI on a
 * temporary database, with their --json shapes and exit codes (1 refused, 2 usage) — and
 * the purge test: after `engram purge`, no byte of the purged text is left in the
 * database files.
 */

import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createMemory, type WriteRequest } from '../../src/memory/memory.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { createTransfer } from '../../src/transfer/transfer.js';
import { type EngramRun, queryDatabase } from '../helpers/engram.js';
import { CALLER, expectEngramError, newMemory } from '../memory/fixtures.js';
import { type Cli, cli, databaseState, expectRefused, expectUsageError, inProcessCli, ok } from './fixtures.js';

async function json<T>(result: Promise<EngramRun>): Promise<T> {
  return JSON.parse(await ok(result)) as T;
}

/**
 * Writes straight into the database as `engram write` does (user local, recorded as cli):
 * the same Memory service over the same store, without a process per write.
 */
async function seed(engram: Cli, writes: readonly WriteRequest[]): Promise<void> {
  const store = openSqliteStore({ path: engram.db });
  try {
    const memory = createMemory({ store });
    for (const write of writes) await memory.write({ user: 'local', label: 'cli' }, write);
  } finally {
    await store.close();
  }
}

/** topics/editor at revision 3: created, Helix replaced by Neovim, a new description. */
async function editorWithThreeRevisions(): Promise<Cli> {
  const engram = cli();
  await seed(engram, [
    { name: 'topics/editor', description: 'Editor', new: 'Uses Helix.\nTabs, width 4.' },
    { name: 'topics/editor', old: 'Helix', new: 'Neovim' },
    { name: 'topics/editor', description: 'Editor preferences' },
  ]);
  return engram;
}

interface RevisionJson {
  revision: number;
  operation: string;
  actor: string;
  at: number;
  description: string;
  body: string;
}

describe('engram history, show, diff, restore', () => {
  it('history lists the revisions written by engram write, as text and as JSON', async () => {
    const engram = cli();
    await ok(engram.run('write', 'topics/editor', '-d', 'Editor', '--new', 'Uses Helix.\nTabs, width 4.'));
    await ok(engram.run('write', 'topics/editor', '--old', 'Helix', '--new', 'Neovim'));
    await ok(engram.run('write', 'topics/editor', '-d', 'Editor preferences'));

    const text = await ok(engram.run('history', 'topics/editor'));
    const revisions = await json<RevisionJson[]>(engram.run('history', 'topics/editor', '--json'));

    expect(text.split('\n')).toEqual([
      expect.stringMatching(/^ {3}1 {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ {2}create {4}cli {2}\(27 bytes\): Editor$/),
      expect.stringMatching(/^ {3}2 {2}\S+ \S+ {2}replace {3}cli {2}\(28 bytes\): Editor$/),
      expect.stringMatching(/^ {3}3 {2}\S+ \S+ {2}describe {2}cli {2}\(28 bytes\): Editor preferences$/),
      '',
    ]);
    expect(revisions).toEqual([
      {
        revision: 1,
        operation: 'create',
        actor: 'cli',
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        description: 'Editor',
        body: 'Uses Helix.\nTabs, width 4.\n',
      },
      {
        revision: 2,
        operation: 'replace',
        actor: 'cli',
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        description: 'Editor',
        body: 'Uses Neovim.\nTabs, width 4.\n',
      },
      {
        revision: 3,
        operation: 'describe',
        actor: 'cli',
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        description: 'Editor preferences',
        body: 'Uses Neovim.\nTabs, width 4.\n',
      },
    ]);
  });

  it('show prints one revision; diff compares it to the latest or to --to', async () => {
    const engram = await editorWithThreeRevisions();

    expect(await ok(engram.run('show', 'topics/editor', '--rev', '1'))).toBe(
      'topics/editor@1 (27 bytes): Editor\nUses Helix.\nTabs, width 4.\n',
    );
    expect(await json(engram.run('show', 'topics/editor', '--rev', '2', '--json'))).toMatchObject({
      revision: 2,
      operation: 'replace',
      body: 'Uses Neovim.\nTabs, width 4.\n',
    });
    const patch = [
      '--- topics/editor@1\tEditor',
      '+++ topics/editor@3\tEditor preferences',
      '@@ -1,2 +1,2 @@',
      '-Uses Helix.',
      '+Uses Neovim.',
      ' Tabs, width 4.',
      '',
    ].join('\n');
    expect(await ok(engram.run('diff', 'topics/editor', '--rev', '1'))).toBe(patch);
    expect(await json(engram.run('diff', 'topics/editor', '--rev', '1', '--json'))).toEqual({
      diff: patch,
      tooDifferent: false,
    });
    expect(await ok(engram.run('diff', 'topics/editor', '--rev', '1', '--to', '2'))).toBe(
      patch.replace('topics/editor@3\tEditor preferences', 'topics/editor@2\tEditor'),
    );
  });

  it('diff says when two revisions are too different to show line by line, with their sizes and how to see each', async () => {
    const engram = cli();
    await seed(engram, [
      { name: 'topics/list', description: 'A list', new: 'a\n'.repeat(8_000) },
      { name: 'topics/list', old: 'a\n'.repeat(8_000), new: 'b\n'.repeat(8_000) },
    ]);

    expect(await ok(engram.run('diff', 'topics/list', '--rev', '1'))).toBe(
      [
        'Revisions 1 and 2 of topics/list are too different to show line by line: ' +
          'revision 1 has 8,000 lines (16,000 bytes), revision 2 has 8,000 lines (16,000 bytes).',
        'See each in full to compare them:',
        '  engram show topics/list --rev 1',
        '  engram show topics/list --rev 2',
        '',
      ].join('\n'),
    );
    const side = (revision: number) => ({ revision, description: 'A list', size: 16_000, lines: 8_000 });
    expect(await json(engram.run('diff', 'topics/list', '--rev', '2', '--to', '1', '--json'))).toEqual({
      diff: null,
      tooDifferent: true,
      from: side(2),
      to: side(1),
    });
  });

  it('restore brings back a revision as a new restore revision', async () => {
    const engram = await editorWithThreeRevisions();

    expect(await ok(engram.run('restore', 'topics/editor', '--rev', '1'))).toBe(
      'Restored topics/editor (27 bytes): Editor\n',
    );
    const { entry } = await json<{ entry: Record<string, unknown> }>(
      engram.run('restore', 'topics/editor', '--rev', '3', '--json'),
    );

    expect(entry).toMatchObject({ name: 'topics/editor', description: 'Editor preferences', revision: 5 });
    const revisions = await json<RevisionJson[]>(engram.run('history', 'topics/editor', '--json'));
    expect(revisions.slice(3).map(({ revision, operation, actor }) => ({ revision, operation, actor }))).toEqual([
      { revision: 4, operation: 'restore', actor: 'cli' },
      { revision: 5, operation: 'restore', actor: 'cli' },
    ]);
    expect(await ok(engram.run('open', 'topics/editor'))).toContain('Uses Neovim.');
  });

  it('refuses a revision not kept (exit 1), with a JSON error under --json', async () => {
    const engram = await editorWithThreeRevisions();
    const message =
      'topics/editor has no revision 9; the revisions kept are 1 to 3. engram history topics/editor lists them.';

    await expectRefused(engram, ['restore', 'topics/editor', '--rev', '9'], message);
    await expectRefused(engram, ['show', 'topics/editor', '--rev', '9'], message);
    await expectRefused(engram, ['diff', 'topics/editor', '--rev', '1', '--to', '9'], message);
    await expectRefused(
      engram,
      ['history', 'topics/none'],
      'topics/none has no history: no entry of that name, live or in the trash.',
    );
    const result = await engram.run('show', 'topics/editor', '--rev', '9', '--json');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({ error: { code: 'NOT_FOUND', message } });
  });

  it('refuses to restore an entry in the trash (exit 1), saying to undrop it first', async () => {
    const engram = await editorWithThreeRevisions();
    await ok(engram.run('drop', 'topics/editor'));

    await expectRefused(
      engram,
      ['restore', 'topics/editor', '--rev', '1'],
      'topics/editor is in the trash: run engram undrop topics/editor first, then restore.',
    );
  });

  it('is a usage error (exit 2) without --rev, or with a revision that is not a whole number from 1', async () => {
    const engram = await editorWithThreeRevisions();

    await expectUsageError(engram, ['restore', 'topics/editor'], /required option '--rev <n>' not specified/);
    await expectUsageError(engram, ['show', 'topics/editor'], /--rev/);
    await expectUsageError(engram, ['diff', 'topics/editor'], /--rev/);
    await expectUsageError(
      engram,
      ['restore', 'topics/editor', '--rev', 'two'],
      /a revision is a whole number from 1 up/,
    );
    await expectUsageError(engram, ['show', 'topics/editor', '--rev', '0'], /a revision is a whole number from 1 up/);
    await expectUsageError(engram, ['diff', 'topics/editor', '--rev', '1', '--to', '1.5'], /whole number/);
  });
});

describe('engram trash, undrop, purge', () => {
  it('trash lists dropped entries with when, by whom and the purge date; undrop brings one back', async () => {
    const engram = await editorWithThreeRevisions();
    expect(await ok(engram.run('trash'))).toBe('The trash is empty.\n');
    await ok(engram.run('drop', 'topics/editor'));

    const text = await ok(engram.run('trash'));
    const items = await json<Array<Record<string, unknown>>>(engram.run('trash', '--json'));

    expect(text).toMatch(
      /^topics\/editor \(28 bytes\): Editor preferences\n {2}dropped \S+ \S+Z by cli; purged after \S+ \S+Z\n$/,
    );
    expect(items).toEqual([
      {
        name: 'topics/editor',
        description: 'Editor preferences',
        body: 'Uses Neovim.\nTabs, width 4.\n',
        size: 28,
        created: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updated: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        revision: 4,
        droppedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        droppedBy: 'cli',
        purgeAt: new Date(Date.parse(items[0]?.droppedAt as string) + 30 * 24 * 60 * 60 * 1000).toISOString(),
      },
    ]);

    expect(await ok(engram.run('undrop', 'topics/editor'))).toBe(
      'Undropped topics/editor (28 bytes): Editor preferences\n',
    );
    expect(await ok(engram.run('trash'))).toBe('The trash is empty.\n');
    expect((await json<RevisionJson[]>(engram.run('history', 'topics/editor', '--json'))).at(-1)).toMatchObject({
      revision: 5,
      operation: 'undrop',
      actor: 'cli',
    });
  });

  it('undrop --json gives the entry; undrop is refused (exit 1) when the name is taken or not in the trash', async () => {
    const engram = await editorWithThreeRevisions();
    await ok(engram.run('drop', 'topics/editor'));
    await ok(engram.run('write', 'topics/editor', '-d', 'Taken', '--new', 'Uses Zed.'));

    await expectRefused(
      engram,
      ['undrop', 'topics/editor'],
      'topics/editor cannot be undropped: a live entry has taken the name since. Rename or drop the live one first ' +
        '(engram open topics/editor shows it), then undrop again.',
    );
    await expectRefused(
      engram,
      ['undrop', 'topics/none'],
      'topics/none is not in the trash. engram trash lists what is.',
    );

    await ok(engram.run('drop', 'topics/editor'));
    const { entry } = await json<{ entry: Record<string, unknown> }>(engram.run('undrop', 'topics/editor', '--json'));
    expect(entry).toMatchObject({ name: 'topics/editor', description: 'Taken', body: 'Uses Zed.\n' });
  });

  it('purge forgets a dropped entry; refuses a live one without --force and an unknown one (exit 1)', async () => {
    const engram = await editorWithThreeRevisions();
    await ok(engram.run('write', 'topics/other', '-d', 'Other', '--new', 'other'));

    await expectRefused(
      engram,
      ['purge', 'topics/editor'],
      'topics/editor is a live entry: drop it first, or pass --force to purge it and all its history now.',
    );
    await expectRefused(
      engram,
      ['purge', 'topics/none'],
      'topics/none is neither live nor in the trash; nothing was purged.',
    );

    await ok(engram.run('drop', 'topics/editor'));
    expect(await ok(engram.run('purge', 'topics/editor'))).toBe('Purged topics/editor (1 copy) and all its history.\n');
    expect(await ok(engram.run('trash'))).toBe('The trash is empty.\n');
    expect(queryDatabase(engram.db, 'SELECT name FROM entries')).toEqual([{ name: 'topics/other' }]);
    expect(queryDatabase(engram.db, 'SELECT count(*) AS n FROM revisions')).toEqual([{ n: 1 }]);

    expect(await json(engram.run('purge', 'topics/other', '--force', '--json'))).toEqual({
      purged: 'topics/other',
      copies: 1,
    });
    expect(databaseState(engram.db)).toEqual({ entries: [], revisions: [] });
  });

  it('purges expired trash when a command starts, with the retention of the config', async () => {
    const engram = cli();
    const config = engram.dir.config({ trashRetentionDays: 0 });
    await ok(engram.run('write', 'topics/a', '-d', 'A', '--new', 'a'));
    await ok(engram.run('drop', 'topics/a'));
    expect(await json(engram.run('trash', '--json'))).toHaveLength(1);

    expect(await json(engram.run('trash', '--json', '--config', config))).toEqual([]);
    expect(databaseState(engram.db)).toEqual({ entries: [], revisions: [] });
  });
});

describe('engram export, wipe, import', () => {
  async function threeEntries(): Promise<Cli> {
    const engram = cli();
    await seed(engram, [
      { name: 'areas/engram', description: 'The memory server', new: 'TypeScript.\nThree tools.' },
      { name: 'people/ada', description: 'Ada Lovelace', new: 'Wrote the first program.' },
      { name: 'topics/unicode', description: 'Ünïcödé 🙂', new: '日本語 — café 👩‍👩‍👧' },
    ]);
    return engram;
  }

  /** Names, descriptions and bodies of every live entry. */
  async function contents(engram: Cli) {
    const index = await json<Array<{ name: string }>>(engram.run('index', '--json'));
    if (index.length === 0) return [];
    const { found } = await json<{ found: Array<{ name: string; description: string; body: string }> }>(
      engram.run('open', ...index.map((row) => row.name), '--json'),
    );
    return found.map(({ name, description, body }) => ({ name, description, body }));
  }

  it('export, wipe --yes-i-am-sure, import gives back an identical memory', async () => {
    const engram = await threeEntries();
    const before = await contents(engram);
    const file = engram.dir.file('export.json');

    expect(await engram.run('export', '--out', file)).toEqual({
      code: 0,
      stdout: '',
      stderr: `Exported 3 entries to ${file}\n`,
    });
    const { exportedAt: _written, ...written } = JSON.parse(readFileSync(file, 'utf8'));
    const { exportedAt: _printed, ...printed } = JSON.parse(await ok(engram.run('export')));
    expect(written).toEqual(printed);
    expect(await ok(engram.run('wipe', '--yes-i-am-sure'))).toBe('Moved 3 entries to the trash.\n');
    expect(await contents(engram)).toEqual([]);
    expect(await json<unknown[]>(engram.run('trash', '--json'))).toHaveLength(3);

    expect(await ok(engram.run('import', file))).toBe('created (3): areas/engram, people/ada, topics/unicode\n');

    expect(await contents(engram)).toEqual(before);
    expect((await json<RevisionJson[]>(engram.run('history', 'people/ada', '--json'))).map((r) => r.operation)).toEqual(
      ['import'],
    );
  });

  it('export --out leaves a file only its owner can read, also over an existing one that others could', async () => {
    const engram = await threeEntries();
    const fresh = engram.dir.file('fresh.json');
    const existing = engram.dir.file('existing.json');
    writeFileSync(existing, 'old content that is longer than nothing at all', { mode: 0o644 });
    chmodSync(existing, 0o644);

    await engram.run('export', '--out', fresh);
    await engram.run('export', '--out', existing);

    expect(statSync(fresh).mode & 0o777).toBe(0o600);
    expect(statSync(existing).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(existing, 'utf8')).entries).toHaveLength(3);
  });

  it('export --with-history holds the revisions and the trash', async () => {
    const engram = await threeEntries();
    await ok(engram.run('write', 'people/ada', '--new', 'Born 1815.'));
    await ok(engram.run('drop', 'topics/unicode'));

    const document = await json<{
      entries: Array<{ name: string; revisions?: unknown[] }>;
      trash?: Array<{ name: string; droppedBy: string }>;
    }>(engram.run('export', '--with-history'));

    expect(document.entries.map((entry) => [entry.name, entry.revisions?.length])).toEqual([
      ['areas/engram', 1],
      ['people/ada', 2],
    ]);
    expect(document.trash).toEqual([expect.objectContaining({ name: 'topics/unicode', droppedBy: 'cli' })]);
  });

  it('wipe without --yes-i-am-sure is a usage error (exit 2) and changes nothing', async () => {
    const engram = await threeEntries();

    await expectUsageError(
      engram,
      ['wipe'],
      /^engram: wipe empties the whole memory: pass --yes-i-am-sure to confirm\n$/,
    );
    expect(await json(engram.run('wipe', '--yes-i-am-sure', '--json'))).toEqual({ dropped: 3 });
  });

  it('wipe and import --mode replace say they purged for good when trashRetentionDays is 0', async () => {
    const engram = inProcessCli({ trashRetentionDays: 0 });
    await ok(engram.run('write', 'topics/a', '-d', 'A', '--new', 'a'));
    await ok(engram.run('write', 'topics/b', '-d', 'B', '--new', 'b'));
    const file = engram.dir.file('export.json');
    expect((await engram.run('export', '--out', file)).code).toBe(0);

    expect(await ok(engram.run('wipe', '--yes-i-am-sure'))).toBe(
      'Purged 2 entries for good: trashRetentionDays is 0, so nothing went to the trash.\n',
    );
    expect(databaseState(engram.db)).toEqual({ entries: [], revisions: [] });

    await ok(engram.run('import', file));
    await ok(engram.run('write', 'topics/c', '-d', 'C', '--new', 'c'));
    expect(await ok(engram.run('import', file, '--mode', 'replace'))).toBe(
      'unchanged (2): topics/a, topics/b\ndropped and purged for good (1): topics/c\n',
    );
    expect(await json(engram.run('wipe', '--yes-i-am-sure', '--json'))).toEqual({ dropped: 2, purged: true });
    expect(await ok(engram.run('trash'))).toBe('The trash is empty.\n');
  });

  it('import leaves out groups the model cannot write and says so; --all-groups imports them', async () => {
    const engram = inProcessCli();
    const file = engram.dir.file('incoming.json');
    writeFileSync(
      file,
      JSON.stringify({
        format: 'engram-export',
        version: 1,
        entries: [
          { name: 'topics/ok', description: 'OK', body: 'ok\n' },
          { name: 'secret/x', description: 'Not writable', body: 'x\n' },
        ],
      }),
    );
    expect(await ok(engram.run('import', file))).toBe(
      'created (1): topics/ok\n' +
        'skipped: their groups cannot be written by the model (pass --all-groups to import them) (1): secret/x\n',
    );
    expect(await ok(engram.run('import', file, '--all-groups'))).toBe(
      'created (1): secret/x\nunchanged (1): topics/ok\n',
    );
  });

  it('export streams a large memory to stdout and to a file alike', async () => {
    const engram = inProcessCli();
    for (let i = 0; i < 120; i++) await ok(engram.run('write', `topics/n${i}`, '-d', `N ${i}`, '--new', `${i}`));
    const file = engram.dir.file('export.json');
    const printed = await ok(engram.run('export'));
    await engram.run('export', '--out', file);
    const written = readFileSync(file, 'utf8');
    expect(printed).toBe(`${JSON.stringify(JSON.parse(printed), null, 2)}\n`);
    expect({ ...JSON.parse(written), exportedAt: 0 }).toEqual({ ...JSON.parse(printed), exportedAt: 0 });
    expect(JSON.parse(written).entries).toHaveLength(120);
  });

  it('merge reports conflicts without overwriting; --overwrite overwrites; --json gives the report', async () => {
    const engram = await threeEntries();
    const file = engram.dir.file('incoming.json');
    writeFileSync(
      file,
      JSON.stringify({
        format: 'engram-export',
        version: 1,
        entries: [
          { name: 'people/ada', description: 'Ada Lovelace', body: 'Different.\n' },
          { name: 'areas/engram', description: 'The memory server', body: 'TypeScript.\nThree tools.\n' },
          { name: 'topics/new', description: 'New', body: 'new\n' },
        ],
      }),
    );
    const before = databaseState(engram.db);

    const dryRun = await json(engram.run('import', file, '--dry-run', '--json'));
    expect(databaseState(engram.db)).toEqual(before);
    expect(dryRun).toEqual({
      created: ['topics/new'],
      updated: [],
      unchanged: ['areas/engram'],
      conflicts: ['people/ada'],
      dropped: [],
      skipped: [],
      dryRun: true,
    });

    expect(await ok(engram.run('import', file))).toBe(
      [
        'created (1): topics/new',
        'unchanged (1): areas/engram',
        'conflicts, left as they were (pass --overwrite to replace them) (1): people/ada',
        '',
      ].join('\n'),
    );
    expect(await ok(engram.run('open', 'people/ada'))).toContain('Wrote the first program.');

    expect(await json(engram.run('import', file, '--overwrite', '--json'))).toMatchObject({
      updated: ['people/ada'],
      unchanged: ['areas/engram', 'topics/new'],
      conflicts: [],
    });
    expect(await ok(engram.run('open', 'people/ada'))).toContain('Different.');
    expect((await json<RevisionJson[]>(engram.run('history', 'people/ada', '--json'))).at(-1)).toMatchObject({
      operation: 'import',
      actor: 'cli',
    });
  });

  it('--mode replace drops the others to the trash; --dry-run first says so and changes nothing', async () => {
    const engram = await threeEntries();
    const only = JSON.stringify({
      format: 'engram-export',
      version: 1,
      entries: [{ name: 'people/ada', description: 'Ada Lovelace', body: 'Wrote the first program.\n' }],
    });
    const before = databaseState(engram.db);

    expect(await ok(engram.pipe(only, 'import', '-', '--mode', 'replace', '--dry-run'))).toBe(
      [
        'Dry run: nothing was changed.',
        'unchanged (1): people/ada',
        'dropped to the trash (2): areas/engram, topics/unicode',
        '',
      ].join('\n'),
    );
    expect(databaseState(engram.db)).toEqual(before);

    await ok(engram.pipe(only, 'import', '-', '--mode', 'replace'));
    expect((await contents(engram)).map((entry) => entry.name)).toEqual(['people/ada']);
    expect(
      (await json<Array<{ name: string }>>(engram.run('trash', '--json'))).map((item) => item.name).sort(),
    ).toEqual(['areas/engram', 'topics/unicode']);
  });

  it('refuses a truncated file or one with an invalid name (exit 1), saying where, changing nothing', async () => {
    const engram = await threeEntries();
    const exported = await ok(engram.run('export'));
    const truncated = engram.dir.file('truncated.json');
    writeFileSync(truncated, exported.slice(0, exported.length / 2));
    const invalid = engram.dir.file('invalid.json');
    writeFileSync(
      invalid,
      JSON.stringify({
        format: 'engram-export',
        version: 1,
        entries: [
          { name: 'topics/fine', description: 'Fine', body: 'fine\n' },
          { name: 'people/John Smith', description: 'John', body: 'john\n' },
        ],
      }),
    );

    const before = databaseState(engram.db);
    const result = await engram.run('import', truncated, '--mode', 'replace');
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(/^the import file is not valid JSON \(.*\); nothing was imported\.\n$/);
    expect(databaseState(engram.db)).toEqual(before);

    // Core's words on the document (test/transfer/transfer.test.ts pins them), passed on as they are.
    const core = newMemory();
    const refusal = await expectEngramError(
      () =>
        createTransfer(core).import(CALLER, createTransfer(core).parse(readFileSync(invalid, 'utf8')), {
          mode: 'merge',
        }),
      'INVALID_ARGUMENT',
    );
    await expectRefused(engram, ['import', invalid], refusal.message);
  });

  it('is a usage error (exit 2) for a missing file or an unknown mode', async () => {
    const engram = await threeEntries();

    await expectUsageError(engram, ['import', engram.dir.file('nope.json')], /^engram: cannot read .*nope\.json: /);
    await expectUsageError(engram, ['import', '-', '--mode', 'append'], /--mode.*merge, replace/);
  });
});

/**
 * The purge test. A unique marker is written into an entry's body and survives in its
 * older revisions after edits; after `engram purge`, the raw bytes of every database
 * file (main, -wal, -journal, -shm) must hold no copy of it.
 */
describe('engram purge leaves no copy of the text in the database files', () => {
  /** A marker no other test writes, as ASCII and as its own bytes in the file. */
  function uniqueMarker(): string {
    return `PURGE-MARKER-${process.pid}-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  }

  /** The database files present now, with which of them hold `marker`. */
  function filesHolding(engram: Cli, marker: string): { files: string[]; holding: string[] } {
    const base = 'memory.db';
    const files = readdirSync(engram.dir.path).filter((name) => name.startsWith(base));
    const needle = Buffer.from(marker, 'utf8');
    const holding = files.filter((name) => readFileSync(join(engram.dir.path, name)).includes(needle));
    return { files, holding };
  }

  /**
   * An entry whose first revisions hold the marker — in the description (so in index
   * pages too), in a short body and in a body that spans overflow pages — then edited clean.
   */
  async function writeAndEditAway(engram: Cli, name: string, marker: string): Promise<void> {
    const filler = Array.from({ length: 120 }, (_, i) => `filler line ${i} so the body spans overflow pages`).join(
      '\n',
    );
    await ok(engram.run('write', name, '-d', `Secret notes ${marker}`, '--new', `The secret is ${marker}.`));
    await ok(engram.run('write', name, '--new', `${filler}\nAgain: ${marker}`));
    await ok(engram.run('write', name, '--new', 'One more line.'));
    await ok(engram.run('write', name, '--old', `The secret is ${marker}.`, '--new', 'The secret is gone.'));
    await ok(engram.run('write', name, '--old', `Again: ${marker}`, '--new', 'Again: nothing.'));
    await ok(engram.run('write', name, '-d', 'Secret notes'));
    // Other entries around it, written before and after, that must survive intact.
    await ok(engram.run('write', 'topics/kept', '-d', 'Kept', '--new', 'kept text'));

    const revisions = await json<RevisionJson[]>(engram.run('history', name, '--json'));
    const holds = revisions.map((revision) => `${revision.description}\n${revision.body}`.includes(marker));
    expect(holds).toEqual([true, true, true, true, true, false]);
    expect(filesHolding(engram, marker).holding, 'the marker is on disk before the purge').not.toEqual([]);
  }

  it('after drop then purge', async () => {
    const engram = cli();
    const marker = uniqueMarker();
    await writeAndEditAway(engram, 'topics/secret', marker);
    await ok(engram.run('drop', 'topics/secret'));

    expect(await ok(engram.run('purge', 'topics/secret'))).toBe('Purged topics/secret (1 copy) and all its history.\n');

    const { files, holding } = filesHolding(engram, marker);
    expect(files).toContain('memory.db');
    expect(holding).toEqual([]);
    expect(await ok(engram.run('open', 'topics/kept'))).toContain('kept text');
  });

  it('after purge --force of a live entry', async () => {
    const engram = cli();
    const marker = uniqueMarker();
    await writeAndEditAway(engram, 'topics/secret', marker);

    await ok(engram.run('purge', 'topics/secret', '--force'));

    expect(filesHolding(engram, marker).holding).toEqual([]);
    expect(await ok(engram.run('open', 'topics/kept'))).toContain('kept text');
  });

  it('after purge of several dropped copies, while another connection holds the database open', async () => {
    const engram = cli();
    const marker = uniqueMarker();
    await ok(engram.run('write', 'topics/kept', '-d', 'Kept', '--new', 'kept'));
    // A long-lived connection, as a running `engram serve` has: the WAL then outlives each command.
    const server = new Database(engram.db);
    try {
      server.pragma('journal_mode = WAL');
      for (const life of ['first', 'second']) {
        await ok(engram.run('write', 'topics/secret', '-d', 'Secret', '--new', `${life}: ${marker}`));
        await ok(engram.run('write', 'topics/secret', '--new', `more ${marker}`));
        await ok(engram.run('drop', 'topics/secret'));
      }
      expect(existsSync(`${engram.db}-wal`)).toBe(true);
      expect(filesHolding(engram, marker).holding).not.toEqual([]);

      expect(await ok(engram.run('purge', 'topics/secret'))).toBe(
        'Purged topics/secret (2 copies) and all its history.\n',
      );

      expect(filesHolding(engram, marker).holding).toEqual([]);
      expect(server.prepare('SELECT name FROM entries').all()).toEqual([{ name: 'topics/kept' }]);
    } finally {
      server.close();
    }
    expect(filesHolding(engram, marker).holding).toEqual([]);
  });
});
