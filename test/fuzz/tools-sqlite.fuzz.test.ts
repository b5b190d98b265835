/**
 * Fuzzing the tool handler over a SQLite file: random sequences of tool calls (see
 * tool-calls.ts) through handleToolCall, checked after every call as tool-call-runs.ts
 * says, each sequence on a new database file; and the lone surrogate this fuzzer found.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemory, handleToolCall, openSqliteStore, type Store } from '../../src/index.js';
import { calls, POLICY, runCalls, snapshot } from './tool-call-runs.js';

describe('tool calls at random', () => {
  const folder = mkdtempSync(join(tmpdir(), 'engram-fuzz-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  let databases = 0;

  it('stores a lone surrogate as U+FFFD, so SQLite keeps the bytes the size counts (found by this fuzzer)', async () => {
    const store = openSqliteStore({ path: join(folder, 'surrogate.db') });
    try {
      const memory = createMemory({ store });
      const args = { name: 'topics/a', description: 'half \ud800 pair', new: 'x\udc00y' };
      expect(await handleToolCall(memory, 'memory_write', args)).toEqual({
        text: 'topics/a (6 bytes): half \ufffd pair',
        isError: false,
      });
      const { entries } = await snapshot(memory);
      expect(entries).toEqual([
        expect.objectContaining({ body: 'x\ufffdy\n', size: 6, description: 'half \ufffd pair' }),
      ]);
    } finally {
      await store.close();
    }
  });

  it('over a SQLite file', async () => {
    await fc.assert(
      fc.asyncProperty(calls, async (sequence) => {
        const store: Store = openSqliteStore({ path: join(folder, `memory-${databases++}.db`) });
        try {
          await runCalls(createMemory({ store, policy: POLICY }), sequence);
        } finally {
          await store.close();
        }
      }),
      { numRuns: 40 },
    );
  }, 60_000);
});
