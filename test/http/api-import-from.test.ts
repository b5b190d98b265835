/**
 * `POST /api/import?from=KIND` over HTTP: each kind's files, sent as text, come in through
 * the import the CLI runs — a dry run says item by item what would be created, appended or
 * left out and why and changes nothing; the import is one transaction recorded as
 * import:KIND — and every refusal (bad JSONL, an item over the cap, an unknown group or
 * kind, a body of the wrong shape, a binary file, a body over the cap) imports nothing and
 * says how to call again, with its data.
 */

import { describe, expect, it } from 'vitest';
import { BRIDGE_KINDS } from '../../src/transfer/bridges/index.js';
import { CLAUDE_CODE_FOLDER } from '../transfer/bridges/fixtures.js';
import { api, apiError, contents, LOCAL } from './api-client.js';
import { startTestApp, type TestApp } from './in-process.js';

type Files = Record<string, string>;

function body(files: Files, options?: Record<string, unknown>) {
  return {
    files: Object.entries(files).map(([path, text]) => ({ path, text })),
    ...(options === undefined ? {} : { options }),
  };
}

function post(server: TestApp, query: string, payload: unknown) {
  return api(server, 'POST', `/api/import?${query}`, { body: payload });
}

const entity = (name: string, entityType: string, observations: string[]) =>
  JSON.stringify({ type: 'entity', name, entityType, observations });

const JSONL = `${[
  entity('Ada Lovelace', 'person', ['Wrote the first program']),
  entity('Engram', 'project', ['TypeScript, Node 20']),
  JSON.stringify({ type: 'relation', from: 'Ada Lovelace', to: 'Engram', relationType: 'advises' }),
].join('\n')}\n`;

async function seeded(): Promise<TestApp> {
  const server = startTestApp();
  await server.memory.write(LOCAL, { name: 'areas/engram', description: 'The memory server', new: 'Three tools.' });
  return server;
}

async function actors(server: TestApp, name: string) {
  return (await server.memory.recovery.history(LOCAL, name)).map((revision) => revision.actor);
}

