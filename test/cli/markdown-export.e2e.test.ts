/**
 * `engram export --format markdown DIR` and back with `engram import --from markdown DIR`,
 * through the real CLI on SQLite and on PostgreSQL: the folder's files are exactly the
 * entries (front matter, body byte for byte, README index), and imported into an empty
 * memory they give back the same entries, awkward ones included. A later export into the
 * same folder refreshes it, one made before the record existed included; a folder holding
 * anything else is refused, and so is a link planted in it, a folder others may write, or a
 * file edited since the last export (unless --force).
 */

import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { postgresBackend, SQLITE_BACKEND } from '../helpers/backends.js';
import { childEnv, tempDir } from '../helpers/engram.js';
import { findTestPostgres } from '../helpers/postgres.js';
import { AWKWARD_ENTRIES } from '../transfer/bridges/fixtures.js';
import { cli, runInProcess } from './fixtures.js';

const postgres = await findTestPostgres();
const BACKENDS = [SQLITE_BACKEND, ...(postgres ? [postgresBackend(postgres)] : [])];

function exportDocument(entries: readonly { name: string; description: string; body: string }[]): string {
  return JSON.stringify({ format: 'engram-export', version: 1, entries });
}

describe.each(BACKENDS)('markdown export and import on $label', (backend) => {
  async function setup() {
    const dir = tempDir();
    const env = childEnv(dir.path);
    const source = await backend.create(dir);
    const target = await backend.create({ ...dir, file: (name) => dir.file(`target-${name}`) });
    const engram = (database: { args: readonly string[] }, ...args: string[]) =>
      runInProcess([...args, ...database.args], env);
    return { dir, source, target, engram };
  }

  it('writes one file per entry and an index, and gives back the same entries byte for byte', async () => {
    const { dir, source, target, engram } = await setup();
    writeFileSync(dir.file('doc.json'), exportDocument(AWKWARD_ENTRIES));
    expect((await engram(source, 'import', dir.file('doc.json'))).code).toBe(0);

    const out = join(dir.path, 'memory');
    const exported = await engram(source, 'export', '--format', 'markdown', out);
    expect(exported).toMatchObject({ code: 0, stdout: `Exported ${AWKWARD_ENTRIES.length} entries to ${out}\n` });
    expect(readFileSync(join(out, 'people/ada.md'), 'utf8')).toBe(
      '---\ndescription: "Ada \\"the first\\" Lovelace: #1 \\\\ programmer"\n---\nNo final newline',
    );
    expect(readFileSync(join(out, 'topics/empty.md'), 'utf8')).toBe(
      '---\ndescription: "An entry with an empty body"\n---\n',
    );
    expect(readFileSync(join(out, 'README.md'), 'utf8')).toContain(
      '- [areas/engram](areas/engram.md) (34 bytes): The memory server\n',
    );
    expect(statSync(join(out, 'people/ada.md')).mode & 0o777).toBe(0o600);

    const imported = await engram(target, 'import', '--from', 'markdown', out);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain(`Imported from markdown: ${AWKWARD_ENTRIES.length} create, 1 left out.`);
    const entriesOf = async (database: typeof source) =>
      (
        JSON.parse((await engram(database, 'export')).stdout) as {
          entries: { name: string; description: string; body: string }[];
        }
      ).entries.map(({ name, description, body }) => ({ name, description, body }));
    const before = await entriesOf(source);
    expect(before).toHaveLength(AWKWARD_ENTRIES.length);
    expect(await entriesOf(target)).toEqual(before);
    const actors = await target.query<{ actor: string }>('SELECT DISTINCT actor FROM revisions');
    expect(actors.map((row) => row.actor)).toEqual(['import:markdown']);
  });

  it('refreshes an earlier export, removing the files of entries that are gone, and leaves other files', async () => {
    const { dir, source, engram } = await setup();
    writeFileSync(dir.file('doc.json'), exportDocument(AWKWARD_ENTRIES.slice(0, 3)));
    await engram(source, 'import', dir.file('doc.json'));
    const out = join(dir.path, 'memory');
    await engram(source, 'export', '--format', 'markdown', out);
    mkdirSync(join(out, '.git'));
    writeFileSync(join(out, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    await engram(source, 'drop', 'topics/empty');
    const again = await engram(source, 'export', '--format', 'markdown', out);
    expect(again.stdout).toBe(`Exported 2 entries to ${out} (removed 1 file(s) of entries no longer in memory)\n`);
    expect(existsSync(join(out, 'topics'))).toBe(false);
    expect(readdirSync(out).sort()).toEqual(['.engram-export.json', '.git', 'README.md', 'areas', 'people']);
  });

  it('refreshes an export made before the record existed: its files are its own once, then recorded', async () => {
    const { dir, source, engram } = await setup();
    writeFileSync(dir.file('doc.json'), exportDocument(AWKWARD_ENTRIES.slice(0, 3)));
    await engram(source, 'import', dir.file('doc.json'));
    const out = join(dir.path, 'memory');
    await engram(source, 'export', '--format', 'markdown', out);
    // What the version before the record left: the same files, no .engram-export.json.
    rmSync(join(out, '.engram-export.json'));
    writeFileSync(join(out, 'notes.txt'), 'mine\n');
    await engram(source, 'write', 'people/ada', '--new', ' More.');
    await engram(source, 'drop', 'topics/empty');

    const again = await engram(source, 'export', '--format', 'markdown', out);
    expect(again).toMatchObject({
      code: 0,
      stdout: `Exported 2 entries to ${out} (removed 1 file(s) of entries no longer in memory)\n`,
    });
    expect(readFileSync(join(out, 'people/ada.md'), 'utf8')).toContain(' More.');
    expect(readdirSync(out).sort()).toEqual(['.engram-export.json', 'README.md', 'areas', 'notes.txt', 'people']);
    await engram(source, 'write', 'people/ada', '--new', ' Again.');
    expect((await engram(source, 'export', '--format', 'markdown', out)).code).toBe(0);
  });

  it('refuses a folder that holds anything but an earlier export, writing nothing', async () => {
    const { dir, source, engram } = await setup();
    await engram(source, 'write', 'topics/me', '-d', 'Me', '--new', 'Hello.');
    const out = join(dir.path, 'notes');
    mkdirSync(out);
    writeFileSync(join(out, 'mine.txt'), 'keep me');
    const refused = await engram(source, 'export', '--format', 'markdown', out);
    expect(refused).toMatchObject({
      code: 2,
      stderr: `engram: ${out} is not empty and holds no earlier markdown export: name a new or empty folder\n`,
    });
    expect(readdirSync(out)).toEqual(['mine.txt']);
    expect((await engram(source, 'export', '--format', 'markdown')).stderr).toMatch(/writes a folder: name it/);
  });
});

/**
 * What lies in the folder may have been put there by someone else: a link planted where
 * the export writes, reads or deletes is refused, naming it, and nothing is written through
 * it; a file edited since the last export is neither overwritten nor deleted without --force.
 */
describe('markdown export into a folder others may write', () => {
  async function exported() {
    const engram = cli();
    await engram.run('write', 'people/ada', '-d', 'Ada', '--new', 'First programmer.');
    await engram.run('write', 'topics/tea', '-d', 'Tea', '--new', 'Green.');
    const out = engram.dir.file('memory');
    expect((await engram.run('export', '--format', 'markdown', out)).code).toBe(0);
    const victim = engram.dir.file('victim.txt');
    writeFileSync(victim, 'not the export’s\n');
    return { engram, out, victim };
  }

  function expectLinkRefused(result: { code: number; stderr: string }, link: string, victim: string) {
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${link} is a symbolic link: an export never follows one`);
    expect(readFileSync(victim, 'utf8')).toBe('not the export’s\n');
  }

  it.each([
    ['an entry file', 'people/ada.md'],
    ['the README', 'README.md'],
    ['the record', '.engram-export.json'],
  ])('refuses a link planted as %s, writing nothing through it', async (_what, path) => {
    const { engram, out, victim } = await exported();
    const link = join(out, path);
    rmSync(link);
    symlinkSync(victim, link);
    await engram.run('write', 'people/ada', '--new', ' More.');
    expectLinkRefused(await engram.run('export', '--format', 'markdown', out), link, victim);
  });

  it('refuses a group folder replaced by a link, for a file it writes and for one it deletes', async () => {
    const { engram, out, victim } = await exported();
    const elsewhere = engram.dir.file('elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'tea.md'), readFileSync(join(out, 'topics/tea.md')));
    rmSync(join(out, 'topics'), { recursive: true });
    symlinkSync(elsewhere, join(out, 'topics'));
    expectLinkRefused(await engram.run('export', '--format', 'markdown', out), join(out, 'topics'), victim);

    await engram.run('drop', 'topics/tea');
    expectLinkRefused(await engram.run('export', '--format', 'markdown', out), join(out, 'topics'), victim);
    expect(readdirSync(elsewhere)).toEqual(['tea.md']);
  });

  it('refuses to overwrite a file edited since the last export, naming it, and --force overwrites it', async () => {
    const { engram, out } = await exported();
    const ada = join(out, 'people/ada.md');
    writeFileSync(ada, `${readFileSync(ada, 'utf8')}\nMy own note.\n`);
    const edited = readFileSync(ada, 'utf8');

    const refused = await engram.run('export', '--format', 'markdown', out);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`1 file(s) in ${out} differ from what the last export wrote; nothing was written`);
    expect(refused.stderr).toContain('people/ada.md: edited since the last export; this export would overwrite it');
    expect(refused.stderr).toContain('--force');
    expect(readFileSync(ada, 'utf8')).toBe(edited);

    const forced = await engram.run('export', '--format', 'markdown', out, '--force');
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain(
      'Overwrote or deleted 1 file(s) changed since the last export (--force): people/ada.md',
    );
    expect(readFileSync(ada, 'utf8')).toBe('---\ndescription: "Ada"\n---\nFirst programmer.\n');
    expect((await engram.run('export', '--format', 'markdown', out)).code).toBe(0);
  });

  it('refuses to delete the edited file of a dropped entry, and leaves files it never wrote', async () => {
    const { engram, out } = await exported();
    writeFileSync(join(out, 'topics/tea.md'), 'Edited by hand.\n');
    writeFileSync(join(out, 'topics/mine.md'), 'A note of my own.\n');
    await engram.run('drop', 'topics/tea');

    const refused = await engram.run('export', '--format', 'markdown', out);
    expect(refused.stderr).toContain(
      'topics/tea.md: edited since the last export; its entry is no longer in memory, so this export would delete it',
    );
    expect(readFileSync(join(out, 'topics/tea.md'), 'utf8')).toBe('Edited by hand.\n');

    const forced = await engram.run('export', '--format', 'markdown', out, '--force', '--json');
    expect(JSON.parse(forced.stdout)).toMatchObject({ removed: 1, overwritten: ['topics/tea.md'] });
    expect(readdirSync(join(out, 'topics'))).toEqual(['mine.md']);
  });

  it('refuses to overwrite a file it did not write at an entry’s path', async () => {
    const { engram, out } = await exported();
    writeFileSync(join(out, 'topics/coffee.md'), 'Mine, not the export’s.\n');
    await engram.run('write', 'topics/coffee', '-d', 'Coffee', '--new', 'Black.');
    const refused = await engram.run('export', '--format', 'markdown', out);
    expect(refused.stderr).toContain(
      'topics/coffee.md: not written by an earlier export (a file of yours?); this export would overwrite it',
    );
    expect(readFileSync(join(out, 'topics/coffee.md'), 'utf8')).toBe('Mine, not the export’s.\n');
  });

  it('refuses a record naming a path an export never writes, deleting nothing', async () => {
    const { engram, out, victim } = await exported();
    const record = join(out, '.engram-export.json');
    const forged = JSON.parse(readFileSync(record, 'utf8'));
    forged.files['../victim.txt'] = forged.files['README.md'];
    writeFileSync(record, JSON.stringify(forged));
    const refused = await engram.run('export', '--format', 'markdown', out);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${record} is not a record Engram's Markdown export wrote`);
    expect(readFileSync(victim, 'utf8')).toBe('not the export’s\n');
  });

  it('refuses what it cannot write over, naming it: a damaged record, a file for a group, a folder for a file', async () => {
    const { engram, out } = await exported();
    const record = join(out, '.engram-export.json');
    const kept = readFileSync(record, 'utf8');
    writeFileSync(record, '{"format":');
    const damaged = await engram.run('export', '--format', 'markdown', out);
    expect(damaged.code).toBe(2);
    expect(damaged.stderr).toContain(`${record} is not a record Engram's Markdown export wrote (not JSON)`);
    writeFileSync(record, kept);

    rmSync(join(out, 'topics'), { recursive: true });
    writeFileSync(join(out, 'topics'), 'a file where a folder was\n');
    expect((await engram.run('export', '--format', 'markdown', out)).stderr).toContain(
      `${join(out, 'topics')} is a file where the export puts a group's folder`,
    );
    rmSync(join(out, 'topics'));

    rmSync(join(out, 'people/ada.md'));
    mkdirSync(join(out, 'people/ada.md'));
    expect((await engram.run('export', '--format', 'markdown', out)).stderr).toContain(
      `${join(out, 'people/ada.md')} is a folder where the export writes a file`,
    );
    expect(readdirSync(join(out, 'people/ada.md'))).toEqual([]);
  });

  it('refuses a folder where the record goes before writing anything', async () => {
    const { engram, out } = await exported();
    const record = join(out, '.engram-export.json');
    rmSync(record);
    mkdirSync(record);
    const readme = readFileSync(join(out, 'README.md'), 'utf8');
    await engram.run('write', 'topics/coffee', '-d', 'Coffee', '--new', 'Black.');
    const refused = await engram.run('export', '--format', 'markdown', out);
    expect(refused).toMatchObject({
      code: 2,
      stderr: `engram: ${record} is a folder where the export keeps its record of what it wrote: move it away; nothing was written\n`,
    });
    expect(existsSync(join(out, 'topics/coffee.md'))).toBe(false);
    expect(readFileSync(join(out, 'README.md'), 'utf8')).toBe(readme);
  });

  // A group other than the user's own private one to give a folder to: root may give it
  // to any (nogroup); another user, to a group of theirs besides their own, if they have one.
  const otherGroup = process.getuid?.() === 0 ? 65534 : process.getgroups?.().find((gid) => gid !== process.getgid?.());

  it.for([
    ['the folder', '', 0o770, 'its group'],
    ['a group folder', 'topics', 0o707, 'everyone'],
  ] as const)(
    'refuses %s when others may write in it, writing nothing',
    async ([_what, folder, mode, who], { skip }) => {
      // Without a group but their own to give the folder to, there is no such folder to make.
      if (who === 'its group' && otherGroup === undefined) return skip();
      const { engram, out } = await exported();
      const shared = join(out, folder);
      chmodSync(shared, mode);
      if (who === 'its group' && otherGroup !== undefined) chownSync(shared, process.getuid?.() ?? 0, otherGroup);
      await engram.run('write', 'topics/tea', '--new', ' Sencha.');
      const before = readFileSync(join(out, 'topics/tea.md'), 'utf8');
      const refused = await engram.run('export', '--format', 'markdown', out);
      expect(refused).toMatchObject({
        code: 2,
        stderr:
          `engram: ${shared} can be written by ${who}, who could put a link in it while the export writes. ` +
          `Make it yours alone (chmod go-w ${shared}), or name another folder; nothing was written\n`,
      });
      expect(readFileSync(join(out, 'topics/tea.md'), 'utf8')).toBe(before);
      chmodSync(shared, 0o700);
      expect((await engram.run('export', '--format', 'markdown', out)).code).toBe(0);
    },
  );

  it.skipIf(process.getuid?.() !== process.getgid?.())(
    "writes in a folder writable by the user's own private group (a umask of 002 makes every folder so)",
    async () => {
      const { engram, out } = await exported();
      chmodSync(out, 0o775);
      chmodSync(join(out, 'topics'), 0o775);
      await engram.run('write', 'topics/tea', '--new', ' Sencha.');
      expect((await engram.run('export', '--format', 'markdown', out)).code).toBe(0);
      expect(readFileSync(join(out, 'topics/tea.md'), 'utf8')).toContain('Sencha.');
    },
  );

  it.skipIf(process.getuid?.() !== 0)(
    'refuses a group folder that belongs to another user, writing nothing',
    async () => {
      const { engram, out } = await exported();
      chownSync(join(out, 'topics'), 65534, 65534);
      await engram.run('write', 'topics/tea', '--new', ' Sencha.');
      const before = readFileSync(join(out, 'topics/tea.md'), 'utf8');
      const refused = await engram.run('export', '--format', 'markdown', out);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toBe(
        `engram: ${join(out, 'topics')} belongs to another user (uid 65534): they could put a link in it while the ` +
          'export writes. Export into a folder of your own; nothing was written\n',
      );
      expect(readFileSync(join(out, 'topics/tea.md'), 'utf8')).toBe(before);
    },
  );

  it('takes --force with --format markdown only', async () => {
    const engram = cli();
    await engram.run('write', 'topics/tea', '-d', 'Tea', '--new', 'Green.');
    expect(await engram.run('export', '--force')).toMatchObject({
      code: 2,
      stderr: 'engram: --force goes with --format markdown\n',
    });
  });
});
