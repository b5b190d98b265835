/**
 * The `engram` command as people and scripts use it, on a temporary database (ENGRAM_DB)
 * with an empty config folder: in-process through main(argv, io), and the built
 * executable as a child process where that is the point (stdin, its exit codes). Covers
 * the entry commands, --json shapes, the ways to pass new text, and the exit codes:
 * 0 done, 1 refused (message on stderr, database unchanged), 2 usage.
 */

import { existsSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { didYouMean, formatMissing } from '../../src/memory/model/format.js';
import { boundaryTagOf } from '../helpers/boundary.js';
import { queryDatabase } from '../helpers/engram.js';
import { CALLER, expectEngramError, newMemory } from '../memory/fixtures.js';
import { type Cli, cli, databaseState, expectRefused, expectUsageError, ok } from './fixtures.js';

/** The command line's refusal of `engram drop topics/editr` next to topics/editor: its words around core's suggestion. */
const EDITR_NOT_DROPPED = `topics/editr not found, nothing was dropped.${didYouMean(['topics/editor'])} engram index lists every entry.`;

async function withEditor(): Promise<Cli> {
  const engram = cli();
  await ok(engram.run('write', 'topics/editor', '-d', 'Editor preferences', '--new', 'Uses Helix.'));
  return engram;
}

describe('engram index', () => {
  it('says the memory is empty, then lists one index line per entry, sorted', async () => {
    const engram = cli();
    // index only reads, so the memory must exist: its first entry, dropped, leaves it empty.
    await ok(engram.run('write', 'topics/first', '-d', 'First', '--new', 'x'));
    await ok(engram.run('drop', 'topics/first'));
    expect(await ok(engram.run('index'))).toBe(
      'Memory is empty. Create the first entry with engram write, for example: ' +
        'engram write topics/preferences -d "What I prefer" --new "Green tea, no sugar."\n',
    );
    await ok(engram.run('write', 'topics/zebra', '-d', 'Last', '--new', 'z'));
    await ok(engram.run('write', 'areas/engram', '--description', 'This project', '--new', 'a'));
    expect(await ok(engram.run('index'))).toBe('areas/engram (2 bytes): This project\ntopics/zebra (2 bytes): Last\n');
  });

  it('gives scripts the rows with --json', async () => {
    const engram = await withEditor();
    expect(JSON.parse(await ok(engram.run('index', '--json')))).toEqual([
      { name: 'topics/editor', size: 12, description: 'Editor preferences' },
    ]);
    const empty = cli();
    await ok(empty.run('write', 'topics/first', '-d', 'First', '--new', 'x'));
    await ok(empty.run('drop', 'topics/first'));
    expect(JSON.parse(await ok(empty.run('index', '--json')))).toEqual([]);
  });
});

describe('engram write', () => {
  it('creates, appends, replaces, removes and describes, printing the index line', async () => {
    const engram = await withEditor();
    expect(await ok(engram.run('write', 'topics/editor', '--new', 'Tabs, width 4.'))).toBe(
      'topics/editor (27 bytes): Editor preferences\n',
    );
    await ok(engram.run('write', 'Topics/Editor', '--old', 'Helix', '--new', 'Neovim'));
    await ok(engram.run('write', 'topics/editor', '--old', 'Tabs, width 4.'));
    expect(await ok(engram.run('write', 'topics/editor', '-d', 'Editor'))).toBe('topics/editor (13 bytes): Editor\n');
    const opened = await ok(engram.run('open', 'topics/editor'));
    expect(opened).toBe(
      `topics/editor (13 bytes): Editor\nUses Neovim.\n=== end of topics/editor [${boundaryTagOf(opened)}] ===\n`,
    );
  });

  it('reads the new text from stdin after -, and from --new-file', async () => {
    const engram = await withEditor();
    await ok(engram.pipe('from stdin\r\n', 'write', 'topics/editor', '-'));
    writeFileSync(engram.dir.file('new.txt'), 'from a file');
    await ok(engram.run('write', 'topics/editor', '--new-file', engram.dir.file('new.txt')));
    await ok(engram.pipe('stdin again', 'write', 'topics/editor', '--new-file', '-'));
    const [entry] = queryDatabase(
      engram.db,
      "SELECT r.body FROM entries e JOIN revisions r ON r.entry_id = e.id AND r.revision = e.revision WHERE e.name = 'topics/editor'",
    );
    expect(entry).toEqual({ body: 'Uses Helix.\nfrom stdin\nfrom a file\nstdin again\n' });
  });

  it('gives the entry and whether it changed with --json', async () => {
    const engram = await withEditor();
    const appended = JSON.parse(await ok(engram.run('write', 'topics/editor', '--new', 'Tabs.', '--json')));
    expect(appended).toEqual({
      entry: {
        name: 'topics/editor',
        description: 'Editor preferences',
        body: 'Uses Helix.\nTabs.\n',
        size: 18,
        created: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updated: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        revision: 2,
      },
      changed: true,
    });
    const unchanged = JSON.parse(
      await ok(engram.run('write', 'topics/editor', '--old', 'Tabs', '--new', 'Tabs', '--json')),
    );
    expect(unchanged).toMatchObject({ entry: { revision: 2 }, changed: false });
  });

  it('records the CLI as the actor in history', async () => {
    const engram = await withEditor();
    expect(queryDatabase(engram.db, 'SELECT actor FROM revisions')).toEqual([{ actor: 'cli' }]);
  });

  it('uses --db over ENGRAM_DB', async () => {
    const engram = cli();
    const other = engram.dir.file('other.db');
    await ok(engram.run('write', 'topics/x', '-d', 'X', '--new', 'x', '--db', other));
    expect(await ok(engram.run('index', '--db', other))).toBe('topics/x (2 bytes): X\n');
    expect(existsSync(engram.db)).toBe(false);
  });
});

describe('engram open and drop', () => {
  it('opens entries, reporting missing names with suggestions', async () => {
    const engram = await withEditor();
    const opened = await ok(engram.run('open', 'topics/editor', 'topics/editr'));
    expect(opened).toBe(
      'topics/editor (12 bytes): Editor preferences\nUses Helix.\n' +
        `=== end of topics/editor [${boundaryTagOf(opened)}] ===\n\n` +
        `${formatMissing({ name: 'topics/editr', suggestions: ['topics/editor'] })}\n`,
    );
    expect(JSON.parse(await ok(engram.run('open', 'topics/editor', 'topics/editr', '--json')))).toEqual({
      found: [expect.objectContaining({ name: 'topics/editor', body: 'Uses Helix.\n', size: 12, revision: 1 })],
      missing: [{ name: 'topics/editr', suggestions: ['topics/editor'] }],
    });
    // A person reading, not an assistant: the entry is not marked as opened (memory/opened.ts).
    expect(queryDatabase(engram.db, 'SELECT opened FROM entries')).toEqual([{ opened: null }]);
  });

  it('drops an entry, printing what was dropped', async () => {
    const engram = await withEditor();
    expect(await ok(engram.run('drop', 'topics/editor'))).toBe(
      'Dropped topics/editor (12 bytes): Editor preferences\n',
    );
    expect(await ok(engram.run('index'))).toMatch(/^Memory is empty/);
  });

  it('gives the dropped entry with --json', async () => {
    const engram = await withEditor();
    expect(JSON.parse(await ok(engram.run('drop', 'topics/editor', '--json')))).toEqual({
      dropped: expect.objectContaining({ name: 'topics/editor', description: 'Editor preferences', size: 12 }),
    });
  });
});

describe('refused operations: exit 1, the message on stderr, the database unchanged', () => {
  it('refuses an old text that is not in the body', async () => {
    const engram = await withEditor();
    await expectRefused(
      engram,
      ['write', 'topics/editor', '--old', 'Vim', '--new', 'Emacs'],
      '--old text not found in topics/editor. Closest line: "Uses Helix." ' +
        'Copy the exact text from engram open topics/editor and run again.',
    );
  });

  it('refuses to create without a description, and to write an unconfigured group', async () => {
    const engram = await withEditor();
    await expectRefused(
      engram,
      ['write', 'topics/keyboard', '--new', 'Moonlander'],
      'topics/keyboard does not exist yet: to create it, pass -d "one line on what it covers" together with its ' +
        'text (--new TEXT, or - to read it from stdin).',
    );
    await expectRefused(
      engram,
      ['write', 'notes/idea', '-d', 'Idea', '--new', 'Fly.'],
      'notes/idea is in group "notes", which cannot be written. Groups you can write: areas, people, topics ' +
        '(for example areas/idea).',
    );
  });

  it('refuses invalid and unknown names in open and drop', async () => {
    const engram = await withEditor();
    // Core's words on a name, which every door passes on as they are (test/memory/model/names.test.ts pins them).
    const invalid = await expectEngramError(() => newMemory().open(CALLER, ['people/John Smith']), 'INVALID_NAME');
    await expectRefused(engram, ['open', 'people/John Smith'], invalid.message);
    await expectRefused(
      engram,
      ['open', 'topics/editr'],
      `${formatMissing({ name: 'topics/editr', suggestions: ['topics/editor'] })}\nengram index lists every entry.`,
    );
    await expectRefused(engram, ['drop', 'topics/editr'], EDITR_NOT_DROPPED);
  });

  it('also prints the error as JSON on stdout with --json', async () => {
    const engram = await withEditor();
    const before = databaseState(engram.db);
    const { code, stdout, stderr } = await engram.run('drop', 'topics/editr', '--json');
    expect({ code, stderr }).toEqual({ code: 1, stderr: `${EDITR_NOT_DROPPED}\n` });
    expect(JSON.parse(stdout)).toEqual({ error: { code: 'NOT_FOUND', message: EDITR_NOT_DROPPED } });
    expect(databaseState(engram.db)).toEqual(before);
  });
});

describe('usage errors: exit 2, nothing changed', () => {
  it('refuses a missing argument', async () => {
    const engram = await withEditor();
    await expectUsageError(engram, ['write'], /missing required argument 'name'/);
    await expectUsageError(engram, ['open'], /missing required argument 'names'/);
    await expectUsageError(engram, ['drop'], /missing required argument 'name'/);
  });

  it('refuses an unknown option or command', async () => {
    const engram = await withEditor();
    await expectUsageError(engram, ['index', '--bogus'], /unknown option '--bogus'/);
    await expectUsageError(engram, ['forget', 'topics/editor'], /unknown command 'forget'/);
  });

  it('refuses the new text given twice', async () => {
    const engram = await withEditor();
    const twice = /give the new text once: --new TEXT, --new-file FILE, or - for stdin/;
    await expectUsageError(engram, ['write', 'topics/editor', '--new', 'a', '-'], twice, 'b');
    await expectUsageError(engram, ['write', 'topics/editor', '--new', 'a', '--new-file', engram.db], twice);
    await expectUsageError(engram, ['write', 'topics/editor', '--new-file', '-', '-'], twice, 'b');
  });

  it('refuses a stray argument after the name, and a --new-file that cannot be read', async () => {
    const engram = await withEditor();
    await expectUsageError(engram, ['write', 'topics/editor', 'Helix'], /unexpected argument "Helix"/);
    await expectUsageError(
      engram,
      ['write', 'topics/editor', '--new-file', engram.dir.file('absent.txt')],
      /cannot read --new-file .*absent\.txt/,
    );
  });
});

describe('the built executable', () => {
  it('starts, and exits 0 done, 1 refused and 2 usage as a process', async () => {
    const engram = cli();
    const version = await ok(engram.pipe('', '--version'));
    expect(version).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(await engram.pipe('', 'write', 'topics/editor', '-d', 'Editor', '--new', 'Helix')).toEqual({
      code: 0,
      stdout: 'topics/editor (6 bytes): Editor\n',
      stderr: '',
    });
    expect(await engram.pipe('', 'drop', 'topics/editr')).toEqual({
      code: 1,
      stdout: '',
      stderr: `${EDITR_NOT_DROPPED}\n`,
    });
    const usage = await engram.pipe('', 'forget', 'topics/editor');
    expect({ code: usage.code, stdout: usage.stdout }).toEqual({ code: 2, stdout: '' });
    expect(usage.stderr).toMatch(/unknown command 'forget'/);
  });
});

describe('help and configuration', () => {
  it('lists the commands in --help', async () => {
    const help = await ok(cli().run('--help'));
    for (const command of ['stdio', 'index', 'open', 'write', 'drop'])
      expect(help).toMatch(new RegExp(`^  ${command} `, 'm'));
    expect(await ok(cli().run('write', '--help'))).toMatch(/--new-file <file>[\s\S]*Examples:/);
  });

  it('applies a valid --config file', async () => {
    const engram = cli();
    const config = engram.dir.config({ groups: { notes: 'loose ideas' } }, 'notes.json');
    await ok(engram.run('write', 'notes/idea', '-d', 'Idea', '--new', 'Fly.', '--config', config));
    expect(await ok(engram.run('index'))).toBe('notes/idea (5 bytes): Idea\n');
  });

  it('stops with a clear error and exit 1 on an invalid --config file', async () => {
    const engram = cli();
    const config = engram.dir.config({ groups: { 'Bad Group': 'x' }, entryCap: -1, colour: 'blue' }, 'bad.json');
    const invalid = await engram.run('index', '--config', config);
    expect(invalid).toMatchObject({ code: 1, stdout: '' });
    // Each problem on its own line, naming the field (the wording is config.test.ts's business).
    expect(invalid.stderr.split('\n')).toEqual([
      `invalid config file ${config}:`,
      expect.stringMatching(/^ {2}groups\.Bad Group: a group name is 1-64 characters/),
      expect.stringMatching(/^ {2}entryCap: /),
      expect.stringMatching(/^ {2}\(top level\): .*"colour"/),
      '',
    ]);

    writeFileSync(engram.dir.file('broken.json'), '{ "groups": ');
    const broken = await engram.run('index', '--config', engram.dir.file('broken.json'));
    expect(broken).toMatchObject({ code: 1, stdout: '' });
    expect(broken.stderr).toMatch(/^config file .*broken\.json is not valid JSON/);

    const absent = await engram.run('index', '--config', engram.dir.file('absent.json'));
    expect(absent).toMatchObject({ code: 1, stdout: '' });
    expect(absent.stderr).toMatch(/^cannot read config file .*absent\.json/);
    expect(existsSync(engram.db)).toBe(false);
  });
});