describe('POST /api/import?from=server-memory', () => {
  it('?dryRun=1 says what would be created and appended, and why, changing nothing', async () => {
    const server = await seeded();
    const before = await contents(server.memory);
    const response = await post(server, 'from=server-memory&dryRun=1', body({ 'memory.jsonl': JSONL }));
    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      kind: 'server-memory',
      dryRun: true,
      items: [
        {
          source: 'line 1: entity "Ada Lovelace" (person)',
          names: [{ name: 'people/ada-lovelace', action: 'create' }],
          notes: ['"Ada Lovelace" is not a valid slug: made ada-lovelace'],
        },
        { source: 'line 2: entity "Engram" (project)', names: [{ name: 'areas/engram', action: 'append' }], notes: [] },
      ],
      tooLarge: [],
      report: expect.objectContaining({
        created: ['people/ada-lovelace'],
        appended: ['areas/engram'],
        dryRun: true,
      }),
    });
    expect(await contents(server.memory)).toEqual(before);
    expect(await actors(server, 'areas/engram')).toEqual(['test']);
  });

  it('imports in one transaction as import:server-memory; again, memory holds it all already', async () => {
    const server = await seeded();
    const done = await post(server, 'from=server-memory', body({ 'memory.jsonl': JSONL }));
    expect(done.status).toBe(200);
    expect(done.json.dryRun).toBe(false);
    expect(await contents(server.memory)).toEqual([
      { name: 'areas/engram', description: 'The memory server', body: 'Three tools.\nTypeScript, Node 20\n' },
      {
        name: 'people/ada-lovelace',
        description: 'Ada Lovelace (person)',
        body: 'Wrote the first program\n→ advises Engram\n',
      },
    ]);
    expect(await actors(server, 'areas/engram')).toEqual(['test', 'import:server-memory']);
    expect(await actors(server, 'people/ada-lovelace')).toEqual(['import:server-memory']);
    const again = await post(server, 'from=server-memory', body({ 'memory.jsonl': JSONL }));
    expect(again.json.items.map((item: { hint?: string }) => item.hint)).toEqual([
      'memory holds this already',
      'memory holds this already',
    ]);
  });

  it('maps entity types to groups with options.map, and refuses a group this memory lacks with its data', async () => {
    const server = await seeded();
    const file = { 'memory.jsonl': `${entity('Tea', 'drink', ['Green'])}\n` };
    const mapped = await post(server, 'from=server-memory&dryRun=1', body(file, { map: { drink: 'people' } }));
    expect(mapped.json.items[0].names).toEqual([{ name: 'people/tea', action: 'create' }]);
    const refused = await post(server, 'from=server-memory', body(file, { map: { drink: 'drinks' } }));
    expect(refused.status).toBe(400);
    expect(refused.json.error).toEqual({
      code: 'INVALID_ARGUMENT',
      message:
        'options.map {"drink":"drinks"}: "drinks" is not a group of this memory (groups: areas, people, topics); ' +
        'nothing was imported.',
      detail: { reason: 'import-map-group', type: 'drink', group: 'drinks', groups: ['areas', 'people', 'topics'] },
    });
  });

  it('refuses a file cut short, saying which line, importing nothing', async () => {
    const server = await seeded();
    const before = await contents(server.memory);
    const cut = `${entity('a', 'x', [])}\n{"type":"ent`;
    const refused = await post(server, 'from=server-memory', body({ 'memory.jsonl': cut }));
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual(
      apiError(
        'INVALID_ARGUMENT',
        /^memory\.jsonl line 2 is not JSON \(.*\): the file may be cut short; nothing was imported\.$/,
      ),
    );
    expect(await contents(server.memory)).toEqual(before);
  });

  it('refuses an entity over the entry cap without ?split=1, with its data; the dry run shows it; ?split=1 splits it', async () => {
    const server = startTestApp();
    const observations = Array.from({ length: 400 }, (_, i) => `observation ${i} ${'x'.repeat(40)}`);
    const file = { 'memory.jsonl': `${entity('small', 'topic', ['fits'])}\n${entity('big', 'topic', observations)}\n` };
    const refused = await post(server, 'from=server-memory', body(file));
    expect(refused.status).toBe(413);
    expect(refused.json.error).toEqual({
      code: 'TOO_LARGE',
      message:
        '1 item(s) are over the entry cap of 16,384 bytes: line 2: entity "big" (topic). ' +
        'Send ?split=1 to split them into -2, -3 entries (with ?dryRun=1 to see how); nothing was imported.',
      detail: { reason: 'import-too-large', sources: ['line 2: entity "big" (topic)'], count: 1, cap: 16384 },
    });
    expect(await contents(server.memory)).toEqual([]);
    const dry = await post(server, 'from=server-memory&dryRun=1', body(file));
    expect(dry.json.tooLarge).toEqual(['line 2: entity "big" (topic)']);
    expect(dry.json.items[1]).toEqual({
      source: 'line 2: entity "big" (topic)',
      names: [],
      notes: ['22,690 bytes is over the entry cap of 16,384 bytes'],
      problem: 'too-large',
      hint: 'send ?split=1 to split it into -2, -3 entries, or shorten it in the source',
    });
    const split = await post(server, 'from=server-memory&split=1', body(file));
    expect(split.json.items[1].names).toEqual([
      { name: 'topics/big', action: 'create' },
      { name: 'topics/big-2', action: 'create' },
    ]);
    expect((await contents(server.memory)).map((entry) => entry.name)).toEqual([
      'topics/big',
      'topics/big-2',
      'topics/small',
    ]);
  });
});

