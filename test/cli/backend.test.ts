/** Which database a command opens: flags and environment, then the config file, then the default. */

import { describe, expect, it } from 'vitest';
import { describeBackend } from '../../src/cli/backend.js';
import type { Settings } from '../../src/cli/config.js';
import { chooseBackend, chooseSqliteDriver } from '../../src/cli/context.js';
import { readEnvironment } from '../../src/cli/environment.js';
import { DEFAULT_POLICY } from '../../src/memory/model/policy.js';

const settings = (extra: Partial<Settings> = {}): Settings => ({ policy: DEFAULT_POLICY, ...extra });
const env = { XDG_DATA_HOME: '/data' };
const url = 'postgres://engram@db:5432/engram';

describe('chooseBackend', () => {
  it('defaults to the SQLite file under XDG_DATA_HOME', () => {
    expect(chooseBackend({}, settings(), readEnvironment(env))).toEqual({
      kind: 'sqlite',
      path: '/data/engram/memory.db',
    });
  });

  it('lets a flag or the environment override the config file, whichever backend each names', () => {
    expect(chooseBackend({ db: '/x.db' }, settings({ databaseUrl: url }), readEnvironment(env))).toEqual({
      kind: 'sqlite',
      path: '/x.db',
    });
    expect(
      chooseBackend({}, settings({ db: '/config.db' }), readEnvironment({ ...env, ENGRAM_DATABASE_URL: url })),
    ).toMatchObject({
      kind: 'postgres',
      url,
    });
  });

  it('takes pool size and statement timeout from the flags, else the config', () => {
    expect(
      chooseBackend({ databaseUrl: url, poolSize: 4 }, settings({ statementTimeoutMs: 500 }), readEnvironment(env)),
    ).toEqual({
      kind: 'postgres',
      url,
      poolSize: 4,
      statementTimeoutMs: 500,
    });
  });

  it('refuses a SQLite file and a PostgreSQL URL named at the same level', () => {
    const message =
      'the flags and environment name both a SQLite file (--db / ENGRAM_DB / "db") and a PostgreSQL URL ' +
      '(--database-url / ENGRAM_DATABASE_URL / "databaseUrl"): keep only the one to use.';
    expect(() =>
      chooseBackend({ db: '/x.db' }, settings(), readEnvironment({ ...env, ENGRAM_DATABASE_URL: url })),
    ).toThrow(message);
    expect(() => chooseBackend({}, settings({ db: '/x.db', databaseUrl: url }), readEnvironment(env))).toThrow(
      /^the config file name both/,
    );
  });
});

describe('describeBackend', () => {
  it('names a PostgreSQL database without its password, in the user part or the query', () => {
    expect(describeBackend({ kind: 'postgres', url: 'postgres://ada:s3cret@db:5432/engram?password=s3cret&x=1' })).toBe(
      'PostgreSQL postgres://ada@db:5432/engram?x=1',
    );
    expect(describeBackend({ kind: 'postgres', url: 'postgres://ada:s3cret@/engram' })).toBe(
      'PostgreSQL (unparsable URL)',
    );
  });
});

describe('chooseSqliteDriver', () => {
  it('takes --sqlite-driver, then ENGRAM_SQLITE_DRIVER, then the config file, else leaves the choice to the store', () => {
    const nodeEnv = readEnvironment({ ...env, ENGRAM_SQLITE_DRIVER: 'node' });
    expect(chooseSqliteDriver({ sqliteDriver: 'better-sqlite3' }, settings({ sqliteDriver: 'node' }), nodeEnv)).toBe(
      'better-sqlite3',
    );
    expect(chooseSqliteDriver({}, settings({ sqliteDriver: 'better-sqlite3' }), nodeEnv)).toBe('node');
    expect(chooseSqliteDriver({}, settings({ sqliteDriver: 'better-sqlite3' }), readEnvironment(env))).toBe(
      'better-sqlite3',
    );
    expect(chooseSqliteDriver({}, settings(), readEnvironment({ ...env, ENGRAM_SQLITE_DRIVER: '' }))).toBeUndefined();
  });

  it('refuses an ENGRAM_SQLITE_DRIVER that names no driver, saying which do', () => {
    expect(() =>
      chooseSqliteDriver({}, settings(), readEnvironment({ ...env, ENGRAM_SQLITE_DRIVER: 'sqlite3' })),
    ).toThrow(/ENGRAM_SQLITE_DRIVER=sqlite3 names no SQLite driver: set it to better-sqlite3 or node/);
  });
});
