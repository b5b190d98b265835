/**
 * The config file: absent is fine (defaults), anything wrong is a clear startup error
 * that names the field. Each test uses its own temporary folder, removed when it ends.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadSettings, parseConfig } from '../../src/cli/config.js';
import { readEnvironment } from '../../src/cli/environment.js';
import { DEFAULT_POLICY } from '../../src/memory/model/policy.js';
import { expectEngramError } from '../memory/fixtures.js';

/** A folder of the running test's own, removed when it finishes. */
function tempDir(): string {
  const folder = mkdtempSync(join(tmpdir(), 'engram-config-'));
  onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
  return folder;
}

/** Writes `content` (text, or JSON for anything else) to a config file and returns its path. */
function configFile(content: unknown): string {
  const path = join(tempDir(), 'config.json');
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

const parse = (config: unknown) => parseConfig(JSON.stringify(config), 'config.json');

describe('loading', () => {
  it('uses the defaults when the default file is absent', () => {
    const env = { XDG_CONFIG_HOME: tempDir() };
    expect(readEnvironment(env).defaultConfigPath).toBe(join(env.XDG_CONFIG_HOME, 'engram', 'config.json'));
    expect(loadSettings(undefined, readEnvironment(env))).toEqual({ policy: DEFAULT_POLICY });
  });

  it('reads a file an editor saved with a byte order mark', () => {
    const path = configFile(`\uFEFF${JSON.stringify({ entryCap: 100 })}`);
    expect(loadSettings(path, readEnvironment({})).policy.entryCap).toBe(100);
  });

  it('reads the default file when it is there', () => {
    const home = tempDir();
    const path = readEnvironment({ XDG_CONFIG_HOME: home }).defaultConfigPath;
    mkdirSync(join(home, 'engram'));
    writeFileSync(path, JSON.stringify({ entryCap: 100 }));
    expect(loadSettings(undefined, readEnvironment({ XDG_CONFIG_HOME: home })).policy.entryCap).toBe(100);
  });

  it('falls back to ~/.config without XDG_CONFIG_HOME', () => {
    expect(readEnvironment({}).defaultConfigPath).toMatch(/[/\\]\.config[/\\]engram[/\\]config\.json$/);
  });

  it('an explicit file that is missing is an error', async () => {
    const path = join(tempDir(), 'nope.json');
    await expectEngramError(
      () => loadSettings(path, readEnvironment({})),
      'INVALID_CONFIG',
      new RegExp(`^cannot read config file ${path}: `),
    );
  });

  it('ENGRAM_CONFIG counts as explicit', async () => {
    const path = join(tempDir(), 'nope.json');
    await expectEngramError(
      () => loadSettings(undefined, readEnvironment({ ENGRAM_CONFIG: path })),
      'INVALID_CONFIG',
      /cannot read/,
    );
    expect(
      loadSettings(undefined, readEnvironment({ ENGRAM_CONFIG: configFile({ maxNames: 5 }) })).policy.maxNames,
    ).toBe(5);
  });

  it('reads groups, caps, db and user, keeping the defaults for the rest', () => {
    const settings = loadSettings(
      configFile({ groups: { work: 'the job', home: 'the house' }, userCap: 1000, db: '/tmp/x.db', user: 'ann' }),
      readEnvironment({}),
    );
    expect(settings).toEqual({
      policy: { ...DEFAULT_POLICY, groups: { work: 'the job', home: 'the house' }, userCap: 1000 },
      db: '/tmp/x.db',
      user: 'ann',
    });
    expect(Object.keys(settings.policy.groups)).toEqual(['work', 'home']);
  });

  it('reads the entry cap and the history cap', () => {
    expect(parse({ maxEntries: 5_000, historyCap: 1_048_576 }).policy).toEqual({
      ...DEFAULT_POLICY,
      maxEntries: 5_000,
      historyCap: 1_048_576,
    });
  });

  it('an empty object is the defaults', () => {
    expect(parse({}).policy).toEqual(DEFAULT_POLICY);
  });
});

describe('invalid config', () => {
  it('invalid JSON names the file', async () => {
    const path = configFile('{"groups": ');
    await expectEngramError(
      () => loadSettings(path, readEnvironment({})),
      'INVALID_CONFIG',
      new RegExp(`^config file ${path} is not valid JSON: `),
    );
  });

  it.each<[string, unknown, RegExp]>([
    ['an unknown key', { entrycap: 5 }, /entrycap/],
    ['a bad group name', { groups: { Work: 'the job' } }, /groups\.Work: a group name is 1-64 characters/],
    ['a group name with a slash', { groups: { 'a/b': 'x' } }, /groups\.a\/b: a group name/],
    ['an empty group purpose', { groups: { work: '  ' } }, /groups\.work: say in a few words what the group is for/],
    ['no groups', { groups: {} }, /groups: configure at least one group/],
    ['a cap of zero', { entryCap: 0 }, /entryCap: must be a positive integer$/],
    ['a negative cap', { userCap: -1 }, /userCap: must be a positive integer$/],
    ['a fractional cap', { descriptionCap: 1.5 }, /descriptionCap: must be a positive integer$/],
    ['a cap as a string', { maxNames: '50' }, /maxNames: must be a positive integer$/],
    ['an empty db path', { db: '' }, /db: /],
    ['an unknown SQLite driver', { sqliteDriver: 'sqlite3' }, /sqliteDriver: /],
    ['an array at the top', [], /\(top level\): /],
  ])('%s', async (_, config, field) => {
    const error = await expectEngramError(
      () => parse(config),
      'INVALID_CONFIG',
      /^invalid config file config\.json:\n {2}/,
    );
    expect(error.message).toMatch(field);
  });

  it('lists every problem at once', async () => {
    const error = await expectEngramError(() => parse({ entryCap: 0, userCap: 'big' }), 'INVALID_CONFIG');
    expect(error.message.split('\n')).toHaveLength(3);
  });
});

describe('sqliteDriver', () => {
  it('is better-sqlite3 or node', () => {
    expect(parse({ sqliteDriver: 'node' }).sqliteDriver).toBe('node');
    expect(parse({ sqliteDriver: 'better-sqlite3' }).sqliteDriver).toBe('better-sqlite3');
    expect(parse({}).sqliteDriver).toBeUndefined();
  });
});

describe('publicUrl', () => {
  it('is read as the origin, trailing slash or not', () => {
    expect(parse({ publicUrl: 'https://memory.example.com/' }).publicUrl?.href).toBe('https://memory.example.com/');
    expect(parse({}).publicUrl).toBeUndefined();
  });

  it.each(['memory.example.com', 'https://memory.example.com/engram', 'https://memory.example.com/?a=1'])(
    'refuses %s, naming the field and what fits',
    async (publicUrl) => {
      await expectEngramError(
        () => parse({ publicUrl }),
        'INVALID_CONFIG',
        /^invalid config file config\.json:\n {2}publicUrl: give the origin clients reach Engram by, with no path, query or fragment, for example https:\/\/memory\.example\.com$/,
      );
    },
  );
});

describe('clients', () => {
  it('are read as configured OAuth clients, their names folded to one line', () => {
    expect(
      parse({
        clients: [
          { id: 'my-script', name: ' My\nscript ', redirectUris: ['http://127.0.0.1/callback'] },
          { id: 'https://app.example.com/client.json', name: 'App', redirectUris: ['https://app.example.com/cb'] },
        ],
      }).clients,
    ).toEqual([
      { id: 'my-script', kind: 'configured', name: 'My script', redirectUris: ['http://127.0.0.1/callback'] },
      {
        id: 'https://app.example.com/client.json',
        kind: 'configured',
        name: 'App',
        redirectUris: ['https://app.example.com/cb'],
      },
    ]);
    expect(parse({}).clients).toBeUndefined();
  });

  it.each<[string, unknown, RegExp]>([
    [
      'an empty id',
      [{ id: ' ', name: 'x', redirectUris: ['https://a.example/cb'] }],
      /clients\.0\.id: give the client_id/,
    ],
    ['no name', [{ id: 'a', name: '\n', redirectUris: ['https://a.example/cb'] }], /clients\.0\.name: the app's name/],
    ['no redirect URI', [{ id: 'a', name: 'A', redirectUris: [] }], /clients\.0\.redirectUris: list where/],
    [
      'an http redirect URI off this computer',
      [{ id: 'a', name: 'A', redirectUris: ['http://a.example/cb'] }],
      /clients\.0\.redirectUris\.0: the redirect URI "http:\/\/a.example\/cb" uses http/,
    ],
    [
      'an id twice',
      [
        { id: 'a', name: 'A', redirectUris: ['https://a.example/cb'] },
        { id: 'a', name: 'B', redirectUris: ['https://b.example/cb'] },
      ],
      /clients: each id once/,
    ],
    ['an unknown field', [{ id: 'a', name: 'A', redirectUris: ['https://a.example/cb'], secret: 'x' }], /clients\.0/],
  ])('refuses %s, naming the field', async (_, clients, message) => {
    await expectEngramError(() => parse({ clients }), 'INVALID_CONFIG', message);
  });
});

describe('allowPrivateClientMetadata', () => {
  it('is off unless the file turns it on, and must be true or false', async () => {
    expect(parse({}).allowPrivateClientMetadata).toBeUndefined();
    expect(parse({ allowPrivateClientMetadata: true }).allowPrivateClientMetadata).toBe(true);
    await expectEngramError(
      () => parse({ allowPrivateClientMetadata: 'yes' }),
      'INVALID_CONFIG',
      /^invalid config file config\.json:\n {2}allowPrivateClientMetadata: /,
    );
  });
});

describe('webSocket', () => {
  it("reads engram serve's caps on WebSocket sockets; absent, the defaults apply", () => {
    expect(parse({}).webSocket).toBeUndefined();
    expect(
      parse({ webSocket: { socketsPerToken: 4, socketsPerUser: 8, sockets: 100, handshakes: 10 } }).webSocket,
    ).toEqual({
      socketsPerToken: 4,
      socketsPerUser: 8,
      sockets: 100,
      handshakes: 10,
    });
  });

  it.each([
    [
      'a cap that is not a positive integer',
      { sockets: 0 },
      /^invalid config file config\.json:\n {2}webSocket\.sockets: must be a positive integer$/,
    ],
    [
      'an unknown cap',
      { socketsPerIp: 4 },
      /^invalid config file config\.json:\n {2}webSocket: Unrecognized key: "socketsPerIp"$/,
    ],
  ])('refuses %s, naming the field', async (_, webSocket, message) => {
    await expectEngramError(() => parse({ webSocket }), 'INVALID_CONFIG', message);
  });
});