describe('POST /api/import?from= each folder and text kind', () => {
  it('markdown: a differing entry is a conflict and another group is skipped, each with how to import it', async () => {
    const server = startTestApp();
    await server.memory.write(LOCAL, { name: 'topics/me', description: 'Me', new: 'Hello.' });
    const folder = {
      'archive/old.md': '---\ndescription: "Old"\n---\nOld.\n',
      'topics/me.md': '---\ndescription: "Me"\n---\nSomething else.\n',
    };
    const done = await post(server, 'from=markdown', body(folder));
    expect(done.json.items).toEqual([
      {
        source: 'archive/old.md',
        names: [{ name: 'archive/old', action: 'skip' }],
        notes: [],
        hint: 'its group is not one the model can write (?allGroups=1 imports it)',
      },
      {
        source: 'topics/me.md',
        names: [{ name: 'topics/me', action: 'conflict' }],
        notes: [],
        hint: 'an entry of this name differs: left as it is (?overwrite=1 replaces it)',
      },
    ]);
    expect(await contents(server.memory)).toEqual([{ name: 'topics/me', description: 'Me', body: 'Hello.\n' }]);
    const overwritten = await post(server, 'from=markdown&overwrite=1&allGroups=1', body(folder));
    expect(overwritten.json.report).toMatchObject({ created: ['archive/old'], updated: ['topics/me'] });
    expect(await actors(server, 'topics/me')).toEqual(['test', 'import:markdown']);
  });

  it('anthropic-memory: each file of the /memories folder an entry, as import:anthropic-memory', async () => {
    const server = startTestApp();
    const done = await post(
      server,
      'from=anthropic-memory',
      body({ 'notes.md': '# Notes\nLikes tea.\n', 'projects/engram.txt': 'Memory server.\n' }),
    );
    expect(done.status).toBe(200);
    const names = done.json.items.flatMap((item: { names: { name: string }[] }) => item.names.map((n) => n.name));
    expect((await contents(server.memory)).map((entry) => entry.name)).toEqual([...names].sort());
    expect(await actors(server, names[0])).toEqual(['import:anthropic-memory']);
  });

  it('claude-code: MEMORY.md and its topic files, MEMORY.md under options.name; a missing link reported', async () => {
    const server = startTestApp();
    const done = await post(server, 'from=claude-code', body(CLAUDE_CODE_FOLDER, { name: 'areas/claude' }));
    expect(done.status).toBe(200);
    expect((await contents(server.memory)).map((entry) => entry.name)).toEqual([
      'areas/claude',
      'areas/deploy',
      'topics/debugging',
      'topics/user_role',
    ]);
    expect(done.json.items).toContainEqual({
      source: 'gone.md',
      names: [],
      notes: ['linked from MEMORY.md but not in the folder'],
      problem: 'not-an-entry',
    });
    expect(await actors(server, 'areas/claude')).toEqual(['import:claude-code']);
  });

  it('chatgpt: the pasted list into the entry named, a name that is not valid made one and said so', async () => {
    const server = startTestApp();
    const text = '- Lives in Lisbon.\n- Prefers tea.\n- Lives in Lisbon.\n';
    const done = await post(server, 'from=chatgpt', body({ pasted: text }, { name: 'people/Me Myself' }));
    expect(done.json.items).toEqual([
      {
        source: '2 memories',
        names: [{ name: 'people/me-myself', action: 'create' }],
        notes: ['"Me Myself" is not a valid slug: made me-myself'],
      },
      { source: 'line 3', names: [], notes: ['the same memory as line 1: kept once'], problem: 'duplicate' },
    ]);
    expect(await contents(server.memory)).toEqual([
      {
        name: 'people/me-myself',
        description: 'What ChatGPT remembered about the user (2 memories)',
        body: 'Lives in Lisbon.\nPrefers tea.\n',
      },
    ]);
    expect(await actors(server, 'people/me-myself')).toEqual(['import:chatgpt']);
  });
});

describe('POST /api/import?from=llama-webui', () => {
  it("the WebUI's memory export, each entry kept with its name and description, as import:llama-webui", async () => {
    const server = startTestApp();
    const exported = {
      entries: [{ name: 'people/ada', description: 'Ada Lovelace', body: 'Wrote the first program.\n', updated: 1 }],
    };
    const done = await post(server, 'from=llama-webui', body({ 'llama_memory.json': JSON.stringify(exported) }));
    expect(done.status).toBe(200);
    expect(await contents(server.memory)).toEqual([
      { name: 'people/ada', description: 'Ada Lovelace', body: 'Wrote the first program.\n' },
    ]);
    expect(await actors(server, 'people/ada')).toEqual(['import:llama-webui']);
  });
});

