/**
 * `engram import --from KIND PATH` through the real CLI: the dry run says item by item what
 * would be created, appended or left out and why, and changes nothing; --json gives the
 * same as data; the import applies in one go with history recorded as import:KIND; and a
 * bad file, a missing path or an empty folder imports nothing.
 */

import { mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeAnthropicMemory } from '../helpers/anthropic-memory.js';
import { queryDatabase } from '../helpers/engram.js';
import { webuiMemoryExport } from '../helpers/llama-webui.js';
import { writeServerMemory } from '../helpers/server-memory.js';
import { CLAUDE_CODE_FOLDER } from '../transfer/bridges/fixtures.js';
import { cli } from './fixtures.js';

/** Every entry's name, description and body, straight from the database. */
function entries(db: string) {
  return queryDatabase<{ name: string; description: string; body: string }>(
    db,
    `SELECT e.name, e.description, r.body FROM entries e JOIN revisions r ON r.entry_id = e.id AND r.revision = e.revision
      ORDER BY e.name`,
  );
}

function actors(db: string) {
  return queryDatabase<{ actor: string; operation: string }>(
    db,
    'SELECT DISTINCT actor, operation FROM revisions ORDER BY actor',
  );
}

describe('engram import --from server-memory', () => {
  async function setup() {
    const engram = cli();
    const file = engram.dir.file('memory.jsonl');
    await writeServerMemory(file, {
      entities: [
        { name: 'Ada Lovelace', entityType: 'person', observations: ['Wrote the first program'] },
        { name: 'Engram', entityType: 'project', observations: ['TypeScript, Node 20'] },
      ],
      relations: [{ from: 'Ada Lovelace', to: 'Engram', relationType: 'advises' }],
    });
    await engram.run('write', 'areas/engram', '-d', 'The memory server', '--new', 'Three tools.');
    return { engram, file };
  }

  it('dry run: says what would be created and appended, and why, changing nothing', async () => {
    const { engram, file } = await setup();
    const before = entries(engram.db);
    const dry = await engram.run('import', '--from', 'server-memory', file, '--dry-run');
    expect(dry).toEqual({
      code: 0,
      stdout:
        'Dry run: nothing was changed.\n' +
        'create people/ada-lovelace  (from line 1: entity "Ada Lovelace" (person))\n' +
        '    "Ada Lovelace" is not a valid slug: made ada-lovelace\n' +
        'append areas/engram  (from line 2: entity "Engram" (project))\n' +
        'Would import from server-memory: 1 create, 1 append.\n',
      stderr: '',
    });
    expect(entries(engram.db)).toEqual(before);
  });

  it('--json: the same, as data', async () => {
    const { engram, file } = await setup();
    const dry = await engram.run('import', '--from', 'server-memory', file, '--dry-run', '--json');
    expect(JSON.parse(dry.stdout)).toMatchObject({
      kind: 'server-memory',
      dryRun: true,
      items: [
        {
          source: 'line 1: entity "Ada Lovelace" (person)',
          names: [{ name: 'people/ada-lovelace', action: 'create' }],
        },
        { source: 'line 2: entity "Engram" (project)', names: [{ name: 'areas/engram', action: 'append' }], notes: [] },
      ],
      report: { created: ['people/ada-lovelace'], appended: ['areas/engram'] },
    });
  });

  it('imports in one go, recording import:server-memory in history; again, it finds nothing new', async () => {
    const { engram, file } = await setup();
    const done = await engram.run('import', '--from', 'server-memory', file);
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/Imported from server-memory: 1 create, 1 append\.\n$/);
    expect(entries(engram.db)).toEqual([
      { name: 'areas/engram', description: 'The memory server', body: 'Three tools.\nTypeScript, Node 20\n' },
      {
        name: 'people/ada-lovelace',
        description: 'Ada Lovelace (person)',
        body: 'Wrote the first program\n→ advises Engram\n',
      },
    ]);
    expect(actors(engram.db)).toEqual([
      { actor: 'cli', operation: 'create' },
      { actor: 'import:server-memory', operation: 'import' },
    ]);
    const again = await engram.run('import', '--from', 'server-memory', file);
    expect(again.stdout).toMatch(/Imported from server-memory: 2 unchanged\.\n$/);
  });

  it('imports nothing from a truncated file, and says which line', async () => {
    const { engram, file } = await setup();
    writeFileSync(file, '{"type":"entity","name":"a","entityType":"x","observations":[]}\n{"type":"ent', { flag: 'w' });
    const before = entries(engram.db);
    const refused = await engram.run('import', '--from', 'server-memory', file);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^memory.jsonl line 2 is not JSON \(.*\): the file may be cut short; nothing was imported.\n$/,
    );
    expect(entries(engram.db)).toEqual(before);
  });

  it('refuses an over-cap entity without --split, importing nothing, and splits it with --split', async () => {
    const engram = cli();
    const file = engram.dir.file('memory.jsonl');
    const observations = Array.from({ length: 400 }, (_, i) => `observation ${i} ${'x'.repeat(40)}`);
    await writeServerMemory(file, {
      entities: [
        { name: 'small', entityType: 'topic', observations: ['fits'] },
        { name: 'big', entityType: 'topic', observations },
      ],
    });
    const refused = await engram.run('import', '--from', 'server-memory', file);
    expect(refused).toMatchObject({ code: 1 });
    expect(refused.stderr).toBe(
      '1 item(s) are over the entry cap of 16,384 bytes: line 2: entity "big" (topic). ' +
        'Pass --split to split them into -2, -3 entries (--dry-run shows how); nothing was imported.\n',
    );
    const dry = await engram.run('import', '--from', 'server-memory', file, '--dry-run');
    expect(dry.stdout).toContain(
      'too large: line 2: entity "big" (topic)\n    22,690 bytes is over the entry cap of 16,384 bytes\n' +
        '    split it with --split, or shorten it in the source\n',
    );
    expect(dry.stdout).toMatch(/Without --split, this import would be refused: 1 item\(s\) are too large.\n$/);
    const split = await engram.run('import', '--from', 'server-memory', file, '--split');
    expect(split.stdout).toContain('create topics/big, create topics/big-2  (from line 2: entity "big" (topic))');
    expect(entries(engram.db).map((entry) => entry.name)).toEqual(['topics/big', 'topics/big-2', 'topics/small']);
  });

  it('refuses --map in the wrong shape as a usage error', async () => {
    const { engram, file } = await setup();
    const refused = await engram.run('import', '--from', 'server-memory', file, '--map', 'person');
    expect(refused).toMatchObject({
      code: 2,
      stderr: 'engram: --map person: expected TYPE=GROUP, for example --map person=people\n',
    });
  });
});

