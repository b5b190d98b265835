/**
 * `engram user add | set-password | list | remove` as a person runs them. Passwords come
 * on stdin: a few commands run as a real process, stdin a pipe; the others run main() in
 * this process (a spawn costs some 0.3 s of CPU), the same text given as what stdin holds
 * and the password hashed at the tests' scrypt cost.
 * One trailing newline is stripped, exactly one; short passwords, duplicates, bad and
 * unknown names are refused (exit 1) and change nothing; remove says what it ended,
 * revoked and erased, and --purge needs --yes-i-am-sure (exit 2 without).
 */

import { describe, expect, it } from 'vitest';
import { verifyPassword } from '../../src/access/accounts/passwords.js';
import { childEnv, queryDatabase, runEngram, tempDir } from '../helpers/engram.js';
import { TEST_PASSWORD_COST } from '../helpers/password-cost.js';
import { runInProcess } from './fixtures.js';

const PASSWORD = 'correct horse battery staple';

function setup() {
  const dir = tempDir();
  const db = dir.file('m.db');
  const env = childEnv(dir.path);
  /** In this process: for the commands that read no password. */
  const engram = (...args: string[]) => runInProcess([...args, '--db', db], env);
  /** As a child process, `input` on its stdin. */
  const piped = (input: string, ...args: string[]) => runEngram([...args, '--db', db], env, input);
  /**
   * In this process, `input` read as a piped stdin is, passwords hashed at the tests'
   * cost: what these check is which password is kept, not scrypt's cost, which the
   * spawned runs keep at production's (and test/access/accounts checks).
   */
  const fed = (input: string, ...args: string[]) =>
    runInProcess([...args, '--db', db], env, input, { passwordCost: TEST_PASSWORD_COST });
  const accounts = () =>
    queryDatabase<{ user_id: string; password_hash: string | null }>(
      db,
      'SELECT user_id, password_hash FROM accounts ORDER BY user_id',
    );
  const hashOf = (user: string) => accounts().find((row) => row.user_id === user)?.password_hash ?? undefined;
  return { db, engram, piped, fed, accounts, hashOf };
}

type Setup = ReturnType<typeof setup>;

async function expectPassword(s: Setup, user: string, password: string): Promise<void> {
  const hash = s.hashOf(user);
  expect(hash, `${user} has a password`).toBeDefined();
  expect(await verifyPassword(password, hash!)).toBe(true);
}

describe('engram user add', () => {
  it('adds the user under the normalised name with the password from stdin, one trailing newline stripped', async () => {
    const s = setup();
    expect(await s.piped(`${PASSWORD}\n`, 'user', 'add', 'Alice')).toEqual({
      code: 0,
      stdout: 'Added user alice with a password: they can sign in to the consent page.\n',
      stderr: '',
    });
    await expectPassword(s, 'alice', PASSWORD);
    expect(await verifyPassword(`${PASSWORD}\n`, s.hashOf('alice')!)).toBe(false);
    expect(JSON.stringify(s.accounts())).not.toContain(PASSWORD);
  });

  it('strips \\r\\n too, and with --password-stdin', async () => {
    const s = setup();
    expect((await s.piped(`${PASSWORD}\r\n`, 'user', 'add', 'alice', '--password-stdin')).code).toBe(0);
    await expectPassword(s, 'alice', PASSWORD);
    expect((await s.piped(PASSWORD, 'user', 'add', 'bob', '--password-stdin')).code).toBe(0);
    await expectPassword(s, 'bob', PASSWORD);
  });

  it('strips exactly one newline: a second one is part of the password, and refused as a line break', async () => {
    const s = setup();
    expect(await s.fed(`${PASSWORD}\n\n`, 'user', 'add', 'alice')).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'the password must be one line without control characters: the password field of a sign-in page cannot send them.\n',
    });
    expect(s.accounts()).toEqual([]);
  });

  it('adds the user without a password when stdin is empty, and says how to set one', async () => {
    const s = setup();
    expect(await s.fed('', 'user', 'add', 'bob', '--json')).toEqual({
      code: 0,
      stdout: `${JSON.stringify({ user: 'bob', hasPassword: false }, null, 2)}\n`,
      stderr: '',
    });
    expect(s.accounts()).toEqual([{ user_id: 'bob', password_hash: null }]);
    const { stdout } = await s.fed('', 'user', 'add', 'carol');
    expect(stdout).toBe(
      'Added user carol without a password: nobody can sign in as carol until engram user set-password carol.\n',
    );
    const odd = "o'neil$(id)";
    expect((await s.fed('', 'user', 'add', odd)).stdout).toBe(
      `Added user ${odd} without a password: nobody can sign in as ${odd} until engram user set-password 'o'\\''neil$(id)'.\n`,
    );
    expect((await s.fed('', 'user', 'remove', odd)).stdout).toContain(
      `to erase it for good: engram user remove 'o'\\''neil$(id)' --purge --yes-i-am-sure`,
    );
  });

  it('refuses an empty password with --password-stdin, and a short one, saying how long it must be', async () => {
    const s = setup();
    const short = await s.fed('', 'user', 'add', 'bob', '--password-stdin');
    expect(short).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'the password must be at least 10 characters long; this one has 0. A few words strung together make a long password that is easy to remember.\n',
    });
    const nine = await s.fed('123456789\n', 'user', 'add', 'bob');
    expect(nine.code).toBe(1);
    expect(nine.stderr).toMatch(/^the password must be at least 10 characters long; this one has 9\./);
    expect(nine.stderr).not.toContain('123456789');
    expect(s.accounts()).toEqual([]);
  });

  it('refuses a user who exists, saying how to change the password, and keeps the old one', async () => {
    const s = setup();
    await s.fed(`${PASSWORD}\n`, 'user', 'add', 'alice');
    expect(await s.fed('another long password\n', 'user', 'add', 'ALICE')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'user alice already exists; change the password with engram user set-password alice\n',
    });
    await expectPassword(s, 'alice', PASSWORD);
  });

  it('refuses a bad name before reading any password', async () => {
    const s = setup();
    expect(await s.fed(`${PASSWORD}\n`, 'user', 'add', 'alice smith')).toEqual({
      code: 1,
      stdout: '',
      stderr: '"alice smith" is not a valid user name: use 1-64 characters without spaces, for example alice.\n',
    });
  });

  it('explains in --help where the password comes from, and what an empty stdin does', async () => {
    const { stdout } = await setup().engram('user', 'add', '--help');
    expect(stdout).toContain('--password-stdin');
    expect(stdout).toContain('asked for twice, without echo');
    expect(stdout).toContain('without one trailing newline');
    expect(stdout).toContain('engram user add alice < /dev/null');
  });
});

