/**
 * An Anthropic memory-tool folder, written by the SDK's own helper: each file an entry, its
 * path the name (a group folder kept), its first heading or line the description; odd
 * names made slugs, collisions reported, binary files refused with their path.
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../../src/memory/model/policy.js';
import { parseAnthropicMemory } from '../../../src/transfer/bridges/anthropic-memory.js';
import type { SourceFile } from '../../../src/transfer/bridges/plan.js';
import { writeAnthropicMemory } from '../../helpers/anthropic-memory.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { BINARY, files } from './fixtures.js';

/** Every file under `root`, as the CLI reads a folder. */
function readFolder(root: string): SourceFile[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) =>
      statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : [join(dir, name)],
    );
  return walk(root)
    .sort()
    .map((path) => ({ path: relative(root, path), bytes: readFileSync(path) }));
}

describe('parseAnthropicMemory on a folder the SDK helper wrote', () => {
  it('makes each file an entry named by its path, described by its first heading or line', async () => {
    const folder = await writeAnthropicMemory(tempDir().path, [
      { command: 'create', path: '/memories/people/ada.md', file_text: '# Ada Lovelace\nWrote the first program.\n' },
      { command: 'create', path: '/memories/user_preferences.txt', file_text: 'Prefers tea.\n' },
      { command: 'create', path: '/memories/projects/Engram Notes.md', file_text: '\nThe memory server.\n' },
      { command: 'str_replace', path: '/memories/user_preferences.txt', old_str: 'tea', new_str: 'Earl Grey tea' },
      { command: 'insert', path: '/memories/people/ada.md', insert_line: 2, insert_text: 'Born 1815.\n' },
    ]);
    const plan = parseAnthropicMemory(readFolder(folder), DEFAULT_POLICY);
    expect(plan.entries).toEqual([
      {
        name: 'people/ada',
        description: 'Ada Lovelace',
        body: '# Ada Lovelace\nWrote the first program.\nBorn 1815.\n',
      },
      { name: 'topics/projects-engram-notes', description: 'The memory server.', body: '\nThe memory server.\n' },
      { name: 'topics/user_preferences', description: 'Prefers Earl Grey tea.', body: 'Prefers Earl Grey tea.\n' },
    ]);
    expect(plan.items[1]?.notes).toEqual(['"projects-Engram Notes" is not a valid slug: made projects-engram-notes']);
  });

  it('reads the same when named by the folder above memories/', async () => {
    const base = tempDir().path;
    await writeAnthropicMemory(base, [{ command: 'create', path: '/memories/a.md', file_text: 'A\n' }]);
    expect(parseAnthropicMemory(readFolder(base), DEFAULT_POLICY).entries).toEqual([
      { name: 'topics/a', description: 'A', body: 'A\n' },
    ]);
  });
});

describe('parseAnthropicMemory', () => {
  it('reports a collision of two files with one slug, and describes an empty file by its name', () => {
    const plan = parseAnthropicMemory(
      files({ 'notes.md': 'one\n', 'notes.txt': 'two\n', 'blank.md': '' }),
      DEFAULT_POLICY,
    );
    expect(plan.entries.map((entry) => entry.name)).toEqual(['topics/notes', 'topics/notes-2', 'topics/blank']);
    expect(plan.items[1]?.notes).toEqual(['topics/notes is taken by notes.md: named topics/notes-2']);
    expect(plan.items[2]).toMatchObject({ notes: ['the file is empty: described by its name'] });
    expect(plan.entries[2]?.description).toBe('blank');
  });

  it('refuses a binary file, naming it', () => {
    expect(() => parseAnthropicMemory(files({ 'a.md': 'x', 'img/photo.png': BINARY }), DEFAULT_POLICY)).toThrow(
      'img/photo.png is not UTF-8 text (a binary file?); nothing was imported.',
    );
  });

  it('reports a file over the entry cap', () => {
    const plan = parseAnthropicMemory(files({ 'big.md': `${'x'.repeat(100)}\n`.repeat(200) }), DEFAULT_POLICY);
    expect(plan.items[0]?.problem).toBe('too-large');
  });
});