describe('engram import --from anthropic-memory', () => {
  it('imports the /memories folder the SDK helper wrote, as import:anthropic-memory', async () => {
    const engram = cli();
    const folder = await writeAnthropicMemory(engram.dir.file('claude'), [
      { command: 'create', path: '/memories/people/ada.md', file_text: '# Ada Lovelace\nWrote the first program.\n' },
      { command: 'create', path: '/memories/progress.txt', file_text: 'Import done.\n' },
    ]);
    const dry = await engram.run('import', '--from', 'anthropic-memory', folder, '--dry-run');
    expect(dry.stdout).toBe(
      'Dry run: nothing was changed.\n' +
        'create people/ada  (from people/ada.md)\n' +
        'create topics/progress  (from progress.txt)\n' +
        'Would import from anthropic-memory: 2 create.\n',
    );
    expect((await engram.run('import', '--from', 'anthropic-memory', folder)).code).toBe(0);
    expect(entries(engram.db)).toEqual([
      { name: 'people/ada', description: 'Ada Lovelace', body: '# Ada Lovelace\nWrote the first program.\n' },
      { name: 'topics/progress', description: 'Import done.', body: 'Import done.\n' },
    ]);
    expect(actors(engram.db)).toEqual([{ actor: 'import:anthropic-memory', operation: 'import' }]);
  });

  it('imports nothing from a folder holding a binary file', async () => {
    const engram = cli();
    const folder = await writeAnthropicMemory(engram.dir.file('claude'), [
      { command: 'create', path: '/memories/notes.md', file_text: 'Fine.\n' },
    ]);
    writeFileSync(`${folder}/photo.png`, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0x00]));
    await engram.run('write', 'topics/me', '-d', 'Me', '--new', 'Hello.');
    const refused = await engram.run('import', '--from', 'anthropic-memory', folder);
    expect(refused).toMatchObject({
      code: 1,
      stderr: 'photo.png is not UTF-8 text (a binary file?); nothing was imported.\n',
    });
    expect(entries(engram.db).map((entry) => entry.name)).toEqual(['topics/me']);
  });
});

