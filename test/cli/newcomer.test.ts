/**
 * The rough edges a newcomer met, run in-process through main(argv, io): whose memory a
 * command opens (--user, ENGRAM_USER, the config file: one rule, checked before
 * anything is opened), that a command which only reads never creates a database, and
 * that a flag which cannot apply is a usage error (exit 2).
 */

import { existsSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/program.js';
import { childEnv, type EngramRun, runEngram, tempDir } from '../helpers/engram.js';

/** A temporary folder, its config file, and main() with `--config` after the arguments. */
function setup(config: unknown = {}) {
  const dir = tempDir();
  const db = dir.file('memory.db');
  const configFile = dir.config(config);
  async function engram(...args: string[]): Promise<EngramRun> {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const io = { stdout: (text: string) => stdout.push(text), stderr: (text: string) => stderr.push(text) };
    const code = await main([...args, '--config', configFile], io);
    return { code, stdout: stdout.join(''), stderr: stderr.join('') };
  }
  return { dir, db, engram };
}

/** Runs `body` with ENGRAM_USER set to `user`, restored afterwards. */
async function withEngramUser<T>(user: string, body: () => Promise<T>): Promise<T> {
  const saved = process.env.ENGRAM_USER;
  process.env.ENGRAM_USER = user;
  try {
    return await body();
  } finally {
    if (saved === undefined) delete process.env.ENGRAM_USER;
    else process.env.ENGRAM_USER = saved;
  }
}

describe('--user and ENGRAM_USER: one rule for every command', () => {
  it.each(['', '   ', 'bad user', 'tab\tuser', 'x'.repeat(65)])(
    'refuses --user %j as a usage error (exit 2), creating nothing',
    async (user) => {
      const { db, engram } = setup();
      for (const args of [['index'], ['write', 'topics/me', '-d', 'Me', '--new', 'x'], ['token', 'list']]) {
        const run = await engram(...args, '--db', db, '--user', user);
        expect(run).toEqual({
          code: 2,
          stdout: '',
          stderr: `engram: ${JSON.stringify(user)} is not a valid user name (--user or ENGRAM_USER): use 1-64 characters without spaces, for example --user alice.\n`,
        });
      }
      expect(existsSync(db)).toBe(false);
    },
  );

  it('refuses a bad ENGRAM_USER the same way', async () => {
    const { db, engram } = setup();
    const run = await withEngramUser('bad user', () =>
      engram('write', 'topics/me', '-d', 'Me', '--new', 'x', '--db', db),
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('"bad user" is not a valid user name (--user or ENGRAM_USER)');
    expect(existsSync(db)).toBe(false);
  });

  it('lower-cases and trims a user name, like an entry name: Ada and ada are one memory', async () => {
    const { db, engram } = setup();
    expect((await engram('write', 'topics/me', '-d', 'Me', '--new', 'x', '--db', db, '--user', ' Ada ')).code).toBe(0);
    expect((await engram('index', '--db', db, '--user', 'ada')).stdout).toBe('topics/me (2 bytes): Me\n');
    expect((await withEngramUser('ADA', () => engram('index', '--db', db))).stdout).toBe('topics/me (2 bytes): Me\n');
    const token = JSON.parse((await engram('token', 'create', '--user', 'Ada', '--json', '--db', db)).stdout);
    expect(token.user).toBe('ada');
  });

  it('refuses a bad "user" in the config file, naming the field (exit 1)', async () => {
    const { db, engram } = setup({ user: 'bad user' });
    const run = await engram('index', '--db', db);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^invalid config file .*config\.json:\n {2}user: a user name is 1-64 characters without spaces\n$/,
    );
    expect(existsSync(db)).toBe(false);
  });
});

describe('a command that only reads never creates a database', () => {
  const READERS = [
    ['index'],
    ['open', 'topics/me'],
    ['history', 'topics/me'],
    ['show', 'topics/me', '--rev', '1'],
    ['diff', 'topics/me', '--rev', '1'],
    ['search', 'tea'],
    ['trash'],
    ['activity'],
    ['export'],
    ['token', 'list'],
    ['user', 'list'],
  ];

  it.each(READERS)('engram %s on a path with no database: exit 1, says so, creates nothing', async (...args) => {
    const { dir, engram } = setup();
    const typo = dir.file('typo/x.db');
    const run = await engram(...args, '--db', typo);
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr:
        `There is no memory at ${typo}: the file does not exist, and this command only reads, so it created nothing. ` +
        'Check the path (--db, ENGRAM_DB or "db" in the config file); to start a memory there, write its first entry ' +
        'with the same settings, for example: engram write topics/me -d "Who I am" --new "Name: Ada."\n',
    });
    expect(existsSync(dir.file('typo'))).toBe(false);
  });

  it('says so in JSON with --json', async () => {
    const { dir, engram } = setup();
    const run = await engram('index', '--json', '--db', dir.file('x.db'));
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ error: { code: 'STORE_UNAVAILABLE' } });
    expect(existsSync(dir.file('x.db'))).toBe(false);
  });

  it('import --dry-run on a path with no database previews into an empty memory, and creates nothing', async () => {
    const { dir, engram } = setup();
    const typo = dir.file('typo/x.db');
    const document = dir.file('memory.json');
    const entry = { name: 'topics/tea', description: 'Tea', body: 'Green.\n' };
    writeFileSync(document, JSON.stringify({ format: 'engram-export', version: 1, entries: [entry] }));
    const memories = dir.file('memories.txt');
    writeFileSync(memories, 'Likes green tea.\n');
    const note = `SQLite ${typo} does not exist yet: this dry run previews the import into an empty memory and creates nothing.\n`;

    const plain = await engram('import', document, '--dry-run', '--db', typo);
    expect({ code: plain.code, stderr: plain.stderr }).toEqual({ code: 0, stderr: note });
    expect(plain.stdout).toMatch(/^Dry run: nothing was changed\./);
    expect(plain.stdout).toContain('topics/tea');
    const from = await engram('import', '--from', 'chatgpt', memories, '--dry-run', '--db', typo);
    expect({ code: from.code, stderr: from.stderr }).toEqual({ code: 0, stderr: note });
    expect(existsSync(dir.file('typo'))).toBe(false);
  });

  it('a writing command creates it, and then the reading ones read it', async () => {
    const { dir, engram } = setup();
    const db = dir.file('new/memory.db');
    expect((await engram('write', 'topics/me', '-d', 'Me', '--new', 'x', '--db', db)).code).toBe(0);
    expect(await engram('index', '--db', db)).toEqual({ code: 0, stdout: 'topics/me (2 bytes): Me\n', stderr: '' });
  });
});

describe('usage errors exit 2', () => {
  it.each([['stdio'], ['serve', '--port', '0']])(
    '%s with a bad --user: refused before anything is opened',
    async (...command) => {
      const dir = tempDir();
      const db = dir.file('memory.db');
      const run = await runEngram([...command, '--user', 'bad user', '--db', db], childEnv(dir.path));
      expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: '' });
      expect(run.stderr).toContain('"bad user" is not a valid user name (--user or ENGRAM_USER)');
      expect(existsSync(db)).toBe(false);
    },
  );

  it('stdio --json: stdio speaks JSON-RPC already, so the flag is refused, before anything is opened', async () => {
    const dir = tempDir();
    const db = dir.file('memory.db');
    expect(await runEngram(['stdio', '--json', '--db', db], childEnv(dir.path))).toEqual({
      code: 2,
      stdout: '',
      stderr: 'engram: stdio already speaks JSON (JSON-RPC on stdout): drop --json\n',
    });
    expect(existsSync(db)).toBe(false);
  });
});
