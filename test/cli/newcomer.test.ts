/**
 * The rough edges a newcomer met, run in-process through main(argv, io): whose memory a
 * command opens (--user, ENGRAM_USER, the config file: one rule, checked before
 * anything is opened), that a command which only reads never creates a database, that
 * none creates one in a folder that does not exist (a typo in --db) but at the default
 * path, and that a flag which cannot apply is a usage error (exit 2).
 */

import { existsSync, statSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/program.js';
import { shellWord } from '../../src/memory/model/shell-word.js';
import { childEnv, type EngramRun, runEngram, tempDir } from '../helpers/engram.js';
import { runInProcess } from './fixtures.js';

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
    const typo = dir.file('x.db');
    const run = await engram(...args, '--db', typo);
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr:
        `There is no memory at ${typo}: the file does not exist, and this command only reads, so it created nothing. ` +
        'Check the path (--db, ENGRAM_DB or "db" in the config file); to start a memory there, write its first entry ' +
        'with the same settings, for example: engram write topics/me -d "Who I am" --new "Name: Ada."\n',
    });
    expect(existsSync(typo)).toBe(false);
  });

  it.each(READERS)('engram %s in a folder that does not exist: says the folder is missing', async (...args) => {
    const { dir, engram } = setup();
    const typo = dir.file('typo/x.db');
    const run = await engram(...args, '--db', typo);
    expect(run).toEqual({ code: 1, stdout: '', stderr: noFolder(typo, dir.file('typo')) });
    expect(existsSync(dir.file('typo'))).toBe(false);
  });

  it.each(READERS)(
    'engram %s before any memory exists at the default path: says to write the first entry',
    async (...args) => {
      const dir = tempDir();
      const env = childEnv(dir.path, { XDG_DATA_HOME: dir.file('data') });
      const run = await runInProcess([...args], env);
      expect(run).toEqual({
        code: 1,
        stdout: '',
        stderr:
          `There is no memory yet at ${dir.file('data/engram/memory.db')}, the default path: this command only reads, ` +
          'so it created nothing. To start your memory, write its first entry, for example: ' +
          'engram write topics/me -d "Who I am" --new "Name: Ada."\n',
      });
      expect(existsSync(dir.file('data'))).toBe(false);
    },
  );

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
    const db = dir.file('memory.db');
    expect((await engram('write', 'topics/me', '-d', 'Me', '--new', 'x', '--db', db)).code).toBe(0);
    expect(await engram('index', '--db', db)).toEqual({ code: 0, stdout: 'topics/me (2 bytes): Me\n', stderr: '' });
  });
});

/** What every command says of a database path in a folder that does not exist. */
function noFolder(path: string, folder: string): string {
  return (
    `There is no memory at ${path}: the folder ${folder} does not exist, so nothing was created ` +
    '(a mistyped path must not start a new, empty memory). Check the path: --db, ENGRAM_DB, "db" in the config ' +
    "file, migrate's --to, or the arguments in your MCP client's config (Claude Desktop's claude_desktop_config.json, say). " +
    `To start a memory there, create the folder first (mkdir -p ${shellWord(folder)}), then run again; ` +
    'or leave --db out to use the default path, whose folders Engram creates.\n'
  );
}

