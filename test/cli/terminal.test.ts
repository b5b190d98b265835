/**
 * A memory written by a model must not drive the user's terminal: escape sequences, other
 * control characters and bidi overrides in descriptions, bodies, actors and token labels
 * reach people escaped and visible, while --json, export and a body piped in on stdin keep
 * the exact strings.
 */

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { forTerminal, jsonForTerminal } from '../../src/cli/terminal.js';
import type { EngramRun } from '../helpers/engram.js';
import { cli, inProcessCli, ok } from './fixtures.js';

/** Sets the window title, clears the screen, starts a C1 CSI, reverses the text after it. */
const HOSTILE = '\x1b]0;pwned\x07\x1b[2J\x9b31m\u202etxt.exe';
const VISIBLE = String.raw`\x1b]0;pwned\x07\x1b[2J\x9b31m\u202etxt.exe`;
const BODY = `Line one ${HOSTILE}\n\tindented line two\n`;

/** The characters in `text` a terminal would act on (tab and newline aside). */
function rawControls(text: string): string[] {
  return [...text].filter((char) => /[\p{Cc}\u202A-\u202E\u2066-\u2069]/u.test(char) && char !== '\n' && char !== '\t');
}

/**
 * topics/hostile (two revisions), topics/dropped in the trash and a token. The hostile
 * body is written as any client can; descriptions, actors and labels are put straight
 * into the database, as one written before they were cleaned would hold them.
 */
async function hostileMemory() {
  const engram = inProcessCli();
  await ok(engram.run('write', 'topics/hostile', '-d', 'Plain', '--new', BODY));
  await ok(engram.run('write', 'topics/hostile', '--new', 'more'));
  await ok(engram.run('write', 'topics/dropped', '-d', 'Plain', '--new', 'x'));
  await ok(engram.run('drop', 'topics/dropped'));
  await ok(engram.run('token', 'create', '--label', 'Plain'));
  const db = new Database(engram.db);
  try {
    db.prepare('UPDATE entries SET description = ?, dropped_by = iif(dropped_at IS NULL, NULL, ?)').run(
      HOSTILE,
      HOSTILE,
    );
    db.prepare('UPDATE revisions SET description = ?, actor = ?').run(HOSTILE, HOSTILE);
    db.prepare('UPDATE tokens SET label = ?').run(HOSTILE);
  } finally {
    db.close();
  }
  return engram;
}

async function jsonOf<T>(result: Promise<EngramRun>): Promise<T> {
  const stdout = await ok(result);
  expect(rawControls(stdout)).toEqual([]);
  return JSON.parse(stdout) as T;
}

describe('forTerminal', () => {
  it('shows control characters and bidi overrides as escapes, keeping tab, newline and printable text', () => {
    expect(forTerminal('a\x00b\x1bc\x07d\re\x7ff\x85g\x9bh\u202ai\u2069j')).toBe(
      String.raw`a\x00b\x1bc\x07d\x0de\x7ff\x85g\x9bh\u202ai\u2069j`,
    );
    const printable = 'Ünïcödé 🙂 日本語 — a\\x1b \\u202e\n\tnext line';
    expect(forTerminal(printable)).toBe(printable);
  });

  it('jsonForTerminal parses back to the exact strings and holds no raw control or bidi character', () => {
    const every = Array.from({ length: 0x2100 }, (_, code) => String.fromCharCode(code)).join('');
    const data = { every, nested: [HOSTILE] };
    const text = jsonForTerminal(data, 2);
    expect(rawControls(text)).toEqual([]);
    expect(JSON.parse(text)).toEqual(data);
  });
});

describe('human output of stored escapes', () => {
  it.each([
    'index',
    'open topics/hostile',
    'history topics/hostile',
    'show topics/hostile --rev 1',
    'diff topics/hostile --rev 1',
    'trash',
    'token list',
    'drop topics/hostile',
  ])('engram %s shows them escaped and visible', async (command) => {
    const engram = await hostileMemory();
    const stdout = await ok(engram.run(...command.split(' ')));
    expect(rawControls(stdout)).toEqual([]);
    expect(stdout).toContain(VISIBLE);
  });

  it('keeps the lines and tabs of a body', async () => {
    const engram = await hostileMemory();
    expect(await ok(engram.run('open', 'topics/hostile'))).toContain(
      `\nLine one ${VISIBLE}\n\tindented line two\nmore\n`,
    );
  });

  it('escapes user data quoted in errors on stderr, from Engram and from the argument parser', async () => {
    const engram = await hostileMemory();
    const refused = await engram.run('open', 'topics/\x9b\u202eevil');
    expect(refused.code).toBe(1);
    expect(rawControls(refused.stderr)).toEqual([]);
    expect(refused.stderr).toContain(String.raw`topics/\x9b\u202eevil`);

    const usage = await engram.run('index', '--\x1b[2J');
    expect(usage.code).toBe(2);
    expect(rawControls(usage.stderr)).toEqual([]);
    expect(usage.stderr).toContain(String.raw`--\x1b[2J`);
  });
});

describe('exact output of stored escapes', () => {
  it('--json gives back the exact strings', async () => {
    const engram = await hostileMemory();
    expect(await jsonOf(engram.run('index', '--json'))).toEqual([
      { name: 'topics/hostile', size: Buffer.byteLength(`${BODY}more\n`), description: HOSTILE },
    ]);
    expect(await jsonOf(engram.run('open', 'topics/hostile', '--json'))).toMatchObject({
      found: [{ description: HOSTILE, body: `${BODY}more\n` }],
    });
    expect(await jsonOf(engram.run('history', 'topics/hostile', '--json'))).toMatchObject([
      { revision: 1, actor: HOSTILE, description: HOSTILE, body: BODY },
      { revision: 2, actor: HOSTILE, description: HOSTILE },
    ]);
    expect(await jsonOf(engram.run('trash', '--json'))).toMatchObject([{ description: HOSTILE, droppedBy: HOSTILE }]);
    expect(await jsonOf(engram.run('token', 'list', '--json'))).toMatchObject([{ label: HOSTILE }]);
  });

  it('a refusal under --json quotes the exact name in its JSON', async () => {
    const engram = await hostileMemory();
    const { stdout } = await engram.run('open', 'topics/\u202eevil', '--json');
    expect(rawControls(stdout)).toEqual([]);
    expect(JSON.parse(stdout).error.message).toContain('"topics/\u202eevil"');
  });

  it('a body piped in on stdin is stored as it came, escapes included', async () => {
    const engram = cli();
    await ok(engram.pipe(BODY, 'write', 'topics/piped', '-d', 'Piped', '-'));
    expect(await jsonOf(engram.run('open', 'topics/piped', '--json'))).toMatchObject({ found: [{ body: BODY }] });
  });

  it('engram export writes the document byte for byte', async () => {
    const engram = await hostileMemory();
    const stdout = await ok(engram.run('export'));
    const document = JSON.parse(stdout);
    expect(document.entries[0]).toMatchObject({ description: HOSTILE, body: `${BODY}more\n` });
    expect(stdout).toBe(`${JSON.stringify(document, null, 2)}\n`);
  });
});
