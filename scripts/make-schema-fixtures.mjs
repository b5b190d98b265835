/**
 * `npm run fixtures:schemas [-- sqlite-12 postgres-3 …]`: the upgrade fixtures of
 * test/fixtures/schemas/, a database for every schema version Engram has had, each made
 * by that version's own code, so that test/storage/upgrades.test.ts upgrades real old
 * databases rather than today's migrations cut short.
 *
 * For each version, the commit named below (the last on main whose newest migration was
 * that version) is extracted with `git archive` into a folder of its own, compiled there
 * with this checkout's node_modules and TypeScript 7 compiler (tsc on its own
 * tsconfig.build.json: its library is all the fixtures need), and made to write the data
 * set of scripts/schema-fixtures/write-data.mjs through its own API. Then:
 *   - SQLite: the file, checkpointed (no -wal beside it), as sqlite-<N>.db;
 *   - PostgreSQL (a database of its own on $ENGRAM_TEST_DATABASE_URL's server, dropped
 *     after): a plain-SQL dump by pg_dump (INSERTs, no owners), as postgres-<N>.sql;
 * and beside each, <name>.json: what that old code read back (every entry with its body,
 * description and revisions, the trash, tokens with their secrets, accounts with their
 * passwords, connected apps with their OAuth tokens), which the test compares against.
 *
 * SQLite 2 and PostgreSQL 4 have no fixture: no commit of main ever had them as its newest
 * version (each came in one commit with the next), so no Engram ever made such a database.
 * A new version is added here once a commit that brings it is on main (the upgrade test asks
 * for a fixture of every version before today's); the newest ones here were made by the
 * commit at hand when they were added.
 */

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';

const root = fileURLToPath(new URL('..', import.meta.url));
const TSC = join(root, 'node_modules', '@typescript', 'native', 'bin', 'tsc');
const OUT = join(root, 'test', 'fixtures', 'schemas');
const WRITER = join(root, 'scripts', 'schema-fixtures', 'write-data.mjs');
const SERVER = process.env.ENGRAM_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Every schema version main has had, and the commit that makes its fixture: the last on
 * main's first-parent line at which it was the newest and whose source compiles (a few
 * commits in the middle of a larger change do not: 8007503 and the 6 commits before it,
 * 749626b and the 11 before it, 8dbdabb; the commit before them is taken).
 */
const VERSIONS = [
  { backend: 'sqlite', version: 1, commit: 'd8fd7c1' },
  { backend: 'sqlite', version: 3, commit: '2daf1a9' },
  { backend: 'sqlite', version: 4, commit: '32811e0' },
  { backend: 'sqlite', version: 5, commit: '379bb2f' },
  { backend: 'sqlite', version: 6, commit: '9670636' },
  { backend: 'sqlite', version: 7, commit: '9c6416b' },
  { backend: 'sqlite', version: 8, commit: '6789992' },
  { backend: 'sqlite', version: 9, commit: '9099a07' },
  { backend: 'sqlite', version: 10, commit: '03af007' },
  { backend: 'sqlite', version: 11, commit: 'a2a3721' },
  { backend: 'sqlite', version: 12, commit: 'ea30746' },
  { backend: 'sqlite', version: 13, commit: '51f8993' },
  { backend: 'sqlite', version: 14, commit: 'd329d47' },
  { backend: 'sqlite', version: 15, commit: '5908267' },
  { backend: 'sqlite', version: 16, commit: '4cd197e' },
  { backend: 'sqlite', version: 17, commit: '9b250e3' },
  { backend: 'sqlite', version: 18, commit: '8f3a2a1' },
  { backend: 'sqlite', version: 19, commit: '9a70710' },
  { backend: 'sqlite', version: 20, commit: '5206a88' },
  { backend: 'sqlite', version: 21, commit: 'ef3fd23' },
  { backend: 'postgres', version: 1, commit: '32811e0' },
  { backend: 'postgres', version: 2, commit: '379bb2f' },
  { backend: 'postgres', version: 3, commit: '9670636' },
  { backend: 'postgres', version: 5, commit: '9099a07' },
  { backend: 'postgres', version: 6, commit: '03af007' },
  { backend: 'postgres', version: 7, commit: '4cd197e' },
  { backend: 'postgres', version: 8, commit: '30ea906' },
  { backend: 'postgres', version: 9, commit: '9b250e3' },
  { backend: 'postgres', version: 10, commit: '8f3a2a1' },
  { backend: 'postgres', version: 11, commit: '2892e88' },
];

function git(...args) {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
}

