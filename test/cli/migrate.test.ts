/**
 * `engram migrate`, run as a person runs it: a copy is proved lossless by comparing dumps of source and target (entries, trash, every
 * revision, usage, tokens, accounts, OAuth clients, connected apps and their secrets),
 * and the accounts and apps copied still work; a target that holds something is refused, unchanged, unless
 * --force; mistakes in the arguments are usage errors. The PostgreSQL round trip
 * (SQLite → PostgreSQL → SQLite) is skipped, with a notice, where no server is available.
 *
 * The first copy runs the built CLI as a child process, as a person does; the others run
 * main() in this process (a spawn costs some 0.3 s of CPU), each PostgreSQL test in a
 * schema of its own in one database for the file.
 */

import { afterAll, describe, expect, it } from 'vitest';
import type { Caller, Decide, StoreDump } from '../../src/memory/port.js';
import type { StorageBackend } from '../../src/storage/backend.js';
import { account, client, grant, grantSecret, session } from '../../src/storage/contract/setup.js';
import { openPostgresStore } from '../../src/storage/postgres/index.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { childEnv, runEngram, tempDir } from '../helpers/engram.js';
import {
  createTestDatabase,
  createTestSchema,
  findTestPostgres,
  type TestDatabase,
  type TestSchema,
} from '../helpers/postgres.js';
import { rules } from '../helpers/rules.js';
import { runInProcess } from './fixtures.js';

const server = await findTestPostgres();

const alice: Caller = { user: 'alice', label: 'claude-desktop' };
const bob: Caller = { user: 'bob', label: 'laptop token' };

function put(body: string, description = 'about it'): Decide {
  return (current) => ({ kind: 'put', operation: current ? 'replace' : 'create', description, body });
}

const drop: Decide = () => ({ kind: 'drop' });

/** Alice's connected app: its code (redeemed) and its refresh token. */
const CODE = grantSecret('code', 'g1');
const REFRESH = grantSecret('refresh', 'g1', { kind: 'refresh', expires: 1_800_000_000_000 });

/**
 * Two users with edits, trash, an undrop and tokens, and an account signed in, a client
 * and a connected app with a redeemed code and a refresh token: everything a database keeps.
 */
async function fill(store: StorageBackend): Promise<void> {
  await store.mutate(alice, 'topics/editor', put('Uses Helix.\n', 'Editor'), rules);
  await store.mutate(alice, 'topics/editor', put('Uses Helix.\nTabs, "width" {4}.\n', 'Editor, keyboard'), rules);
  await store.mutate(alice, 'areas/old', put('old\n'), rules);
  await store.mutate({ ...alice, label: 'cli' }, 'areas/old', drop, rules);
  await store.mutate(alice, 'areas/back', put('back\n'), rules);
  await store.mutate(alice, 'areas/back', drop, rules);
  await store.undrop(alice, 'areas/back', rules);
  await store.mutate(bob, 'people/ada', put('Ada ✓ \\ é\n', 'Ada'), rules);
  await store.tokens.add({
    id: 'tok1',
    user: 'alice',
    label: 'webui',
    readOnly: false,
    hash: 'a'.repeat(64),
    created: 1_700_000_000_000,
    lastUsed: 1_700_000_500_000,
    review: false,
  });
  await store.tokens.add({
    id: 'tok2',
    user: 'bob',
    label: 'phone',
    readOnly: true,
    hash: 'b'.repeat(64),
    created: 1_700_000_100_000,
    lastUsed: undefined,
    review: false,
  });
  await store.accounts.put(account('alice'));
  await store.accounts.addSession(session('browser'));
  await store.oauth.saveClient(client('c1'));
  await store.oauth.saveGrant(grant('g1'), CODE);
  await store.oauth.consume(CODE.hash, 1_700_000_200_000);
  await store.oauth.saveSecrets('g1', [REFRESH]);
}