describe('a memory is created only in a folder that exists, or at the default path', () => {
  const WRITERS = [
    ['write', 'topics/me', '-d', 'Me', '--new', 'x'],
    ['drop', 'topics/me'],
    ['undrop', 'topics/me'],
    ['restore', 'topics/me', '--rev', '1'],
    ['purge', 'topics/me'],
    ['wipe', '--yes-i-am-sure'],
    ['token', 'create', '--label', 'laptop'],
    ['token', 'revoke', 'abc'],
    ['user', 'remove', 'ada'],
  ];

  it.each(WRITERS)(
    'engram %s with a mistyped folder in --db: exit 1, names the folder, creates nothing',
    async (...args) => {
      const { dir, engram } = setup();
      const typo = dir.file('Librray/engram/memory.db');
      const run = await engram(...args, '--db', typo);
      expect(run).toEqual({ code: 1, stdout: '', stderr: noFolder(typo, dir.file('Librray/engram')) });
      expect(existsSync(dir.file('Librray'))).toBe(false);
    },
  );

  it('import, and the same through ENGRAM_DB and the config file', async () => {
    const dir = tempDir();
    const typo = dir.file('typo/memory.db');
    const document = dir.file('memory.json');
    writeFileSync(document, JSON.stringify({ format: 'engram-export', version: 1, entries: [] }));
    for (const [env, config] of [
      [{ ENGRAM_DB: typo }, {}],
      [{}, { db: typo }],
    ] as const) {
      const run = await runInProcess(['import', document, '--config', dir.config(config)], childEnv(dir.path, env));
      expect(run).toEqual({ code: 1, stdout: '', stderr: noFolder(typo, dir.file('typo')) });
    }
    expect(existsSync(dir.file('typo'))).toBe(false);
  });

  it('names the folder to make as one shell word, which no shell expands', async () => {
    const { dir, engram } = setup();
    const folder = dir.file('$(touch pwned)`id` "x"');
    const typo = `${folder}/memory.db`;
    const run = await engram('write', 'topics/me', '-d', 'Me', '--new', 'x', '--db', typo);
    expect(run).toEqual({ code: 1, stdout: '', stderr: noFolder(typo, folder) });
    expect(run.stderr).toContain(`(mkdir -p '${folder}')`);
    expect(existsSync(folder)).toBe(false);
  });

  it('migrate --to a mistyped folder: refused, naming it', async () => {
    const { dir, db, engram } = setup();
    await engram('write', 'topics/me', '-d', 'Me', '--new', 'x', '--db', db);
    const typo = dir.file('typo/copy.db');
    const run = await engram('migrate', '--from', db, '--to', typo);
    expect(run).toEqual({ code: 1, stdout: '', stderr: noFolder(typo, dir.file('typo')) });
    expect(existsSync(dir.file('typo'))).toBe(false);
  });

  it.each([['stdio'], ['serve', '--port', '0']])(
    'engram %s with a mistyped folder: exits 1 at once, names the folder, creates nothing',
    async (...command) => {
      const dir = tempDir();
      const typo = dir.file('typo/memory.db');
      const run = await runEngram([...command, '--db', typo], childEnv(dir.path));
      expect(run).toEqual({ code: 1, stdout: '', stderr: noFolder(typo, dir.file('typo')) });
      expect(existsSync(dir.file('typo'))).toBe(false);
    },
  );

  it('the default path gets its folders, 0700', async () => {
    const dir = tempDir();
    const env = childEnv(dir.path, { XDG_DATA_HOME: dir.file('data') });
    expect((await runInProcess(['write', 'topics/me', '-d', 'Me', '--new', 'x'], env)).code).toBe(0);
    expect(statSync(dir.file('data/engram')).mode & 0o777).toBe(0o700);
    expect(existsSync(dir.file('data/engram/memory.db'))).toBe(true);
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

  it('--help offers --json on every command that prints JSON, and not on stdio and chat, which refuse it', async () => {
    const dir = tempDir();
    const env = childEnv(dir.path, { XDG_DATA_HOME: dir.path });
    const top = (await runInProcess(['--help'], env)).stdout;
    const names = [...(top.split(/^Commands:$/m)[1] ?? '').matchAll(/^ {2}(\S+)/gm)].map((match) => match[1] ?? '');
    expect(names).toEqual(expect.arrayContaining(['stdio', 'chat', 'index', 'activity', 'export']));
    const refusing = ['stdio', 'chat'];
    for (const name of names.filter((each) => each !== 'help')) {
      const help = (await runInProcess([name, '--help'], env)).stdout;
      if (/^Commands:$/m.test(help)) continue; // a group (token, user): its commands have their own --help
      expect({ name, offers: help.includes('--json') }).toEqual({ name, offers: !refusing.includes(name) });
    }
    expect(await runInProcess(['chat', '--base-url', 'http://127.0.0.1:9/v1', '--json'], env)).toMatchObject({
      code: 2,
      stderr: 'engram: chat is a conversation for a person, with no JSON output: drop --json\n',
    });
  });

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
