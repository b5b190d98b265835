/**
 * The Markdown folder both ways: the export's files (front matter, body byte for byte,
 * README index, name order) read back into the very same entries through the import,
 * awkward descriptions and bodies included; and every bad folder refused or reported.
 */

import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../../src/memory/model/policy.js';
import { readFrontMatter, withFrontMatter } from '../../../src/transfer/bridges/front-matter.js';
import { markdownExport, parseMarkdown } from '../../../src/transfer/bridges/markdown.js';
import { planDocument } from '../../../src/transfer/bridges/plan.js';
import { createTransfer } from '../../../src/transfer/transfer.js';
import { CALLER, newMemory, snapshot } from '../../memory/fixtures.js';
import { AWKWARD_ENTRIES, BINARY, files } from './fixtures.js';

describe('markdownExport', () => {
  it('writes group/slug.md with the description as a JSON string, the body as it is, and an index last', () => {
    const out = markdownExport([
      { name: 'topics/b', description: 'B', body: 'two\n' },
      { name: 'people/a', description: 'say "hi"', body: 'one' },
    ]);
    expect(out).toEqual([
      { path: 'people/a.md', text: '---\ndescription: "say \\"hi\\""\n---\none' },
      { path: 'topics/b.md', text: '---\ndescription: "B"\n---\ntwo\n' },
      {
        path: 'README.md',
        text:
          '# Engram memory export\n\n2 entries, one file each at group/slug.md: a front matter holding the description, then the body.\n' +
          'Bring them back with `engram import --from markdown DIR`.\n\n' +
          '- [people/a](people/a.md) (3 bytes): say "hi"\n- [topics/b](topics/b.md) (4 bytes): B\n',
      },
    ]);
  });
});

describe('front matter', () => {
  it.each(AWKWARD_ENTRIES)('round-trips $name', ({ description, body }) => {
    expect(readFrontMatter(withFrontMatter(description, body))).toEqual({ description, body });
  });

  it('reads plain and single-quoted descriptions people write by hand', () => {
    expect(readFrontMatter("---\ndescription: it''s plain # comment\n---\nx")).toEqual({
      description: "it''s plain",
      body: 'x',
    });
    expect(readFrontMatter("---\ntitle: x\ndescription: 'it''s quoted'\n---\n")).toEqual({
      description: "it's quoted",
      body: '',
    });
  });
});

describe('parseMarkdown', () => {
  it('gives back the exported entries byte for byte through the import', async () => {
    const exported = markdownExport(AWKWARD_ENTRIES);
    const plan = parseMarkdown(
      files(Object.fromEntries(exported.map((file) => [file.path, file.text]))),
      DEFAULT_POLICY,
    );
    expect(plan.items.at(-1)).toEqual({
      source: 'README.md',
      names: [],
      notes: ['the index of an export: not an entry'],
      problem: 'not-an-entry',
    });
    const memory = newMemory();
    const report = await createTransfer(memory).import({ ...CALLER, label: 'import:markdown' }, planDocument(plan), {
      mode: 'merge',
    });
    expect(report.created).toEqual(AWKWARD_ENTRIES.map((entry) => entry.name));
    const { entries } = await snapshot(memory);
    expect(entries.map(({ name, description, body }) => ({ name, description, body }))).toEqual(
      AWKWARD_ENTRIES.map((entry) => ({ ...entry, description: entry.description.replace(' \u2028 ', ' ') })),
    );
  });

  it('makes names valid, reports a collision, takes a description from the first line when there is none', () => {
    const plan = parseMarkdown(
      files({ 'People/John Smith.md': '# John, a colleague\nLikes tea.\n', 'people/john-smith.md': 'other\n' }),
      DEFAULT_POLICY,
    );
    expect(plan.entries).toEqual([
      { name: 'people/john-smith', description: 'John, a colleague', body: '# John, a colleague\nLikes tea.\n' },
      { name: 'people/john-smith-2', description: 'other', body: 'other\n' },
    ]);
    expect(plan.items[0]?.notes).toEqual([
      'no description in its front matter: took its first heading or line',
      '"John Smith" is not a valid slug: made john-smith',
    ]);
    expect(plan.items[1]?.notes).toContain(
      'people/john-smith is taken by People/John Smith.md: named people/john-smith-2',
    );
  });

  it('reports files that are not group/slug.md as left out', () => {
    const plan = parseMarkdown(files({ 'notes.txt': 'x', 'a/b/c.md': 'x', 'topics/a.md': 'x' }), DEFAULT_POLICY);
    expect(plan.items.filter((item) => item.problem === 'not-an-entry').map((item) => item.source)).toEqual([
      'notes.txt',
      'a/b/c.md',
    ]);
  });

  it('refuses a binary file, an unclosed front matter and an unreadable description, naming the file', () => {
    expect(() => parseMarkdown(files({ 'topics/a.md': BINARY }), DEFAULT_POLICY)).toThrow(
      'topics/a.md is not UTF-8 text (a binary file?); nothing was imported.',
    );
    expect(() => parseMarkdown(files({ 'topics/a.md': '---\ndescription: x\nbody' }), DEFAULT_POLICY)).toThrow(
      'topics/a.md: its front matter (the lines after the first ---) is never closed by a --- line; nothing was imported.',
    );
    expect(() => parseMarkdown(files({ 'topics/a.md': '---\ndescription: "open\n---\n' }), DEFAULT_POLICY)).toThrow(
      /topics\/a.md: its description \(description: "open\) is not a readable YAML string/,
    );
  });

  it('refuses a folder with no entry file', () => {
    expect(() => parseMarkdown(files({ 'README.md': '# x' }), DEFAULT_POLICY)).toThrow(
      'no group/slug.md file found (only README.md); nothing was imported.',
    );
  });
});
