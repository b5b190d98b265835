/**
 * Fuzzing the tool handler: random sequences of tool calls (see tool-calls.ts) through
 * handleToolCall, over the in-process store and over a SQLite file. The handler never
 * throws; every failure is an isError result with a message and a code, never an
 * internal error; a refused call changes nothing; and after every call each entry's
 * size is the UTF-8 length of its body and the index equals the entries, by name.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createMemory,
  handleToolCall,
  type Memory,
  openMemoryStore,
  openSqliteStore,
  type Store,
} from '../../src/index.js';
import { indexLine } from '../../src/memory/model/format.js';
import { DEFAULT_POLICY } from '../../src/memory/model/policy.js';
import { utf8Bytes } from '../../src/memory/model/text.js';
import { type ToolCall, toolCall } from './tool-calls.js';

const USER = 'local';
/** Small enough that a few calls near the entry cap reach it. */
const POLICY = { userCap: 40_000 };
const calls = fc.array(toolCall, { minLength: 1, maxLength: 25 });

async function snapshot(memory: Memory) {
  const index = await memory.store.index(USER);
  const entries = await memory.store.get(
    USER,
    index.map((row) => row.name),
  );
  return { index, entries };
}

/** What must hold after every call, refused or not. */
function checkInvariants({ index, entries }: Awaited<ReturnType<typeof snapshot>>): void {
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : 1));
  expect(index).toEqual(sorted.map(({ name, size, description }) => ({ name, size, description })));
  expect(new Set(index.map((row) => row.name)).size).toBe(index.length);
  let total = 0;
  for (const entry of entries) {
    expect(entry.size, `size of ${entry.name}`).toBe(utf8Bytes(entry.body));
    expect(entry.size).toBeLessThanOrEqual(DEFAULT_POLICY.entryCap);
    expect(entry.body, 'line endings are normalised').not.toMatch(/\r/);
    expect(entry.description, 'a description is one trimmed line').toMatch(/^\S(.*\S)?$/su);
    expect(entry.description).not.toMatch(/\s{2}|[\n\r]/);
    total += entry.size;
  }
  expect(total).toBeLessThanOrEqual(POLICY.userCap);
}

async function runCalls(memory: Memory, sequence: readonly ToolCall[]): Promise<void> {
  let before = await snapshot(memory);
  for (const { tool, args } of sequence) {
    const result = await handleToolCall(memory, tool, args).catch((error: unknown) => {
      throw new Error(`handleToolCall threw on ${tool}: ${String(error)}`);
    });
    const after = await snapshot(memory);
    expect(typeof result.text).toBe('string');
    expect(result.text.trim(), 'a result always says something').not.toBe('');
    expect(typeof result.isError).toBe('boolean');
    if (result.isError) {
      expect(result.code, result.text).toMatch(/^[A-Z_]+$/);
      expect(result.code, `an internal error: ${result.text}`).not.toBe('INTERNAL');
      if (tool !== 'memory_open') expect(after, `refused ${tool} changed the memory: ${result.text}`).toEqual(before);
    } else if (tool === 'memory_write') {
      expect(after.index.map(indexLine), 'the write returns the index line').toContain(result.text);
    }
    if (tool === 'memory_open') expect(after).toEqual(before);
    checkInvariants(after);
    before = after;
  }
}

describe('tool calls at random', () => {
  it('over the in-process store', async () => {
    await fc.assert(
      fc.asyncProperty(calls, async (sequence) => {
        await runCalls(createMemory({ store: openMemoryStore(), policy: POLICY }), sequence);
      }),
      { numRuns: 150 },
    );
  });

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
