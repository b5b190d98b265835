/**
 * plain-config.ts reads a config file without zod: for any JSON, fuzzed around each
 * field's rule, what it takes the schema takes too, with the same data; and it takes
 * every config the schema takes (but for a key named __proto__, which zod passes over),
 * so that a valid file never waits for zod.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ConfigData, checkedBySchema } from '../../src/cli/config.js';
import { plainConfig } from '../../src/cli/plain-config.js';

const positive = fc.oneof(
  fc.integer({ min: 1 }),
  fc.constantFrom(0, -0, -1, 1.5, 2 ** 53, 2 ** 53 - 1, 1e300, '5', null, true),
);
const nonNegative = fc.oneof(fc.nat(), fc.constantFrom(-0, -1, 0.5, 2 ** 53, '0', null));
const flag = fc.oneof(fc.boolean(), fc.constantFrom(0, 'true', null));
const text = (...samples: unknown[]) => fc.oneof(fc.string(), fc.constantFrom(...samples));
const segment = fc.oneof(
  fc.constantFrom(
    'work',
    'home',
    'a',
    'a.b',
    'a_b-c',
    '-x',
    'x-',
    'A',
    'a b',
    '',
    '__proto__',
    'x'.repeat(64),
    'x'.repeat(65),
  ),
  fc.string({ maxLength: 4 }),
);
const description = fc.oneof(fc.string(), fc.constantFrom('the job', '  the house  ', ' ', '', '\tx\n', 5, null));
const redirectUri = fc.constantFrom(
  'https://app.example/callback',
  'http://localhost:8080/cb',
  'http://127.0.0.1/cb',
  'http://app.example/cb',
  'com.example.app:/callback',
  'https://app.example/cb#x',
  'not a uri',
  '',
  7,
);
const client = fc.record(
  {
    id: text('app', '  app  ', 'other', ' ', ''),
    name: text('My app', '  ', 'x'.repeat(100), 'x'.repeat(101), 'two\nlines'),
    redirectUris: fc.oneof(fc.array(redirectUri, { maxLength: 12 }), fc.constant('https://app.example/cb')),
    secret: fc.string(),
  },
  { requiredKeys: [] },
);

/** A generator for each of the schema's fields: a field added to the schema fails to compile until it has one. */
const fields: { readonly [Field in keyof ConfigData | 'unknown']-?: fc.Arbitrary<unknown> } = {
  groups: fc.oneof(fc.dictionary(segment, description, { maxKeys: 4 }), fc.constantFrom([], 'work', null)),
  entryCap: positive,
  userCap: positive,
  maxEntries: positive,
  historyCap: positive,
  descriptionCap: positive,
  maxNames: positive,
  trashRetentionDays: nonNegative,
  historyLimit: positive,
  proposalRetentionDays: positive,
  maxProposals: positive,
  groupCommit: flag,
  sqliteDriver: text('better-sqlite3', 'node', 'sqlite3'),
  db: text('/tmp/x.db', '', 3),
  databaseUrl: text('postgres://u@h/db', 'postgresql://h/db', 'mysql://h/db', ' postgres://h'),
  poolSize: positive,
  statementTimeoutMs: nonNegative,
  user: text('ann', ' Ann ', '', 'two words', 'x'.repeat(64), 'x'.repeat(65)),
  publicUrl: text('https://memory.example.com', 'https://memory.example.com/path', 'http://localhost:8787', 'nope'),
  clients: fc.oneof(fc.array(client, { maxLength: 3 }), fc.constantFrom({}, null)),
  allowPrivateClientMetadata: flag,
  rateLimit: text('mcp=100/s', 'mcp=100/s,api=5/m', 'mcp=off', 'mcp=0/s', 'mcp', 'nope=1/s'),
  metrics: flag,
  logFormat: text('human', 'json', 'xml'),
  metricsToken: text('a'.repeat(24), 'a'.repeat(23), `${'a'.repeat(24)} b`, 'é'.repeat(30)),
  backupDir: text('/backups', ''),
  backupEvery: text('6h', '1s', '0s', ' 2 d ', '1w', '400d', 'often'),
  backupKeep: positive,
  webSocket: fc.oneof(
    fc.record(
      { socketsPerToken: positive, socketsPerUser: positive, sockets: positive, handshakes: positive, other: positive },
      { requiredKeys: [] },
    ),
    fc.constantFrom(null, 5, []),
  ),
  unknown: fc.anything(),
};

/** The schema's data, or undefined where it refuses. */
function bySchema(json: unknown): unknown {
  try {
    return checkedBySchema(json, 'config.json');
  } catch (error) {
    if ((error as { code?: string }).code === 'INVALID_CONFIG') return undefined;
    throw error;
  }
}

/** A few of the fields at a time, so that many a file is valid as a whole. */
const config = fc
  .subarray(Object.keys(fields) as (keyof typeof fields)[], { maxLength: 4 })
  .chain((keys) => fc.record(Object.fromEntries(keys.map((key) => [key, fields[key]]))));

describe('plainConfig', () => {
  it('takes what the schema takes, with the same data', () => {
    let taken = 0;
    fc.assert(
      fc.property(fc.oneof(config, fc.anything()), (json) => {
        const data = bySchema(json);
        const plain = plainConfig(json);
        if (plain !== undefined) {
          taken++;
          expect(plain).toEqual(data);
        } else if (!JSON.stringify(json ?? null).includes('"__proto__"')) {
          // zod passes over a key named __proto__ (unchecked, left out): such a file is the schema's alone.
          expect(data).toBeUndefined();
        }
      }),
      { numRuns: 5_000 },
    );
    // About one in five runs is a valid file (the rest are near misses and any JSON at all).
    expect(taken).toBeGreaterThan(250);
  });

  it('takes a file of many fields, each valid', () => {
    const json = {
      groups: { work: ' the job ', home: 'the house' },
      userCap: 2 ** 40,
      maxEntries: 2 ** 30,
      trashRetentionDays: 0,
      db: '/tmp/x.db',
      user: 'Ann',
      publicUrl: 'https://memory.example.com',
      clients: [{ id: ' app ', name: 'My app', redirectUris: ['https://app.example/callback'] }],
      rateLimit: 'mcp=100/s',
      backupEvery: '6h',
      webSocket: { sockets: 10 },
    };
    expect(plainConfig(json)).toEqual(bySchema(json));
    expect(plainConfig(json)?.groups).toEqual({ work: 'the job', home: 'the house' });
  });
});
