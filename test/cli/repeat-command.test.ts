/**
 * The words of a command line to run again, as a POSIX shell reads them back, and never
 * the password of a database URL.
 */

import { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { databaseUrlToRepeat } from '../../src/cli/backend.js';
import { bearsSecret, repeatCommand } from '../../src/cli/repeat-command.js';
import { shellWord } from '../../src/memory/model/shell-word.js';

describe('shellWord', () => {
  it('leaves a safe word bare and single-quotes any other, a quote inside included', () => {
    expect(shellWord('/tmp/memory.db')).toBe('/tmp/memory.db');
    expect(shellWord('postgres://ada@db:5432/engram')).toBe('postgres://ada@db:5432/engram');
    expect(shellWord('my memory.db')).toBe("'my memory.db'");
    expect(shellWord("it's")).toBe(`'it'\\''s'`);
    expect(shellWord('$HOME;rm')).toBe("'$HOME;rm'");
    expect(shellWord('')).toBe("''");
  });
});

describe('repeatCommand', () => {
  function parsed(...args: string[]): Command {
    const program = new Command('engram').exitOverride();
    const listing = program
      .command('activity')
      .addOption(bearsSecret(new Option('--database-url <url>'), databaseUrlToRepeat))
      .option('--limit <n>')
      .action(() => undefined);
    program.parse(['activity', ...args], { from: 'user' });
    return listing;
  }

  it('repeats a database URL without its password, in the user part or the query, and says it left it out', () => {
    const url = 'postgres://ada:s3cret@db.example:5432/engram?sslmode=require&password=s3cret';
    const repeated = repeatCommand(parsed('--database-url', url, '--limit', '2'), [], ['--before', 'c']);
    expect(repeated.line).toBe(
      "engram activity --database-url 'postgres://ada@db.example:5432/engram?sslmode=require' --limit 2 --before c",
    );
    expect(repeated.line).not.toContain('s3cret');
    expect(repeated.notes).toEqual([
      'the password in --database-url is left out of the next line: run it with PGPASSWORD set ' +
        '(or the password in ~/.pgpass), or put the password back in',
    ]);
  });

  it('repeats a URL without a password as given, and leaves out one it cannot read, saying so', () => {
    expect(repeatCommand(parsed('--database-url', 'postgres://ada@db/engram'), [], [])).toEqual({
      line: 'engram activity --database-url postgres://ada@db/engram',
      notes: [],
    });
    const unreadable = repeatCommand(parsed('--database-url', 'postgres://ada:s3cret@/engram', '--limit', '1'), [], []);
    expect(unreadable.line).toBe('engram activity --limit 1');
    expect(unreadable.notes).toEqual([
      '--database-url is left out of the next line, since its password could not be told apart: ' +
        'set ENGRAM_DATABASE_URL to that URL, then run the line',
    ]);
  });
});
