/**
 * `engram token create | list | revoke` as a person runs them: the new token alone on
 * the last line of stdout, listings that never show a token or its hash (connected apps
 * beside the tokens), revoking an app ends every token it holds, and refusals (bad user:
 * exit 2; unknown id: exit 1) with a message that says what to do, and no change.
 */

import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hashSecret, newSecret } from '../../src/access/oauth/secrets.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { ensureAccount } from '../helpers/account-holder.js';
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

  it('makes a review-mode token, listed as such; never one both read-only and in review', async () => {
    const { db, engram } = setup();
    const run = await engram('token', 'create', '--review', '--label', 'Claude');
    expect(run.stdout).toMatch(/for user "local" \(review\), label "Claude"/);
    expect((await engram('token', 'list')).stdout).toMatch(/ token +local +review +.* Claude\n$/);
    const both = await engram('token', 'create', '--review', '--read-only');
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('a token is read-only or has its changes reviewed, not both');
    expect(queryDatabase(db, 'SELECT review FROM tokens')).toEqual([{ review: 1 }]);
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
      kind: 'token',
      id: expect.any(String),
      user: 'ada',
      label: expect.stringMatching(/^token /),
      readOnly: false,
      review: false,
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
    expect(lines[0]).toMatch(/^ID\s+KIND\s+USER\s+ACCESS\s+CREATED\s+LAST USED\s+LABEL$/);
    expect(lines[1]).toMatch(
      /^[0-9a-f]{12} {2}token {2}ada {3}read-write {2}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}never {6}web ui$/,
    );
    expect(lines[2]).toMatch(/^[0-9a-f]{12} {2}token {2}bob {3}read-only {3}\S+ {2}never {6}token [0-9a-f]{12}$/);
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
      'No tokens or connected apps. Create a token with: engram token create --user NAME [--read-only | --review] [--label TEXT]\n',
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
      stderr: 'no token or connected app has the id "nope"; engram token list shows the ids.\n',
    });
    expect(JSON.parse((await engram('token', 'list', '--json')).stdout)).toHaveLength(1);
  });
});

describe('connected apps', () => {
  /** What the consent step and the token endpoint leave in the database: a grant, its code and tokens. */
  async function connectApp(db: string, grant: { id: string; user: string; clientName: string; readOnly: boolean }) {
    const store = openSqliteStore({ path: db });
    try {
      const at = Date.parse('2026-01-02T03:04:05Z');
      const secret = (kind: 'code' | 'access' | 'refresh') => ({
        hash: hashSecret(newSecret(kind)),
        grantId: grant.id,
        kind,
        created: at,
        expires: at + 3_600_000,
        used: undefined,
        data: '',
      });
      await ensureAccount(store.accounts, grant.user, at);
      await store.oauth.saveGrant(
        {
          ...grant,
          clientId: 'client-1',
          resource: 'http://127.0.0.1:8787/mcp',
          created: at,
          lastUsed: undefined,
          review: false,
        },
        secret('code'),
      );
      await store.oauth.saveSecrets(grant.id, [secret('access'), secret('refresh')]);
    } finally {
      await store.close();
    }
  }

  it('are listed beside the tokens, with the app name, user and access, never a secret', async () => {
    const { db, engram } = setup();
    await engram('token', 'create', '--user', 'ada', '--label', 'web ui');
    await connectApp(db, { id: 'a1b2c3d4e5f6', user: 'ada', clientName: 'Claude', readOnly: false });
    await connectApp(db, { id: 'f6e5d4c3b2a1', user: 'bob', clientName: 'ChatGPT', readOnly: true });
    const lines = (await engram('token', 'list')).stdout.trimEnd().split('\n');
    expect(lines.slice(2)).toEqual([
      'a1b2c3d4e5f6  app    ada   read-write  2026-01-02T03:04:05Z  never      Claude',
      'f6e5d4c3b2a1  app    bob   read-only   2026-01-02T03:04:05Z  never      ChatGPT',
    ]);
    const json = JSON.parse((await engram('token', 'list', '--json')).stdout) as Record<string, unknown>[];
    expect(json.map((entry) => entry.kind)).toEqual(['token', 'app', 'app']);
    expect(json[1]).toEqual({
      kind: 'app',
      id: 'a1b2c3d4e5f6',
      user: 'ada',
      label: 'Claude',
      clientId: 'client-1',
      readOnly: false,
      review: false,
      scopes: ['memory:read', 'memory:write'],
      created: '2026-01-02T03:04:05.000Z',
      lastUsed: null,
    });
    expect(json[2]).toMatchObject({ label: 'ChatGPT', readOnly: true, scopes: ['memory:read'] });
  });

  it('revoking an app ends its grant and every token it holds, at once', async () => {
    const { db, engram } = setup();
    await connectApp(db, { id: 'a1b2c3d4e5f6', user: 'ada', clientName: 'Claude', readOnly: false });
    await connectApp(db, { id: 'f6e5d4c3b2a1', user: 'bob', clientName: 'ChatGPT', readOnly: true });
    const run = await engram('token', 'revoke', 'a1b2c3d4e5f6');
    expect(run).toMatchObject({
      code: 0,
      stdout:
        'Revoked the connected app a1b2c3d4e5f6 ("Claude" for user "ada"): every token it holds is refused from now on.\n',
    });
    expect(queryDatabase(db, "SELECT count(*) AS n FROM grant_secrets WHERE grant_id = 'a1b2c3d4e5f6'")).toEqual([
      { n: 0 },
    ]);
    const listed = JSON.parse((await engram('token', 'list', '--json')).stdout) as { id: string }[];
    expect(listed.map((entry) => entry.id)).toEqual(['f6e5d4c3b2a1']);
    expect(JSON.parse((await engram('token', 'revoke', 'f6e5d4c3b2a1', '--json')).stdout)).toEqual({
      revoked: 'f6e5d4c3b2a1',
      kind: 'app',
    });
  });
});