/** What signing in and the connected app need of a copy: the account, the client, the grant and its refresh token, still redeemable once. */
async function signInState(store: StorageBackend) {
  return {
    account: await store.accounts.get('alice'),
    sessions: await store.accounts.listSessions(),
    client: await store.oauth.findClient('c1'),
    grants: await store.oauth.listGrants(),
    code: await store.oauth.findSecret(CODE.hash),
    refresh: await store.oauth.consume(REFRESH.hash, 1_700_000_300_000),
    again: (await store.oauth.consume(REFRESH.hash, 1_700_000_400_000))?.first,
  };
}

const SIGN_IN_STATE = {
  account: account('alice'),
  // Signed-in browsers are not copied: they sign in again.
  sessions: [],
  client: client('c1'),
  grants: [grant('g1')],
  code: { ...CODE, used: 1_700_000_200_000 },
  refresh: { secret: { ...REFRESH, used: 1_700_000_300_000 }, first: true },
  again: false,
};

/** Runs `work` on the SQLite database at `path`, then closes it. */
async function withSqlite<T>(path: string, work: (store: StorageBackend) => Promise<T>): Promise<T> {
  const store = openSqliteStore({ path });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

async function withPostgres<T>(url: string, work: (store: StorageBackend) => Promise<T>): Promise<T> {
  const store = await openPostgresStore({ connectionString: url });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

const dumpOf = (store: StorageBackend): Promise<StoreDump> => store.dump();

/** A source database file filled by `fill`, and its dump. */
async function filledSqlite(path: string): Promise<StoreDump> {
  return withSqlite(path, async (store) => {
    await fill(store);
    return store.dump();
  });
}

/** `engram ARGS` in this process (main(), its output captured), with `env` as its environment. */
const engram = (args: readonly string[], env: NodeJS.ProcessEnv) => runInProcess(args, env);

function setup() {
  const dir = tempDir();
  return { dir, env: childEnv(dir.path), source: dir.file('source.db'), target: dir.file('target.db') };
}

describe('engram migrate, SQLite files', () => {
  it('copies everything, losslessly, and says what it copied', async () => {
    const { env, source, target } = setup();
    const original = await filledSqlite(source);

    const run = await runEngram(['migrate', '--from', source, '--to', target], env);

    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe(
      `Copied SQLite ${source} to SQLite ${target}: 2 users, 3 entries, 1 in the trash, 8 revisions, 2 tokens, 1 account, 1 connected app.\n`,
    );
    expect(original.accounts).toHaveLength(1);
    expect(original.grantSecrets).toHaveLength(2);
    expect(await withSqlite(target, dumpOf)).toEqual(original);
    expect(await withSqlite(source, dumpOf)).toEqual(original);
    expect(await withSqlite(target, signInState)).toEqual(SIGN_IN_STATE);
  });

  it('answers --json with the summary', async () => {
    const { env, source, target } = setup();
    await filledSqlite(source);

    const run = await engram(['migrate', '--from', source, '--to', target, '--json'], env);

    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      from: `SQLite ${source}`,
      to: `SQLite ${target}`,
      users: 2,
      entries: 3,
      trash: 1,
      revisions: 8,
      tokens: 2,
      accounts: 1,
      apps: 1,
      replaced: false,
    });
  });

  it('refuses a target that holds anything, changing nothing, and replaces it with --force', async () => {
    const { env, source, target } = setup();
    const original = await filledSqlite(source);
    const held = await withSqlite(target, async (store) => {
      await store.mutate(bob, 'topics/mine', put('mine\n'), rules);
      return store.dump();
    });

    const refused = await engram(['migrate', '--from', source, '--to', target], env);

    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toBe(
      `SQLite ${target} is not empty: it already holds entries, trash, tokens, accounts or connected apps, so nothing was copied. ` +
        'Pass --force to replace everything in it with the copy, or copy into an empty database.\n',
    );
    expect(await withSqlite(target, dumpOf)).toEqual(held);

    const forced = await engram(['migrate', '--from', source, '--to', target, '--force'], env);

    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain(`to SQLite ${target}, replacing what it held: 2 users, 3 entries`);
    expect(await withSqlite(target, dumpOf)).toEqual(original);
  });

  it('refuses a copy in which a user is past the caps of the config, changing nothing', async () => {
    const { dir, env, source, target } = setup();
    await filledSqlite(source);
    const config = dir.config({ maxEntries: 1 });

    const refused = await engram(['migrate', '--from', source, '--to', target, '--config', config], env);

    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toMatch(
      new RegExp(
        `^1 user\\(s\\) hold more than the caps of SQLite ${target.replace(/[.*+?^$()|[\]\\]/g, '\\$&')} allow ` +
          '\\(1 entries, 4,194,304 bytes\\): alice \\(2 entries, \\d+ bytes\\); nothing was copied\\.',
      ),
    );
    expect(await withSqlite(target, (store) => store.isEmpty())).toBe(true);
  });

  it('reports the progress of a big copy on stderr', async () => {
    const { dir, env, source, target } = setup();
    // Past the default entry cap of 1,000: the config lifts it.
    const config = dir.config({ maxEntries: 2_000 });
    await withSqlite(source, (store) =>
      store.mutateAll(
        alice,
        () =>
          Array.from({ length: 1_500 }, (_, i) => ({
            name: `topics/n${i}`,
            change: { kind: 'put', operation: 'create', description: 'numbered', body: `${i}\n` },
          })),
        rules,
      ),
    );

    const run = await engram(['migrate', '--from', source, '--to', target, '--config', config], env);

    expect(run.code).toBe(0);
    expect(run.stderr).toContain('engram: copying 1,500 entries in one transaction\n');
    expect(run.stderr).toContain('engram: wrote 1,500 of 1,500 entries (100%)\n');
    expect((await withSqlite(target, (store) => store.index('alice'))).length).toBe(1_500);
  });

  it('refuses, as usage errors, a source file that does not exist and a copy onto itself', async () => {
    const { dir, env, source } = setup();
    await filledSqlite(source);

    const missing = await engram(['migrate', '--from', dir.file('nope.db'), '--to', dir.file('t.db')], env);
    expect(missing).toMatchObject({ code: 2, stdout: '' });
    expect(missing.stderr).toBe(
      `engram: --from ${dir.file('nope.db')}: no such file. Give the path of an Engram SQLite database or a postgres:// URL.\n`,
    );

    const itself = await engram(['migrate', '--from', source, '--to', `${dir.path}/./source.db`, '--force'], env);
    expect(itself).toMatchObject({ code: 2, stdout: '' });
    expect(itself.stderr).toBe(
      'engram: --from and --to name the same database: nothing was copied. Copy into another one.\n',
    );

    const incomplete = await engram(['migrate', '--from', source], env);
    expect(incomplete.code).toBe(2);
    expect(incomplete.stderr).toContain("required option '--to <database>' not specified");
  });

  it('says so in one line, changing nothing, when the target server cannot be reached', async () => {
    const { env, source } = setup();
    const original = await filledSqlite(source);

    const run = await engram(['migrate', '--from', source, '--to', 'postgres://postgres@127.0.0.1:1/engram'], env);

    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toMatch(/^cannot reach PostgreSQL at 127\.0\.0\.1:1: connect ECONNREFUSED/);
    expect(run.stderr.split('\n')).toHaveLength(2);
    expect(await withSqlite(source, dumpOf)).toEqual(original);
  });
});

