/**
 * `engram search QUERY [--json] [--limit N]`: hits as `name: description` and a line of
 * the body around the words found; plain lines when stdout is not a terminal, the words
 * highlighted when it is; escape sequences stored in memory shown escaped either way;
 * --json as the Memory service answers; the refusals of an empty or hostile query and of
 * a bad --limit.
 */

import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/program.js';
import { tempDir } from '../helpers/engram.js';
import { inProcessCli, ok } from './fixtures.js';

const ON = '\x1b[1;31m';
const OFF = '\x1b[0m';

/** A memory with three entries, written through the CLI. */
async function withEntries() {
  const cli = inProcessCli();
  await ok(cli.run('write', 'people/ada', '-d', 'Ada, who likes tea', '--new', 'She prefers green tea.'));
  await ok(cli.run('write', 'topics/tea', '-d', 'Drinks', '--new', 'Coffee too.'));
  await ok(cli.run('write', 'topics/code', '-d', 'Code', '--new', 'Written in TypeScript.'));
  return cli;
}

describe('engram search', () => {
  it('prints each hit, best first, as plain lines when stdout is not a terminal', async () => {
    const cli = await withEntries();

    expect(await ok(cli.run('search', 'tea'))).toBe(
      'topics/tea: Drinks\npeople/ada: Ada, who likes tea\n  She prefers green tea.\n',
    );
    expect(await ok(cli.run('search', 'green', 'te'))).toBe(
      'people/ada: Ada, who likes tea\n  She prefers green tea.\n',
    );
    expect(await ok(cli.run('search', 'nothing'))).toBe('Nothing found for: nothing\n');
  });

  it('highlights the words found when stdout is a terminal, and only them', async () => {
    const dir = tempDir();
    const [db, config] = [dir.file('memory.db'), dir.config({})];
    const out: string[] = [];
    const io = { stdout: (text: string) => out.push(text), stderr: (text: string) => out.push(text), terminal: true };
    const at = ['--db', db, '--config', config];
    expect(await main(['write', 'people/ada', '-d', 'Likes tea', '--new', 'Green tea.', ...at], io)).toBe(0);
    out.length = 0;

    expect(await main(['search', 'tea', ...at], io)).toBe(0);

    expect(out.join('')).toBe(`people/ada: Likes ${ON}tea${OFF}\n  Green ${ON}tea${OFF}.\n`);
  });

  it('never prints control characters or bidi overrides stored in memory, highlighted or not', async () => {
    const dir = tempDir();
    const [db, config] = [dir.file('memory.db'), dir.config({})];
    const out: string[] = [];
    const io = (terminal: boolean) => ({ stdout: (text: string) => out.push(text), stderr: () => {}, terminal });
    const at = ['--db', db, '--config', config];
    const body = 'tea \x1b]0;owned\x07 \x1b[2J tea\u202e\u009b';
    expect(await main(['write', 'topics/evil', '-d', 'Evil', '--new', body, ...at], io(false))).toBe(0);
    out.length = 0;

    expect(await main(['search', 'tea', ...at], io(false))).toBe(0);
    expect(out.join('')).toBe('topics/evil: Evil\n  tea  ]0;owned   [2J tea\\u202e\n');
    out.length = 0;

    expect(await main(['search', 'tea', ...at], io(true))).toBe(0);
    expect(out.join('')).toBe(`topics/evil: Evil\n  ${ON}tea${OFF}  ]0;owned   [2J ${ON}tea${OFF}\\u202e\n`);
  });

  it('answers --json with the hits as they are, and --limit', async () => {
    const cli = await withEntries();

    const { hits } = JSON.parse(await ok(cli.run('search', 'tea', '--json', '--limit', '1')));

    expect(hits).toEqual([
      {
        name: 'topics/tea',
        description: 'Drinks',
        updated: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        snippets: [{ field: 'name', text: 'topics/tea', matches: [[7, 10]] }],
      },
    ]);
  });

  it('reads query syntax as words; refuses an empty, wordless or oversized query (exit 1) and a bad --limit (exit 2)', async () => {
    const cli = await withEntries();

    const empty = await cli.run('search', '');
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/^the search is empty/);
    const syntax = await cli.run('search', '"*', 'NEAR(');
    expect(syntax.code).toBe(0);
    const symbols = await cli.run('search', '"*()');
    expect(symbols.code).toBe(1);
    expect(symbols.stderr).toMatch(/^the search has no word to look for/);
    const long = await cli.run('search', 'x'.repeat(10_240));
    expect(long.code).toBe(1);
    expect(long.stderr).toMatch(/at most 200 are searched/);
    for (const bad of ['0', 'ten', '-1']) {
      const refused = await cli.run('search', 'tea', '--limit', bad);
      expect(refused.code, bad).toBe(2);
    }
  });
});
