/**
 * What `engram import --from` reads from disk: every visible regular file under a folder,
 * by its path below it, in name order (hidden files and symbolic links left out); one
 * file by its base name; a folder named by its index file; and the paths it refuses.
 */

import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSource } from '../../src/cli/source-files.js';
import { tempDir } from '../helpers/temp-dir.js';

const text = (files: { path: string; bytes: Uint8Array }[]) =>
  files.map((file) => [file.path, Buffer.from(file.bytes).toString('utf8')]);

describe('readSource', () => {
  it('reads a folder: visible regular files by their path below it, in name order', () => {
    const dir = tempDir().path;
    mkdirSync(join(dir, 'people'));
    mkdirSync(join(dir, '.git'));
    writeFileSync(join(dir, 'people', 'ada.md'), 'Ada');
    writeFileSync(join(dir, 'b.md'), 'B');
    writeFileSync(join(dir, '.DS_Store'), 'x');
    writeFileSync(join(dir, '.git', 'HEAD'), 'x');
    symlinkSync('/etc/hostname', join(dir, 'link.md'));
    expect(text(readSource(dir, true))).toEqual([
      ['b.md', 'B'],
      ['people/ada.md', 'Ada'],
    ]);
  });

  it('reads one file by its base name, and a folder named by its index file', () => {
    const dir = tempDir().path;
    writeFileSync(join(dir, 'MEMORY.md'), 'index');
    writeFileSync(join(dir, 'topic.md'), 'topic');
    expect(text(readSource(join(dir, 'topic.md'), false))).toEqual([['topic.md', 'topic']]);
    expect(text(readSource(join(dir, 'MEMORY.md'), true, 'MEMORY.md'))).toEqual([
      ['MEMORY.md', 'index'],
      ['topic.md', 'topic'],
    ]);
  });

  it('refuses a missing path, the wrong kind of path, and a folder with nothing to read', () => {
    const dir = tempDir().path;
    writeFileSync(join(dir, 'a.jsonl'), '');
    mkdirSync(join(dir, 'empty'));
    writeFileSync(join(dir, 'empty', '.hidden'), 'x');
    expect(() => readSource(join(dir, 'nope'), false)).toThrow(`${join(dir, 'nope')} does not exist`);
    expect(() => readSource(join(dir, 'a.jsonl'), true)).toThrow('is a file; this kind of import reads a folder');
    expect(() => readSource(dir, false)).toThrow('is a folder; this kind of import reads one file');
    expect(() => readSource(join(dir, 'empty'), true)).toThrow('is empty: there is nothing to import');
  });
});