describe('POST /api/import?from=: refusals import nothing', () => {
  it.each([
    [
      'from=mem0',
      body({ a: 'x' }),
      `?from=mem0 is not understood: use ${BRIDGE_KINDS.map((kind) => `?from=${kind}`).join(', ')}, ` +
        'or leave it out to import an Engram export document; nothing was imported.',
    ],
    ['split=1', body({ a: 'x' }), '?split=1 goes with ?from=KIND; nothing was imported.'],
    ['from=chatgpt', { files: [] }, /^the body needs "files", a list of at least one file: send /],
    ['from=chatgpt', [], /^the body must be a JSON object: send /],
    ['from=chatgpt', { files: [{ path: 'a', text: 'x' }], extra: 1 }, /^the body has "extra", which is not one of/],
    ['from=chatgpt', body({ a: 'x', b: 'y' }), /^\?from=chatgpt reads one file, and the body has 2: send/],
    [
      'from=markdown',
      { files: Array.from({ length: 20_001 }, (_, i) => ({ path: `${i}.md`, text: '' })) },
      /^the body has 20,001 files, more than the 20,000 one import reads: send /,
    ],
    ['from=markdown', body({ '../up.md': 'x' }), /^files\[0\]\.path "\.\.\/up\.md" must be relative/],
    ['from=markdown', { files: [{ path: 'a.md', text: 1 }] }, /^files\[0\]\.text must be the file's text, a string/],
    ['from=markdown', body({ 'a.md': 'x' }, { name: 'topics/a' }), /^options\.name goes with \?from=chatgpt or/],
    ['from=server-memory', body({ m: 'x' }, { map: { a: 1 } }), /^options\.map must map entity types to groups/],
    ['from=chatgpt', body({ m: 'x' }, { name: ' ' }), /^options\.name must be the entry name/],
    [
      'from=chatgpt',
      body({ 'a.txt': 'Likes\u0000tea' }),
      'a.txt is not UTF-8 text (a binary file?); nothing was imported.',
    ],
  ])('?%s with a wrong body: 400', async (query, payload, message) => {
    const server = startTestApp();
    const response = await post(server, query, payload);
    expect(response.status).toBe(400);
    expect(response.json).toEqual(apiError('INVALID_ARGUMENT', message));
    expect(await contents(server.memory)).toEqual([]);
  });

  it('refuses an Engram export sent as a llama.cpp WebUI export, saying to send it without ?from=: 400', async () => {
    const server = startTestApp();
    const engramExport = JSON.stringify({ format: 'engram-export', version: 1, entries: [] });
    const response = await post(server, 'from=llama-webui', body({ 'memory.json': engramExport }));
    expect(response.status).toBe(400);
    expect(response.json).toEqual({
      error: {
        code: 'INVALID_ARGUMENT',
        message: 'memory.json is an Engram export: send it to POST /api/import, without ?from=; nothing was imported.',
        detail: { reason: 'import-engram-export', path: 'memory.json' },
      },
    });
    expect(await contents(server.memory)).toEqual([]);
  });

  it('refuses a body over the import cap with 413, and a read-only token with 403', async () => {
    const small = startTestApp({ maxImportBytes: 1000 });
    const big = await post(small, 'from=chatgpt', body({ pasted: 'x'.repeat(2000) }));
    expect(big.status).toBe(413);
    expect(big.json.error.code).toBe('TOO_LARGE');
    const server = startTestApp({ auth: 'token' });
    const { token } = await server.access.create({ user: 'local', readOnly: true });
    const refused = await api(server, 'POST', '/api/import?from=chatgpt&dryRun=1', {
      body: body({ pasted: 'Likes tea.' }),
      token,
    });
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe('READ_ONLY_TOKEN');
  });
});