describe('engram user set-password', () => {
  it('replaces the password of a user', async () => {
    const s = setup();
    await s.fed(`${PASSWORD}\n`, 'user', 'add', 'alice');
    expect(await s.piped('another long password\r\n', 'user', 'set-password', 'Alice')).toEqual({
      code: 0,
      stdout: 'Set the password of alice; browsers signed in as alice were signed out.\n',
      stderr: '',
    });
    await expectPassword(s, 'alice', 'another long password');
  });

  it('gives an account to a user who has memory but no account yet', async () => {
    const s = setup();
    expect((await s.engram('write', 'topics/me', '-d', 'Me', '--new', 'Ada.', '--user', 'ada')).code).toBe(0);
    expect((await s.fed(`${PASSWORD}\n`, 'user', 'set-password', 'ada', '--password-stdin')).code).toBe(0);
    await expectPassword(s, 'ada', PASSWORD);
  });

  it('refuses an unknown user, saying where users are listed, and adds nothing', async () => {
    const s = setup();
    await s.fed(`${PASSWORD}\n`, 'user', 'add', 'alice');
    expect(await s.fed(`${PASSWORD}\n`, 'user', 'set-password', 'nobody')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'there is no user nobody: engram user list shows every user; engram user add nobody adds one.\n',
    });
    expect(s.accounts().map((row) => row.user_id)).toEqual(['alice']);
  });

  it('refuses a short password, keeping the old one', async () => {
    const s = setup();
    await s.fed(`${PASSWORD}\n`, 'user', 'add', 'alice');
    const refused = await s.fed('too short\n', 'user', 'set-password', 'alice');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^the password must be at least 10 characters long; this one has 9\./);
    await expectPassword(s, 'alice', PASSWORD);
  });
});