describe.skipIf(!server)('engram migrate through PostgreSQL', () => {
  /** One database for the file, each test in a schema of its own: cheaper than a database each. */
  let shared: Promise<TestDatabase> | undefined;
  const schemas: TestSchema[] = [];

  async function database(): Promise<TestSchema> {
    shared ??= createTestDatabase(server!);
    const created = await createTestSchema(await shared);
    schemas.push(created);
    return created;
  }

  afterAll(async () => {
    for (const created of schemas) await created.drop();
    await (await shared)?.drop();
  });

  it('SQLite → PostgreSQL → SQLite gives back the identical memory: entries, trash, revisions, usage, tokens, accounts, apps', async () => {
    const { dir, env, source } = setup();
    const original = await filledSqlite(source);
    const postgres = await database();
    const back = dir.file('back.db');

    const there = await engram(['migrate', '--from', source, '--to', postgres.url], env);
    const again = await engram(['migrate', '--from', postgres.url, '--to', back], env);

    expect(there).toMatchObject({ code: 0, stderr: '' });
    expect(there.stdout).toContain(`to PostgreSQL ${postgres.url}: 2 users, 3 entries, 1 in the trash`);
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(await withPostgres(postgres.url, dumpOf)).toEqual(original);
    expect(await withSqlite(back, dumpOf)).toEqual(original);
    expect(await withPostgres(postgres.url, signInState)).toEqual(SIGN_IN_STATE);
    expect(await withSqlite(back, signInState)).toEqual(SIGN_IN_STATE);
    const reads = (store: StorageBackend) =>
      Promise.all([store.index('alice'), store.trash('alice'), store.history('alice', 'areas/back')]);
    expect(await withSqlite(back, reads)).toEqual(await withSqlite(source, reads));
  });

  it('refuses a PostgreSQL database that holds anything, changing nothing, and replaces it with --force', async () => {
    const { env, source } = setup();
    const original = await filledSqlite(source);
    const postgres = await database();
    const held = await withPostgres(postgres.url, async (store) => {
      await store.mutate(bob, 'topics/mine', put('mine\n'), rules);
      return store.dump();
    });

    const refused = await engram(['migrate', '--from', source, '--to', postgres.url], env);

    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `PostgreSQL ${postgres.url} is not empty: it already holds entries, trash, tokens, accounts or connected apps, so nothing was copied. ` +
        'Pass --force to replace everything in it with the copy, or copy into an empty database.\n',
    );
    expect(await withPostgres(postgres.url, dumpOf)).toEqual(held);

    const forced = await engram(['migrate', '--from', source, '--to', postgres.url, '--force'], env);

    expect(forced.code).toBe(0);
    expect(await withPostgres(postgres.url, dumpOf)).toEqual(original);
  });

  it('refuses one PostgreSQL database named by two spellings of its server, changing nothing, where the copy waited on itself', async () => {
    const { env, source } = setup();
    await filledSqlite(source);
    const postgres = await database();
    expect(await engram(['migrate', '--from', source, '--to', postgres.url], env)).toMatchObject({ code: 0 });
    const held = await withPostgres(postgres.url, dumpOf);
    const spelledAgain = new URL(postgres.url);
    spelledAgain.hostname = spelledAgain.hostname === 'localhost' ? '127.0.0.1' : 'localhost';

    const itself = await engram(['migrate', '--from', postgres.url, '--to', spelledAgain.toString(), '--force'], env);

    expect(itself).toMatchObject({ code: 2, stdout: '' });
    expect(itself.stderr).toBe(
      'engram: --from and --to name the same database: nothing was copied. Copy into another one.\n',
    );
    expect(await withPostgres(postgres.url, dumpOf)).toEqual(held);
  });

  it('copies between two schemas of one PostgreSQL database: they are two stores', async () => {
    const { env, source } = setup();
    const original = await filledSqlite(source);
    const [first, second] = [await database(), await database()];
    expect(await engram(['migrate', '--from', source, '--to', first.url], env)).toMatchObject({ code: 0 });

    const copied = await engram(['migrate', '--from', first.url, '--to', second.url], env);

    expect(copied).toMatchObject({ code: 0, stderr: '' });
    expect(await withPostgres(second.url, dumpOf)).toEqual(original);
  });
});