describe('engram import --from claude-code', () => {
  it('reads the folder named by its MEMORY.md, as import:claude-code', async () => {
    const engram = cli();
    const folder = engram.dir.file('memory');
    mkdirSync(folder);
    for (const [name, text] of Object.entries(CLAUDE_CODE_FOLDER)) writeFileSync(`${folder}/${name}`, text);
    const done = await engram.run('import', '--from', 'claude-code', `${folder}/MEMORY.md`, '--name', 'areas/shop');
    expect(done.stdout).toContain('create areas/shop  (from MEMORY.md)\n');
    expect(done.stdout).toContain('not an entry: gone.md\n    linked from MEMORY.md but not in the folder\n');
    expect(done.stdout).toMatch(/Imported from claude-code: 4 create, 1 left out\.\n$/);
    expect(entries(engram.db).map((entry) => entry.name)).toEqual([
      'areas/deploy',
      'areas/shop',
      'topics/debugging',
      'topics/user_role',
    ]);
    expect(actors(engram.db)).toEqual([{ actor: 'import:claude-code', operation: 'import' }]);
  });
});

describe('engram import --from chatgpt', () => {
  it('reads the list into the entry named, as import:chatgpt', async () => {
    const engram = cli();
    writeFileSync(engram.dir.file('memories.txt'), 'Lives in Lisbon.\nPrefers tea.\nLives in Lisbon.\n');
    const done = await engram.run(
      'import',
      '--from',
      'chatgpt',
      engram.dir.file('memories.txt'),
      '--name',
      'people/me',
    );
    expect(done).toMatchObject({ code: 0, stderr: '' });
    expect(done.stdout).toBe(
      'create people/me  (from 2 memories)\n' +
        'duplicate: line 3\n    the same memory as line 1: kept once\n' +
        'Imported from chatgpt: 1 create, 1 left out.\n',
    );
    expect(entries(engram.db)).toEqual([
      {
        name: 'people/me',
        description: 'What ChatGPT remembered about the user (2 memories)',
        body: 'Lives in Lisbon.\nPrefers tea.\n',
      },
    ]);
    expect(actors(engram.db)).toEqual([{ actor: 'import:chatgpt', operation: 'import' }]);
  });
});

describe('engram import --from llama-webui', () => {
  it('reads the WebUI memory export, as import:llama-webui; a file cut short imports nothing', async () => {
    const engram = cli();
    await engram.run('write', 'people/ada', '-d', 'Ada', '--new', 'Met in 2024.');
    const file = engram.dir.file('llama_memory_2026-12-03.json');
    const text = webuiMemoryExport([
      { name: 'people/ada', description: 'Ada Lovelace', new_str: 'Likes tea' },
      { name: 'areas/engram', description: 'The memory server', new_str: 'Three tools.' },
      { name: 'recipes/bread', description: 'Bread', new_str: 'Flour.' },
    ]);
    writeFileSync(file, text.slice(0, -10));
    const cut = await engram.run('import', '--from', 'llama-webui', file);
    expect(cut.code).not.toBe(0);
    expect(cut.stderr).toMatch(
      /llama_memory_2026-12-03\.json is not JSON \(.*\): the file may be cut short; nothing was imported\.\n$/,
    );
    expect(entries(engram.db)).toEqual([{ name: 'people/ada', description: 'Ada', body: 'Met in 2024.\n' }]);
    writeFileSync(file, text);
    const done = await engram.run('import', '--from', 'llama-webui', file);
    expect(done).toMatchObject({ code: 0, stderr: '' });
    expect(done.stdout).toBe(
      'create areas/engram  (from entry 1: "areas/engram")\n' +
        'append people/ada  (from entry 2: "people/ada")\n' +
        'skip recipes/bread  (from entry 3: "recipes/bread")\n' +
        '    its group is not one the model can write (--all-groups imports it)\n' +
        'Imported from llama-webui: 1 create, 1 append, 1 skip.\n',
    );
    expect(entries(engram.db)).toEqual([
      { name: 'areas/engram', description: 'The memory server', body: 'Three tools.\n' },
      { name: 'people/ada', description: 'Ada', body: 'Met in 2024.\nLikes tea\n' },
    ]);
    expect(actors(engram.db)).toContainEqual({ actor: 'import:llama-webui', operation: 'import' });
  });
});