/** The commit's source, compiled into <folder>/dist; kept in the temporary folder for the next run. */
function build(commit) {
  const folder = join(tmpdir(), `engram-schema-fixture-${commit}`);
  if (existsSync(join(folder, 'dist', 'index.js'))) return folder;
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(join(folder, 'node_modules'), { recursive: true });
  execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C '${folder}'`], { cwd: root, stdio: 'inherit' });
  for (const name of readdirSync(join(root, 'node_modules'))) {
    if (name !== '.bin') symlinkSync(join(root, 'node_modules', name), join(folder, 'node_modules', name));
  }
  execFileSync(process.execPath, [TSC, '-p', 'tsconfig.build.json', '--declaration', 'false', '--sourceMap', 'false'], {
    cwd: folder,
    stdio: 'inherit',
  });
  return folder;
}

function writeData(folder, backend, target, manifest) {
  execFileSync(process.execPath, [WRITER, folder, backend, target, manifest], { cwd: folder, stdio: 'inherit' });
}

async function query(url, sql) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

function check(found, { backend, version, commit }) {
  if (found !== version) throw new Error(`${backend} at ${commit} made schema version ${found}, not ${version}`);
}

async function makeSqlite(fixture, folder, work) {
  const file = join(work, 'memory.db');
  const manifest = join(work, 'manifest.json');
  writeData(folder, 'sqlite', file, manifest);
  const db = new Database(file);
  db.pragma('wal_checkpoint(TRUNCATE)');
  check(db.prepare('SELECT version FROM schema_version').get().version, fixture);
  db.close();
  if (existsSync(`${file}-wal`)) throw new Error(`${file}-wal is still there after the checkpoint`);
  const name = `sqlite-${fixture.version}`;
  // A log left beside an earlier fixture (by someone who opened it) must not be taken for this file's.
  for (const suffix of ['-wal', '-shm']) rmSync(join(OUT, `${name}.db${suffix}`), { force: true });
  copyFileSync(file, join(OUT, `${name}.db`));
  return { name, manifest };
}

async function makePostgres(fixture, folder, work) {
  const database = `engram_fixture_${randomBytes(6).toString('hex')}`;
  await query(SERVER, `CREATE DATABASE ${database}`);
  const url = new URL(SERVER);
  url.pathname = `/${database}`;
  try {
    const manifest = join(work, 'manifest.json');
    writeData(folder, 'postgres', url.toString(), manifest);
    check((await query(url.toString(), 'SELECT version FROM schema_version'))[0].version, fixture);
    const dump = execFileSync(
      'pg_dump',
      ['--no-owner', '--no-privileges', '--no-comments', '--inserts', url.toString()],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    const name = `postgres-${fixture.version}`;
    // Plain SQL a test runs in one query: without the psql commands \restrict and \unrestrict
    // (newer pg_dump's guard, a random key that would change the file with every run).
    writeFileSync(join(OUT, `${name}.sql`), dump.replace(/^\\(un)?restrict .*\n/gm, ''));
    return { name, manifest };
  } finally {
    await query(SERVER, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  }
}

const wanted = process.argv.slice(2);
const chosen = VERSIONS.filter(
  ({ backend, version }) => wanted.length === 0 || wanted.includes(`${backend}-${version}`),
);
if (chosen.length === 0) {
  console.error(
    `fixtures:schemas: no such fixture; they are ${VERSIONS.map((v) => `${v.backend}-${v.version}`).join(' ')}`,
  );
  process.exit(2);
}
mkdirSync(OUT, { recursive: true });
for (const fixture of chosen) {
  const commit = git('rev-parse', '--verify', `${fixture.commit}^{commit}`);
  console.error(`fixtures:schemas: ${fixture.backend} schema ${fixture.version}, made by ${commit.slice(0, 12)}…`);
  const folder = build(commit);
  const work = join(tmpdir(), `engram-schema-fixture-work-${randomBytes(4).toString('hex')}`);
  mkdirSync(work);
  try {
    const made =
      fixture.backend === 'sqlite'
        ? await makeSqlite(fixture, folder, work)
        : await makePostgres(fixture, folder, work);
    const held = JSON.parse(readFileSync(made.manifest, 'utf8'));
    const manifest = {
      backend: fixture.backend,
      schemaVersion: fixture.version,
      madeBy: { commit, date: git('show', '-s', '--format=%cI', commit) },
      ...held,
    };
    writeFileSync(join(OUT, `${made.name}.json`), `${JSON.stringify(manifest, null, 2)}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
