/**
 * `engram export --format markdown DIR` and back with `engram import --from markdown DIR`,
 * through the real CLI on SQLite and on PostgreSQL: the folder's files are exactly the
 * entries (front matter, body byte for byte, README index), and imported into an empty
 * memory they give back the same entries, awkward ones included. A later export into the
 * same folder refreshes it; a folder holding anything else is refused.
 */

import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AWKWARD_ENTRIES } from '../core/bridges/fixtures.js';
import { postgresBackend, SQLITE_BACKEND } from '../helpers/backends.js';
import { childEnv, tempDir } from '../helpers/engram.js';
import { findTestPostgres } from '../helpers/postgres.js';
import { runInProcess } from './fixtures.js';

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
    expect(readdirSync(out).sort()).toEqual(['.git', 'README.md', 'areas', 'people']);
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
