/**
 * `engram token create | list | revoke` as a person runs them: the new token alone on
 * the last line of stdout, listings that never show a token or its hash, and refusals
 * (bad user: exit 2; unknown id: exit 1) with a message that says what to do, and no change.
 */

import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { childEnv, queryDatabase, tempDir } from '../helpers/engram.js';
import { runInProcess } from './fixtures.js';

function setup() {
  const dir = tempDir();
  const db = dir.file('m.db');
  const env = childEnv(dir.path);
  const engram = (...args: string[]) => runInProcess([...args, '--db', db], env);
  return { db, engram };
}

function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? '';
}

describe('engram token create', () => {
  it('prints the new token alone on the last line of stdout, and stores only its SHA-256', async () => {
    const { db, engram } = setup();
    const run = await engram('token', 'create', '--user', 'ada', '--label', 'llama.cpp WebUI');
    expect(run.code).toBe(0);
    const token = lastLine(run.stdout);
    expect(token).toMatch(/^engram_[A-Za-z0-9_-]{43}$/);
    expect(run.stdout).toMatch(
      /^Created token [0-9a-f]{12} for user "ada" \(read-write\), label "llama.cpp WebUI"\.\n/,
    );
    const rows = queryDatabase<{ user_id: string; label: string; read_only: number; hash: string }>(
      db,
      'SELECT user_id, label, read_only, hash FROM tokens',
    );
    expect(rows).toEqual([
      { user_id: 'ada', label: 'llama.cpp WebUI', read_only: 0, hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it('makes a read-only token for the local user by default', async () => {
    const { engram } = setup();
    const run = await engram('token', 'create', '--read-only');
    expect(run.stdout).toMatch(/for user "local" \(read-only\), label "token [0-9a-f]{12}"/);
  });

  it('gives scripts JSON with --json', async () => {
    const { engram } = setup();
    const run = await engram('token', 'create', '--user', 'ada', '--json');
    expect(JSON.parse(run.stdout)).toEqual({
      id: expect.any(String),
      user: 'ada',
      label: expect.stringMatching(/^token /),
      readOnly: false,
      created: expect.any(String),
      lastUsed: null,
      token: expect.stringMatching(/^engram_/),
    });
  });

  it('refuses a user name with spaces as a usage error (exit 2), the reason on stderr, no token made', async () => {
    const { db, engram } = setup();
    const run = await engram('token', 'create', '--user', 'ada lovelace');
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toBe(
      'engram: "ada lovelace" is not a valid user name (--user or ENGRAM_USER): use 1-64 characters without spaces, for example --user alice.\n',
    );
    // Refused before anything was opened: not even the database was created.
    expect(existsSync(db)).toBe(false);
  });
});

describe('engram token list', () => {
  it('shows id, user, access, times and label, never a token or hash', async () => {
    const { engram } = setup();
    const a = lastLine((await engram('token', 'create', '--user', 'ada', '--label', 'web ui')).stdout);
    const b = lastLine((await engram('token', 'create', '--user', 'bob', '--read-only')).stdout);
    const text = await engram('token', 'list');
    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+USER\s+ACCESS\s+CREATED\s+LAST USED\s+LABEL$/);
    expect(lines[1]).toMatch(
      /^[0-9a-f]{12} {2}ada {3}read-write {2}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}never {6}web ui$/,
    );
    expect(lines[2]).toMatch(/^[0-9a-f]{12} {2}bob {3}read-only {3}\S+ {2}never {6}token [0-9a-f]{12}$/);
    const json = await engram('token', 'list', '--json');
    const listed = JSON.parse(json.stdout) as Record<string, unknown>[];
    expect(listed.map((t) => [t.user, t.readOnly])).toEqual([
      ['ada', false],
      ['bob', true],
    ]);
    for (const output of [text.stdout, json.stdout]) {
      expect(output).not.toContain(a);
      expect(output).not.toContain(b);
      expect(output).not.toMatch(/[0-9a-f]{64}/);
    }
  });

  it('says how to create one when there are none', async () => {
    const { engram } = setup();
    // token list only reads: the memory must exist first.
    await engram('write', 'topics/me', '-d', 'Me', '--new', 'x');
    expect((await engram('token', 'list')).stdout).toBe(
      'No tokens. Create one with: engram token create --user NAME [--read-only] [--label TEXT]\n',
    );
  });
});

describe('engram token revoke', () => {
  it('removes the token', async () => {
    const { engram } = setup();
    const created = JSON.parse((await engram('token', 'create', '--user', 'ada', '--json')).stdout) as { id: string };
    const run = await engram('token', 'revoke', created.id);
    expect(run).toMatchObject({
      code: 0,
      stdout: `Revoked token ${created.id}: requests that present it are refused from now on.\n`,
    });
    expect((await engram('token', 'list', '--json')).stdout).toBe('[]\n');
  });

  it('refuses an unknown id: exit 1, where to find the ids, nothing revoked', async () => {
    const { engram } = setup();
    await engram('token', 'create', '--user', 'ada');
    const run = await engram('token', 'revoke', 'nope');
    expect(run).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'no token has the id "nope"; engram token list shows the ids.\n',
    });
    expect(JSON.parse((await engram('token', 'list', '--json')).stdout)).toHaveLength(1);
  });
});
