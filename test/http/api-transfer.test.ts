/**
 * `/api/export` and `/api/import` over HTTP: export, wipe, import gives back the same
 * memory; merge reports conflicts and overwrites nothing; replace, overwrite and dry run;
 * a malformed, invalid or oversized document changes nothing; and an import may be far
 * larger than a tool call. (Expect: 100-continue, which the server answers: api-socket.test.ts.)
 */

import { describe, expect, it } from 'vitest';
import { createTransfer } from '../../src/transfer/transfer.js';
import { CALLER, expectEngramError, newMemory } from '../memory/fixtures.js';
import { api, apiError, contents, LOCAL } from './api-client.js';
import { startTestApp, type TestApp } from './in-process.js';

async function seeded(options: Parameters<typeof startTestApp>[0] = {}): Promise<TestApp> {
  const server = startTestApp(options);
  await server.memory.write(LOCAL, { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' });
  await server.memory.write(LOCAL, { name: 'people/bob', description: 'Bob', new: 'Colleague.' });
  await server.memory.write(LOCAL, { name: 'areas/old', description: 'Old', new: 'Stale.' });
  await server.memory.drop(LOCAL, 'areas/old');
  return server;
}

function document(entries: { name: string; description: string; body: string }[]) {
  return { format: 'engram-export', version: 1, entries };
}

const importPath = (query = '') => `/api/import${query}`;

describe('GET /api/export', () => {
  it('answers the export document of live entries, as a download', async () => {
    const server = await seeded();
    const response = await api(server, 'GET', '/api/export');
    expect(response.status).toBe(200);
    expect(response.headers['content-disposition']).toBe('attachment; filename="engram-export.json"');
    expect(response.json).toMatchObject({ format: 'engram-export', version: 1, exportedAt: expect.any(String) });
    expect(response.json.trash).toBeUndefined();
    expect(response.json.entries).toEqual([
      expect.objectContaining({ name: 'people/bob', description: 'Bob', body: 'Colleague.\n' }),
      expect.objectContaining({ name: 'topics/me', description: 'Who I am', body: 'Name: Ada.\n' }),
    ]);
    expect(response.json.entries[0].revisions).toBeUndefined();
  });

  it('with ?history=1, adds every revision and the trash', async () => {
    const server = await seeded();
    const { json } = await api(server, 'GET', '/api/export?history=1');
    expect(json.entries[1].revisions).toEqual([expect.objectContaining({ revision: 1, operation: 'create' })]);
    expect(json.trash).toEqual([expect.objectContaining({ name: 'areas/old', droppedBy: 'test' })]);
  });

  it.each([
    ['?history=yes', '?history=yes is not understood: use ?history=1, or leave it out.'],
    ['?withHistory=1', '?withHistory is not a parameter of GET /api/export: it takes ?history.'],
    ['?history=1&history=0', '?history is given more than once; give it once.'],
  ])('refuses %s with 400', async (query, message) => {
    const server = await seeded();
    const response = await api(server, 'GET', `/api/export${query}`);
    expect(response.status).toBe(400);
    expect(response.json).toEqual(apiError('INVALID_ARGUMENT', message));
  });
});

describe('POST /api/import', () => {
  it('export, wipe, import gives back the same memory, each entry an import revision by the API', async () => {
    const server = await seeded();
    const before = await contents(server.memory);
    const exported = (await api(server, 'GET', '/api/export')).body;
    await server.transfer.wipe(LOCAL);
    expect(await contents(server.memory)).toEqual([]);
    const response = await api(server, 'POST', importPath(), { body: exported });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      created: ['people/bob', 'topics/me'],
      updated: [],
      unchanged: [],
      conflicts: [],
      dropped: [],
      skipped: [],
      dryRun: false,
    });
    expect(await contents(server.memory)).toEqual(before);
    expect((await server.memory.recovery.history(LOCAL, 'topics/me')).at(-1)).toMatchObject({
      operation: 'import',
      actor: 'api',
    });
  });

  it('merge keeps what exists, adds what is new, and reports conflicts without overwriting them', async () => {
    const server = await seeded();
    const incoming = document([
      { name: 'topics/me', description: 'Who I am', body: 'Name: Eve.\n' },
      { name: 'people/bob', description: 'Bob', body: 'Colleague.\n' },
      { name: 'people/carol', description: 'Carol', body: 'Friend.\n' },
    ]);
    const response = await api(server, 'POST', importPath('?mode=merge'), { body: incoming });
    expect(response.json).toEqual({
      created: ['people/carol'],
      updated: [],
      unchanged: ['people/bob'],
      conflicts: ['topics/me'],
      dropped: [],
      skipped: [],
      dryRun: false,
    });
    const [me] = (await server.memory.open(LOCAL, ['topics/me'])).found;
    expect(me?.body).toBe('Name: Ada.\n');
  });

  it('merge with ?overwrite=1 replaces the conflicting entries', async () => {
    const server = await seeded();
    const incoming = document([{ name: 'topics/me', description: 'Who I am', body: 'Name: Eve.\n' }]);
    const response = await api(server, 'POST', importPath('?overwrite=1'), { body: incoming });
    expect(response.json).toMatchObject({ updated: ['topics/me'], conflicts: [] });
    const [me] = (await server.memory.open(LOCAL, ['topics/me'])).found;
    expect(me?.body).toBe('Name: Eve.\n');
  });

  it('replace makes the memory equal to the document, dropping the rest to the trash', async () => {
    const server = await seeded();
    const incoming = document([{ name: 'people/carol', description: 'Carol', body: 'Friend.\n' }]);
    const response = await api(server, 'POST', importPath('?mode=replace'), { body: incoming });
    expect(response.json).toMatchObject({ created: ['people/carol'], dropped: ['people/bob', 'topics/me'] });
    expect(await contents(server.memory)).toEqual([{ name: 'people/carol', description: 'Carol', body: 'Friend.\n' }]);
    expect((await server.memory.recovery.trash(LOCAL)).map((item) => item.name).sort()).toEqual([
      'areas/old',
      'people/bob',
      'topics/me',
    ]);
  });

  it('?dryRun=1 reports what would happen and changes nothing', async () => {
    const server = await seeded();
    const before = await contents(server.memory);
    const incoming = document([{ name: 'people/carol', description: 'Carol', body: 'Friend.\n' }]);
    const response = await api(server, 'POST', importPath('?mode=replace&dryRun=1'), { body: incoming });
    expect(response.json).toEqual({
      created: ['people/carol'],
      updated: [],
      unchanged: [],
      conflicts: [],
      dropped: ['people/bob', 'topics/me'],
      skipped: [],
      dryRun: true,
    });
    expect(await contents(server.memory)).toEqual(before);
  });

  const valid = JSON.stringify(document([{ name: 'people/carol', description: 'Carol', body: 'Friend.\n' }]));

  it.each([
    [
      'a truncated document',
      importPath(),
      valid.slice(0, -20),
      /^the import file is not valid JSON \(.+\); nothing was imported\.$/,
    ],
    [
      'a document of another kind',
      importPath(),
      JSON.stringify({ entries: [] }),
      /^the import file is not an Engram export: at format: .+; nothing was imported\.$/,
    ],
    ['an empty body', importPath(), '', /^the import file is not valid JSON/],
    [
      'an unknown mode',
      importPath('?mode=swap'),
      valid,
      '?mode=swap is not understood: use ?mode=merge or ?mode=replace.',
    ],
    [
      'a misspelt dry run',
      importPath('?dry-run=1'),
      valid,
      '?dry-run is not a parameter of POST /api/import: it takes ?mode, ?overwrite, ?dryRun, ?allGroups, ?from, ?split.',
    ],
  ])('refuses %s with 400, changing nothing', async (_, path, body, message) => {
    const server = await seeded();
    const before = await contents(server.memory);
    const response = await api(server, 'POST', path, { body });
    expect(response.status).toBe(400);
    expect(response.json).toEqual(apiError('INVALID_ARGUMENT', message));
    expect(await contents(server.memory)).toEqual(before);
  });

  it("refuses a document with an invalid name with 400, in core's words on the document, changing nothing", async () => {
    const server = await seeded();
    const before = await contents(server.memory);
    const text = JSON.stringify(document([{ name: 'People/John Smith', description: 'John', body: 'x' }]));
    const response = await api(server, 'POST', importPath(), { body: text });
    expect(response.status).toBe(400);
    const core = newMemory();
    const invalid = await expectEngramError(
      () => createTransfer(core).import(CALLER, createTransfer(core).parse(text), { mode: 'merge' }),
      'INVALID_ARGUMENT',
    );
    expect(response.json).toEqual(apiError('INVALID_ARGUMENT', invalid.message));
    expect(await contents(server.memory)).toEqual(before);
  });

  it('refuses a document over the user cap with 413, changing nothing', async () => {
    const server = await seeded();
    const before = await contents(server.memory);
    const entries = Array.from({ length: 300 }, (_, index) => ({
      name: `topics/n${index}`,
      description: 'Filler',
      body: 'x'.repeat(15_000),
    }));
    const response = await api(server, 'POST', importPath(), { body: document(entries) });
    expect(response.status).toBe(413);
    expect(response.json.error.code).toBe('TOO_LARGE');
    expect(await contents(server.memory)).toEqual(before);
  });

  it.each([
    ['declared by Content-Length', {}],
    ['sent chunked', { 'Transfer-Encoding': 'chunked' }],
  ])('refuses a body over the import cap (%s) with 413, changing nothing', async (_, headers) => {
    const server = await seeded({ maxImportBytes: 1000 });
    const before = await contents(server.memory);
    const entries = [{ name: 'topics/big', description: 'Big', body: 'x'.repeat(2000) }];
    const response = await api(server, 'POST', importPath(), { body: document(entries), headers });
    expect(response.status).toBe(413);
    expect(response.headers.connection).toBe('close');
    expect(response.json).toEqual(
      apiError('TOO_LARGE', 'Request body too large: /api/import takes at most 1,000 bytes; nothing was imported.'),
    );
    expect(await contents(server.memory)).toEqual(before);
  });

  /** About 2.2 MB: over the 1 MiB a tool call may send, within a user's 4 MiB. */
  const large = document(
    Array.from({ length: 150 }, (_, index) => ({
      name: `topics/n${index}`,
      description: 'Filler',
      body: 'x'.repeat(15_000),
    })),
  );

  it('takes a document far larger than the 1 MiB cap of /mcp', async () => {
    const server = startTestApp();
    const response = await api(server, 'POST', importPath(), { body: large });
    expect(response.status).toBe(200);
    expect(response.json.created).toHaveLength(150);
  });
});

