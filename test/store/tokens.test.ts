/**
 * The TokenStore contract, run against every backend (`store.tokens`): add, list, find
 * by hash, touch, revoke; then what only SQLite adds — tokens survive a reopen, and a
 * revoke through one connection is seen by another at once.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Store, TokenRecord } from '../../src/core/store.js';
import { openMemoryStore } from '../../src/store/memory/index.js';
import { openSqliteStore } from '../../src/store/sqlite/index.js';

const token = (id: string, overrides: Partial<TokenRecord> = {}): TokenRecord => ({
  id,
  user: 'ada',
  label: `label ${id}`,
  readOnly: false,
  hash: `${id}`.padEnd(64, '0'),
  created: 1_000,
  lastUsed: undefined,
  ...overrides,
});

function databasePath(): string {
  const folder = mkdtempSync(join(tmpdir(), 'engram-tokens-'));
  onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
  return join(folder, 'memory.db');
}

const BACKENDS: [string, () => Store][] = [
  ['memory', () => openMemoryStore()],
  ['sqlite', () => openSqliteStore({ path: databasePath() })],
];

describe.each(BACKENDS)('%s store: tokens', (_, open) => {
  function opened(): Store {
    const store = open();
    onTestFinished(() => store.close());
    return store;
  }

  it('starts with no tokens', async () => {
    expect(await opened().tokens.list()).toEqual([]);
  });

  it('keeps every field of an added token', async () => {
    const { tokens } = opened();
    const readOnly = token('b1', { user: 'bob', readOnly: true, created: 2_000, lastUsed: 2_500 });
    await tokens.add(token('a1'));
    await tokens.add(readOnly);
    expect(await tokens.list()).toEqual([token('a1'), readOnly]);
    expect(await tokens.findByHash(readOnly.hash)).toEqual(readOnly);
    expect(await tokens.findByHash('f'.repeat(64))).toBeUndefined();
  });

  it('refuses a second token with the same id, keeping the first', async () => {
    const { tokens } = opened();
    await tokens.add(token('a1'));
    await expect(tokens.add(token('a1', { label: 'other', hash: 'e'.repeat(64) }))).rejects.toThrow();
    expect(await tokens.list()).toEqual([token('a1')]);
  });

  it('records when a token was last used', async () => {
    const { tokens } = opened();
    await tokens.add(token('a1'));
    await tokens.touch('a1', 5_000);
    await tokens.touch('missing', 6_000);
    expect(await tokens.findByHash(token('a1').hash)).toEqual(token('a1', { lastUsed: 5_000 }));
  });

  it('revokes by id: the token is no longer found or listed; an unknown id is false', async () => {
    const { tokens } = opened();
    await tokens.add(token('a1'));
    await tokens.add(token('b1'));
    expect(await tokens.revoke('a1')).toBe(true);
    expect(await tokens.revoke('a1')).toBe(false);
    expect(await tokens.revoke('zz')).toBe(false);
    expect(await tokens.findByHash(token('a1').hash)).toBeUndefined();
    expect(await tokens.list()).toEqual([token('b1')]);
  });
});

describe('sqlite store: tokens on disk', () => {
  it('survive a reopen, and a revoke through one connection is seen by another at once', async () => {
    const path = databasePath();
    const first = openSqliteStore({ path });
    await first.tokens.add(token('a1'));
    await first.close();

    const server = openSqliteStore({ path });
    const cli = openSqliteStore({ path });
    onTestFinished(async () => {
      await server.close();
      await cli.close();
    });
    expect(await server.tokens.findByHash(token('a1').hash)).toEqual(token('a1'));
    expect(await cli.tokens.revoke('a1')).toBe(true);
    expect(await server.tokens.findByHash(token('a1').hash)).toBeUndefined();
  });
});
