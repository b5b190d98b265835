/**
 * The composition root: every service over one store, on one clock, closed together; and
 * openApp opening the database a config names.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createApp, openApp } from '../../src/app.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';
import { TEST_PASSWORD_COST } from '../helpers/password-cost.js';

const ADA = { user: 'ada', label: 'test' };

describe('createApp', () => {
  it('wires the memory and the sign-in services over the one store given, on the clock given', async () => {
    const store = openMemoryStore();
    const app = createApp({ store, now: () => 5_000, access: { passwordCost: TEST_PASSWORD_COST } });
    const { entry } = await app.memory.write(ADA, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    expect(entry.updated).toBe(5_000);
    const { token } = await app.access.create({ user: 'ada', label: 'phone' });
    expect((await store.tokens.list()).map((record) => [record.user, record.created])).toEqual([['ada', 5_000]]);
    expect(await app.access.authenticate(token)).toMatchObject({ user: 'ada', label: 'phone' });
    await app.accounts.create('ada', 'correct horse battery staple');
    expect((await store.accounts.get('ada'))?.created).toBe(5_000);
  });

  it('keeps the policy given over the defaults, and knows the clients the config lists', async () => {
    const client = {
      id: 'listed',
      name: 'Listed',
      redirectUris: ['https://listed.example/callback'],
      kind: 'configured',
    } as const;
    const app = createApp({ store: openMemoryStore(), policy: { historyLimit: 3 }, access: { clients: [client] } });
    expect(app.memory.policy.historyLimit).toBe(3);
    expect(await app.oauth.clients().isKnown('listed')).toBe(true);
    expect(await app.oauth.clients().isKnown('unlisted')).toBe(false);
  });
});

describe('openApp', () => {
  it('opens the SQLite file a config names, and close() closes it', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'engram-app-'));
    onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
    const path = join(folder, 'memory.db');
    const first = await openApp({ backend: { kind: 'sqlite', path } });
    await first.memory.write(ADA, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    await first.close();
    const again = await openApp({ backend: { kind: 'sqlite', path } });
    onTestFinished(() => again.close());
    expect((await again.memory.index(ADA)).map((row) => row.name)).toEqual(['topics/tea']);
  });
});
