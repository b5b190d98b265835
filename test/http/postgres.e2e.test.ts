/**
 * Scaling out: several `engram serve` processes (the built CLI, as an operator starts it)
 * in front of one PostgreSQL database. What one server writes, the other reads; 100
 * appends split across both lose no line; tokens made and revoked by `engram token`
 * hold on both at once; and two servers started at the same moment on an empty database
 * both come up, the schema created once. Skipped, with a notice, where no PostgreSQL is
 * available.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { MIGRATIONS } from '../../src/storage/postgres/migrations.js';
import { runInProcess } from '../cli/fixtures.js';
import { boundaryTagOf } from '../helpers/boundary.js';
import { childEnv, ENGRAM_CLI, tempDir } from '../helpers/engram.js';
import {
  createTestDatabase,
  createTestSchema,
  findTestPostgres,
  queryPostgres,
  type TestDatabase,
} from '../helpers/postgres.js';
import { HTTP_CLIENTS, type HttpSession } from './clients.js';

const server = await findTestPostgres();

interface Served {
  readonly child: ChildProcess;
  /** The MCP endpoint printed at start-up. */
  readonly url: string;
}

/** Starts `engram serve ARGS --port 0` and resolves once it prints where to connect; killed after the test. */
function serve(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Served> {
  const child = spawn(process.execPath, [ENGRAM_CLI, 'serve', '--port', '0', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const url = /serving MCP at (\S+)/.exec(line)?.[1];
      if (url) resolve({ child, url });
    });
    exited.then((code) => reject(new Error(`engram serve exited with ${code} before serving:\n${stderr}`)));
  });
}

/**
 * One database for this file, each test in a schema of its own (the URL's search_path
 * names it; dropped after the test): as empty as a database of its own to the servers,
 * without creating and dropping a database per test (about 3 s of the server's time each).
 */
let fileDatabase: Promise<TestDatabase> | undefined;
afterAll(async () => {
  await (await fileDatabase)?.drop();
});

/** A fresh schema, the environment for the CLI, and two servers on it. */
async function twoServers(flags: readonly string[] = []) {
  fileDatabase ??= createTestDatabase(server!);
  const database = await createTestSchema(await fileDatabase);
  onTestFinished(() => database.drop());
  const env = childEnv(tempDir().path);
  const args = ['--database-url', database.url, ...flags];
  const [one, two] = await Promise.all([serve(args, env), serve(args, env)]);
  return { database, env, one: one!, two: two! };
}

async function connect(url: string, options: { token?: string } = {}): Promise<HttpSession> {
  const session = await HTTP_CLIENTS[0]!.connect(url, options);
  onTestFinished(() => session.close());
  return session;
}

describe.skipIf(!server)('engram serve, two servers on one PostgreSQL database', () => {
  it('reads through one server what was written through the other', async () => {
    const { one, two } = await twoServers();
    const [a, b] = [await connect(one.url), await connect(two.url)];

    expect(await a.call('memory_write', { name: 'topics/editor', description: 'Editor', new: 'Helix' })).toEqual({
      text: 'topics/editor (6 bytes): Editor',
      isError: false,
    });

    expect(await b.call('memory_open')).toEqual({ text: 'topics/editor (6 bytes): Editor', isError: false });
    expect(await b.call('memory_write', { name: 'topics/editor', old: 'Helix', new: 'Kakoune' })).toMatchObject({
      isError: false,
    });
    const opened = (await a.call('memory_open', { names: ['topics/editor'] })).text;
    expect(opened).toBe(
      `topics/editor (8 bytes): Editor\nKakoune\n=== end of topics/editor [${boundaryTagOf(opened)}] ===`,
    );
    expect(await b.call('memory_drop', { name: 'topics/editor' })).toMatchObject({ isError: false });
    expect((await a.call('memory_open')).text).toMatch(/^Memory is empty\./);
  });

  it('loses no line among 100 concurrent appends split across both servers', async () => {
    const { database, one, two } = await twoServers();
    const [a, b] = [await connect(one.url), await connect(two.url)];
    await a.call('memory_write', { name: 'areas/log', description: 'Shared log', new: 'start' });
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i}`);

    const outcomes = await Promise.all(
      lines.map((line, i) => (i % 2 === 0 ? a : b).call('memory_write', { name: 'areas/log', new: line })),
    );

    expect(outcomes.filter((outcome) => outcome.isError)).toEqual([]);
    const [entry] = await queryPostgres<{ body: string; revision: number }>(
      database.url,
      // The body is kept once, in the entry's latest revision (postgres/migrations.ts, step 8).
      `SELECT r.body, e.revision FROM entries e
       JOIN revisions r ON r.user_id = e.user_id AND r.entry_id = e.id AND r.revision = e.revision
       WHERE e.name = 'areas/log' AND e.dropped_at IS NULL`,
    );
    const stored = entry!.body.split('\n').filter(Boolean);
    expect(stored[0]).toBe('start');
    expect(stored.slice(1).sort()).toEqual([...lines].sort());
    expect(entry!.revision).toBe(101);
    // Every append is its own revision; the oldest beyond the history limit (100) is trimmed.
    expect(
      await queryPostgres(
        database.url,
        'SELECT min(revision) AS first, max(revision) AS last, count(*)::integer AS kept FROM revisions',
      ),
    ).toEqual([{ first: 2, last: 101, kept: 100 }]);
  });

  it('honours on both servers a token made by engram token, and refuses it on both once revoked', async () => {
    const { database, env, one, two } = await twoServers(['--auth', 'token']);
    // engram token runs main() in this process (a spawn costs some 0.3 s of CPU): serve is the door under test.
    const created = await runInProcess(
      ['token', 'create', '--user', 'ada', '--label', 'team laptop', '--json', '--database-url', database.url],
      env,
    );
    const { id, token } = JSON.parse(created.stdout) as { id: string; token: string };
    const [a, b] = [await connect(one.url, { token }), await connect(two.url, { token })];

    await a.call('memory_write', { name: 'topics/me', description: 'Me', new: 'Ada' });
    expect((await b.call('memory_open')).text).toBe('topics/me (4 bytes): Me');

    expect((await runInProcess(['token', 'revoke', id, '--database-url', database.url], env)).code).toBe(0);
    await expect(a.call('memory_open')).rejects.toThrow();
    await expect(b.call('memory_open')).rejects.toThrow();
    expect(await queryPostgres(database.url, 'SELECT user_id, actor FROM revisions')).toEqual([
      { user_id: 'ada', actor: 'team laptop' },
    ]);
  });

  it('brings up both of two servers started at the same moment on an empty database, the schema created once', async () => {
    const { database, one, two } = await twoServers();

    expect(await queryPostgres(database.url, 'SELECT version FROM schema_version')).toEqual([
      { version: MIGRATIONS.length },
    ]);
    const [a, b] = [await connect(one.url), await connect(two.url)];
    await a.call('memory_write', { name: 'topics/first', description: 'First', new: 'one' });
    expect((await b.call('memory_open')).text).toBe('topics/first (4 bytes): First');
  });
});