describe('engram user list', () => {
  it('shows every user: password, entries, bytes, apps and tokens, as a table or as JSON', async () => {
    const s = setup();
    await s.fed(`${PASSWORD}\n`, 'user', 'add', 'alice');
    await s.fed('', 'user', 'add', 'bob');
    await s.engram('write', 'topics/me', '-d', 'Me', '--new', 'Ada.', '--user', 'ada');
    await s.engram('token', 'create', '--user', 'carol');
    await s.engram('token', 'create', '--user', 'alice');

    expect(await s.engram('user', 'list')).toEqual({
      code: 0,
      stdout: [
        'USER   PASSWORD  ENTRIES  BYTES  APPS  TOKENS',
        'ada    no              1     16     0       0',
        'alice  yes             0      0     0       1',
        'bob    no              0      0     0       0',
        'carol  no              0      0     0       1',
        '',
      ].join('\n'),
      stderr: '',
    });
    const json = await s.engram('user', 'list', '--json');
    expect(JSON.parse(json.stdout)).toEqual([
      { user: 'ada', hasPassword: false, entries: 1, bytes: 16, apps: 0, tokens: 0 },
      { user: 'alice', hasPassword: true, entries: 0, bytes: 0, apps: 0, tokens: 1 },
      { user: 'bob', hasPassword: false, entries: 0, bytes: 0, apps: 0, tokens: 0 },
      { user: 'carol', hasPassword: false, entries: 0, bytes: 0, apps: 0, tokens: 1 },
    ]);
  });

  it('says how to add the first user', async () => {
    const s = setup();
    await s.fed('', 'user', 'add', 'bob');
    await s.engram('user', 'remove', 'bob');
    expect((await s.engram('user', 'list')).stdout).toBe('No users yet. Add one with: engram user add NAME\n');
  });
});

describe('engram user remove', () => {
  async function aliceWithMemory(s: Setup) {
    await s.fed(`${PASSWORD}\n`, 'user', 'add', 'alice');
    await s.engram('write', 'topics/a', '-d', 'A', '--new', 'a secret line', '--user', 'alice');
    await s.engram('write', 'topics/b', '-d', 'B', '--new', 'b', '--user', 'alice');
    await s.engram('drop', 'topics/b', '--user', 'alice');
    await s.engram('token', 'create', '--user', 'alice');
    await s.engram('token', 'create', '--user', 'alice', '--read-only');
    await s.engram('token', 'create', '--user', 'bob');
  }

  const rows = (s: Setup, table: string) =>
    queryDatabase<{ user_id: string }>(s.db, `SELECT user_id FROM ${table} ORDER BY user_id`).map((row) => row.user_id);

  it('revokes the tokens and removes the account, keeps the memory, and says so', async () => {
    const s = setup();
    await aliceWithMemory(s);
    expect(await s.engram('user', 'remove', 'Alice')).toEqual({
      code: 0,
      stdout: [
        'Removed user alice: 0 browser sessions ended, 2 tokens revoked, 0 connected apps revoked.',
        'Their memory stays; to erase it for good: engram user remove alice --purge --yes-i-am-sure',
        '',
      ].join('\n'),
      stderr: '',
    });
    expect(s.accounts()).toEqual([]);
    expect(rows(s, 'tokens')).toEqual(['bob']);
    expect(rows(s, 'entries')).toEqual(['alice', 'alice']);
  });

  it('with --purge --yes-i-am-sure erases the memory for good: entries, history and trash', async () => {
    const s = setup();
    await aliceWithMemory(s);
    const removed = await s.engram('user', 'remove', 'alice', '--purge', '--yes-i-am-sure', '--json');
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.stdout)).toEqual({
      user: 'alice',
      sessions: 0,
      tokens: 2,
      apps: 0,
      entries: 2,
      purged: true,
    });
    expect(rows(s, 'entries')).toEqual([]);
    expect(rows(s, 'revisions')).toEqual([]);
    expect(rows(s, 'tokens')).toEqual(['bob']);
    expect((await s.engram('user', 'list', '--json')).stdout).not.toContain('alice');
    const text = (await s.engram('user', 'remove', 'bob', '--purge', '--yes-i-am-sure')).stdout;
    expect(text).toBe(
      [
        'Removed user bob: 0 browser sessions ended, 1 token revoked, 0 connected apps revoked.',
        '0 entries erased for good, with their history and trash.',
        '',
      ].join('\n'),
    );
  });

  it('refuses --purge without --yes-i-am-sure as a usage error, changing nothing', async () => {
    const s = setup();
    await aliceWithMemory(s);
    const refused = await s.engram('user', 'remove', 'alice', '--purge');
    expect(refused).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'engram: --purge erases the memory of alice for good: pass --yes-i-am-sure too to confirm, or leave --purge out to keep it\n',
    });
    expect(s.accounts().map((row) => row.user_id)).toEqual(['alice']);
    expect(rows(s, 'tokens')).toEqual(['alice', 'alice', 'bob']);
  });

  it('refuses an unknown user, changing nothing', async () => {
    const s = setup();
    await aliceWithMemory(s);
    expect(await s.engram('user', 'remove', 'nobody', '--purge', '--yes-i-am-sure')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'there is no user nobody: engram user list shows every user; engram user add nobody adds one.\n',
    });
    expect(rows(s, 'tokens')).toEqual(['alice', 'alice', 'bob']);
    expect(rows(s, 'entries')).toEqual(['alice', 'alice']);
  });
});
