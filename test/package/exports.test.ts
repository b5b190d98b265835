/**
 * The package's entries, as another project imports them from the build: `engram` (the
 * library), `engram/store` (the Store port, for a backend of one's own) and
 * `engram/testing` (the Store contract suite to test it with). Resolved by Node through
 * package.json "exports", in a process of its own, as a dependent would.
 */

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const PROBE = `
const entries = {};
for (const name of ['engram', 'engram/store', 'engram/testing']) entries[name] = Object.keys(await import(name)).sort();
process.stdout.write(JSON.stringify(entries));
`;

describe('the package entries', () => {
  it('export the library, the Store port with what a backend persists by, and the contract suite', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', PROBE], { cwd: ROOT });
    const entries = JSON.parse(stdout) as Record<string, string[]>;

    expect(entries.engram).toEqual(
      expect.arrayContaining(['createMemory', 'handleToolCall', 'openMemoryStore', 'openSqliteStore']),
    );
    expect(entries.engram).not.toContain('defaultDatabasePath');
    expect(entries['engram/store']).toEqual([
      'ChangeFeed',
      'EngramError',
      'TRIM_BATCH',
      'Trim',
      'applyChange',
      'applyUndrop',
      'duplicateKeyError',
      'duplicateTokenError',
      'entryAfter',
      'entryBytes',
      'foldWord',
      'isEngramError',
      'mutationDetails',
      'notEmptyError',
      'recordingDecide',
      'revisionBytes',
      'searchHit',
      'searchRank',
      'searchText',
      'searchWords',
      'writeRules',
    ]);
    expect(entries['engram/testing']).toEqual(
      expect.arrayContaining([
        'describeAccountContract',
        'describeActivityContract',
        'describeGrantContract',
        'describeSearchContract',
        'describeStoreContract',
      ]),
    );
  });
});