describe('POST /api/wipe', () => {
  it('drops every live entry to the trash when the body confirms it, recorded as drops', async () => {
    const server = await seeded();
    const response = await api(server, 'POST', '/api/wipe', { body: { confirm: 'wipe' } });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ dropped: 2 });
    expect(await contents(server.memory)).toEqual([]);
    expect((await server.memory.recovery.trash(LOCAL)).map((item) => item.name).sort()).toEqual([
      'areas/old',
      'people/bob',
      'topics/me',
    ]);
  });

  it('says the entries were purged for good when the trash keeps nothing (trashRetentionDays 0)', async () => {
    const server = await seeded({ policy: { trashRetentionDays: 0 } });
    const response = await api(server, 'POST', '/api/wipe', { body: { confirm: 'wipe' } });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ dropped: 2, purged: true });
    expect(await contents(server.memory)).toEqual([]);
    expect(await server.memory.recovery.trash(LOCAL)).toEqual([]);
  });

  it('refuses without the confirmation in words, dropping nothing', async () => {
    const server = await seeded();
    const before = await contents(server.memory);
    for (const body of [{}, { confirm: 'yes' }, { confirm: 'wipe', also: 1 }, 'wipe']) {
      const response = await api(server, 'POST', '/api/wipe', { body });
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('INVALID_ARGUMENT');
    }
    expect(await contents(server.memory)).toEqual(before);
  });
});
