/**
 * Fuzzing the tool handler: random sequences of tool calls (see tool-calls.ts) through
 * handleToolCall over the in-process store, checked after every call as tool-call-runs.ts
 * says. Over a SQLite file: tools-sqlite.fuzz.test.ts.
 */

import fc from 'fast-check';
import { describe, it } from 'vitest';
import { createMemory, openMemoryStore } from '../../src/index.js';
import { calls, POLICY, runCalls } from './tool-call-runs.js';

describe('tool calls at random', () => {
  it('over the in-process store', async () => {
    await fc.assert(
      fc.asyncProperty(calls, async (sequence) => {
        await runCalls(createMemory({ store: openMemoryStore(), policy: POLICY }), sequence);
      }),
      { numRuns: 150 },
    );
  });
});
