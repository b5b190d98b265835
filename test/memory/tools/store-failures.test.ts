/**
 * A store failure at the tool door (stdio, /mcp, /ws and library callers all dispatch
 * here): a full or read-only database file is a tool error with the store's code and its
 * message, never "internal error", and the failure is not reported as unexpected.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMemory } from '../../../src/memory/memory.js';
import { createToolHandler } from '../../../src/memory/tools/handler.js';
import { openSqliteStore, type SqliteStore } from '../../../src/storage/sqlite/index.js';
import { fillDisk, makeReadOnly } from '../../helpers/sqlite-faults.js';

const caller = { user: 'local', label: 'test' };

async function setup(fault: (store: SqliteStore) => void) {
  const folder = mkdtempSync(join(tmpdir(), 'engram-tool-store-'));
  const store = openSqliteStore({ path: join(folder, 'memory.db') });
  onTestFinished(async () => {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });
  const unexpected: unknown[] = [];
  const handler = createToolHandler(createMemory({ store }), { onUnexpectedError: (error) => unexpected.push(error) });
  await handler(caller, 'memory_write', { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' });
  fault(store);
  return { handler, unexpected };
}

describe('a store failure during a tool call', () => {
  it('on a full disk is a STORE_FULL tool error saying to free space', async () => {
    const { handler, unexpected } = await setup(fillDisk);

    const result = await handler(caller, 'memory_write', {
      name: 'topics/big',
      description: 'Big',
      new: 'x'.repeat(12_000),
    });

    expect(result).toEqual({
      isError: true,
      code: 'STORE_FULL',
      text: expect.stringMatching(/^The disk holding the memory's database .+ is full .+ Free some space on that disk/),
    });
    expect(unexpected).toEqual([]);
    expect(await handler(caller, 'memory_open', {})).toEqual({
      isError: false,
      text: 'topics/me (11 bytes): Who I am',
    });
  });

  it('on a read-only file is a STORE_READ_ONLY tool error saying who needs write access', async () => {
    const { handler, unexpected } = await setup(makeReadOnly);

    const result = await handler(caller, 'memory_drop', { name: 'topics/me' });

    expect(result).toEqual({
      isError: true,
      code: 'STORE_READ_ONLY',
      text: expect.stringMatching(/cannot be written: .+ Give the user running Engram write access/),
    });
    expect(unexpected).toEqual([]);
  });
});
