/**
 * The package's entries, as another project imports them from the build: `engram` (the
 * library, with the OpenAI and Anthropic agent-loop adapters), `engram/ai-sdk` (the tools
 * for the Vercel AI SDK), `engram/store` (the Store port, for a backend of one's own) and
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
for (const name of ['engram', 'engram/ai-sdk', 'engram/store', 'engram/testing']) entries[name] = Object.keys(await import(name)).sort();
process.stdout.write(JSON.stringify(entries));
`;

/** Imports `entry` with `ai` (and its providers) made unresolvable: prints what was refused, or "loaded". */
const WITHOUT_AI = (entry: string) => `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
  export async function resolve(specifier, context, next) {
    if (specifier === 'ai' || specifier.startsWith('@ai-sdk/')) throw new Error('refused ' + specifier);
    return next(specifier, context);
  }\`));
try {
  await import('${entry}');
  process.stdout.write('loaded');
} catch (error) {
  process.stdout.write(error.message);
}
`;

describe('the package entries', () => {
  it('export the library, the Store port with what a backend persists by, and the contract suite', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', PROBE], { cwd: ROOT });
    const entries = JSON.parse(stdout) as Record<string, string[]>;

    expect(entries.engram).toEqual(
      expect.arrayContaining(['createMemory', 'handleToolCall', 'openMemoryStore', 'openSqliteStore']),
    );
    expect(entries.engram).toEqual(expect.arrayContaining(['createApp', 'openApp', 'createTransfer']));
    expect(entries.engram).not.toContain('defaultDatabasePath');
    expect(entries.engram).toEqual(
      expect.arrayContaining(['anthropicToolResults', 'anthropicTools', 'isMemoryTool', 'openAiToolMessages']),
    );
    expect(entries['engram/ai-sdk']).toEqual(['aiSdkTools']);
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
        'describeOAuthContract',
        'describeSearchContract',
        'describeStoreContract',
      ]),
    );
  });

  it('load the AI SDK only for engram/ai-sdk, so the library works without it installed', async () => {
    const probe = (entry: string) =>
      promisify(execFile)(process.execPath, ['--input-type=module', '-e', WITHOUT_AI(entry)], { cwd: ROOT });
    expect((await probe('engram')).stdout).toBe('loaded');
    expect((await probe('engram/ai-sdk')).stdout).toBe('refused ai');
  });
});