describe('engram import --from markdown', () => {
  it('reports a differing entry as a conflict and a group the model cannot write as skipped, changing neither', async () => {
    const engram = cli();
    await engram.run('write', 'topics/me', '-d', 'Me', '--new', 'Hello.');
    const folder = engram.dir.file('md');
    mkdirSync(`${folder}/topics`, { recursive: true });
    mkdirSync(`${folder}/archive`);
    writeFileSync(`${folder}/topics/me.md`, '---\ndescription: "Me"\n---\nSomething else.\n');
    writeFileSync(`${folder}/archive/old.md`, '---\ndescription: "Old"\n---\nOld.\n');
    const done = await engram.run('import', '--from', 'markdown', folder);
    expect(done.stdout).toBe(
      'skip archive/old  (from archive/old.md)\n' +
        '    its group is not one the model can write (--all-groups imports it)\n' +
        'conflict topics/me  (from topics/me.md)\n' +
        '    an entry of this name differs: left as it is (--overwrite replaces it)\n' +
        'Imported from markdown: 1 conflict, 1 skip.\n',
    );
    expect(entries(engram.db)).toEqual([{ name: 'topics/me', description: 'Me', body: 'Hello.\n' }]);
    const overwritten = await engram.run('import', '--from', 'markdown', folder, '--overwrite', '--all-groups');
    expect(overwritten.stdout).toMatch(/Imported from markdown: 1 create, 1 replace\.\n$/);
    expect(entries(engram.db).map((entry) => entry.body)).toEqual(['Old.\n', 'Something else.\n']);
  });
});

describe('engram import --from: paths', () => {
  it('refuses a path that does not exist, a file for a folder kind and an empty folder', async () => {
    const engram = cli();
    const missing = await engram.run('import', '--from', 'markdown', engram.dir.file('nowhere'));
    expect(missing).toMatchObject({ code: 2, stderr: `engram: ${engram.dir.file('nowhere')} does not exist\n` });
    writeFileSync(engram.dir.file('a.md'), 'x');
    const file = await engram.run('import', '--from', 'markdown', engram.dir.file('a.md'));
    expect(file.stderr).toBe(`engram: ${engram.dir.file('a.md')} is a file; this kind of import reads a folder\n`);
    mkdirSync(engram.dir.file('empty'));
    const empty = await engram.run('import', '--from', 'markdown', engram.dir.file('empty'));
    expect(empty.stderr).toBe(`engram: ${engram.dir.file('empty')} is empty: there is nothing to import\n`);
  });

  it('says a folder named without --from is one, and names --from markdown and the other folder kinds', async () => {
    const engram = cli();
    const folder = engram.dir.file('memory-folder');
    mkdirSync(folder);
    writeFileSync(join(folder, 'notes.md'), 'x');
    const refused = await engram.run('import', folder);
    // Before: "cannot read …: EISDIR: illegal operation on a directory, read".
    expect(refused).toEqual({
      code: 2,
      stdout: '',
      stderr:
        `engram: ${folder} is a folder, and engram import without --from reads one export document (a .json file). ` +
        `To import a folder of Markdown files, as engram export --format markdown writes: engram import --from markdown ${folder}. ` +
        'Other memories kept as a folder: --from anthropic-memory, --from claude-code ' +
        '(engram import --help says what each kind reads).\n',
    });
  });

  it('refuses a file past 256 MB by its size, before reading it, naming the file, its size and the limit', async () => {
    const engram = cli();
    const huge = engram.dir.file('huge.jsonl');
    // Sparse: 300 MB that take no disk and, refused by their size, are never read.
    writeFileSync(huge, '');
    truncateSync(huge, 300 * 1024 * 1024);
    for (const args of [['--from', 'server-memory', huge], [huge]]) {
      const refused = await engram.run('import', ...args);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        new RegExp(`^engram: ${huge} is 314,572,800 bytes, over the 268,435,456 bytes one import reads \\(256 MB\\): `),
      );
    }
  });

  it('refuses --split, --map and --name without --from', async () => {
    const engram = cli();
    writeFileSync(engram.dir.file('doc.json'), '{}');
    const refused = await engram.run('import', engram.dir.file('doc.json'), '--split');
    expect(refused).toMatchObject({ code: 2, stderr: 'engram: --split, --map and --name go with --from\n' });
  });

  it('lists every kind in --help', async () => {
    const help = await cli().run('import', '--help');
    expect(help.stdout).toContain('--from <kind>');
    expect(help.stdout).toMatch(/server-memory\s+memory.jsonl of the MCP memory server/);
    expect(help.stdout).toMatch(/llama-webui\s+the llama.cpp WebUI's memory export/);
    expect(help.stdout).toContain('docs/import.md');
  });
});
