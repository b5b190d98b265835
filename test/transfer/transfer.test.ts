/**
 * Export, import and wipe over the in-process store: the round trip, merge with its
 * conflicts, overwrite, replace, the dry run, and every malformed document refused with
 * where it is wrong and nothing changed.
 */

import { describe, expect, it, vi } from 'vitest';
import { type Caller, createMemory, type Memory } from '../../src/memory/memory.js';
import type { Policy } from '../../src/memory/model/policy.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';
import { createTransfer, EXPORT_FORMAT, EXPORT_VERSION } from '../../src/transfer/transfer.js';
import { CALLER, expectEngramError, seed, snapshot } from '../memory/fixtures.js';

const START = Date.UTC(2025, 0, 1);
const CLI: Caller = { user: 'alice', label: 'cli' };

function clocked(policy: Partial<Policy> = {}): Memory {
  let clock = START;
  const now = () => clock++;
  return createMemory({ store: openMemoryStore(), now, policy });
}

const ENTRIES: Record<string, [string, string]> = {
  'areas/engram': ['The memory server', 'TypeScript, Node 20.\nThree tools.\n'],
  'people/ada': ['Ada Lovelace', 'Wrote the first program.\n'],
  'topics/unicode': ['Ünïcödé 🙂 notes', '日本語 — naïve café 👩‍👩‍👧\ttab\n'],
};

async function seeded(policy: Partial<Policy> = {}): Promise<Memory> {
  const memory = clocked(policy);
  await seed(memory, ENTRIES);
  return memory;
}

/** Names, descriptions and bodies: what an export must give back. */
async function contents(memory: Memory, caller: Caller = CALLER) {
  const { entries } = await snapshot(memory, caller.user);
  return entries.map(({ name, description, body }) => ({ name, description, body }));
}

/** Everything of the user, trash and histories included, to prove an import changed nothing. */
async function state(memory: Memory) {
  const base = await snapshot(memory);
  const histories: Record<string, unknown> = {};
  for (const name of [...Object.keys(ENTRIES), 'topics/new', 'topics/other']) {
    histories[name] = await memory.store.history(CALLER.user, name);
  }
  return { ...base, trash: await memory.store.trash(CALLER.user), histories };
}

function documentOf(entries: Array<Record<string, unknown>>): string {
  return JSON.stringify({ format: EXPORT_FORMAT, version: EXPORT_VERSION, entries });
}

/** Parses and imports `text`, expecting a refusal with this message and nothing changed. */
async function expectImportRefused(
  memory: Memory,
  text: string,
  code: Parameters<typeof expectEngramError>[1],
  message: string | RegExp,
): Promise<void> {
  const before = await state(memory);
  await expectEngramError(
    async () => createTransfer(memory).import(CLI, createTransfer(memory).parse(text), { mode: 'replace' }),
    code,
    message,
  );
  expect(await state(memory)).toEqual(before);
}

describe('export', () => {
  it('writes every live entry, sorted by name, with ISO times, in the versioned format', async () => {
    const memory = await seeded();
    await seed(memory, { 'topics/gone': ['Gone', 'gone\n'] });
    await memory.drop(CLI, 'topics/gone');

    const document = await createTransfer(memory).export(CLI);

    expect(document).toEqual({
      format: 'engram-export',
      version: 1,
      exportedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      entries: Object.entries(ENTRIES).map(([name, [description, body]], i) => ({
        name,
        description,
        body,
        created: new Date(START + i).toISOString(),
        updated: new Date(START + i).toISOString(),
      })),
    });
  });

  it('with history adds every revision and the trash', async () => {
    const memory = await seeded();
    await memory.write(CALLER, { name: 'people/ada', new: 'Born 1815.' });
    await seed(memory, { 'topics/gone': ['Gone', 'gone\n'] });
    await memory.drop(CLI, 'topics/gone');

    const document = await createTransfer(memory).export(CLI, { withHistory: true });

    const ada = document.entries.find((entry) => entry.name === 'people/ada');
    expect(
      ada?.revisions?.map(({ revision, operation, actor, body }) => ({ revision, operation, actor, body })),
    ).toEqual([
      { revision: 1, operation: 'create', actor: 'test', body: 'Wrote the first program.\n' },
      { revision: 2, operation: 'append', actor: 'test', body: 'Wrote the first program.\nBorn 1815.\n' },
    ]);
    expect(ada?.revisions?.[0]?.at).toMatch(/Z$/);
    expect(document.trash).toEqual([
      expect.objectContaining({ name: 'topics/gone', body: 'gone\n', droppedBy: 'cli', droppedAt: expect.any(String) }),
    ]);
  });

  it('is read back by parse, history and trash included', async () => {
    const memory = await seeded();
    await seed(memory, { 'topics/gone': ['Gone', 'gone\n'] });
    await memory.drop(CLI, 'topics/gone');
    const document = await createTransfer(memory).export(CLI, { withHistory: true });

    expect(createTransfer(memory).parse(JSON.stringify(document))).toEqual(document);
  });

  it('is read back by parse from a file an editor saved with a byte order mark', async () => {
    const document = await createTransfer(await seeded()).export(CLI);

    expect(createTransfer(await seeded()).parse(`\uFEFF${JSON.stringify(document)}`)).toEqual(document);
  });
});

describe('export, wipe, import', () => {
  it('gives back an identical memory: names, descriptions and bodies', async () => {
    const memory = await seeded();
    const before = await contents(memory);
    const text = JSON.stringify(await createTransfer(memory).export(CLI, { withHistory: true }));

    expect(await createTransfer(memory).wipe(CLI)).toBe(3);
    expect(await memory.index(CLI)).toEqual([]);

    const report = await createTransfer(memory).import(CLI, createTransfer(memory).parse(text), { mode: 'merge' });

    expect(report).toEqual({
      created: Object.keys(ENTRIES),
      updated: [],
      unchanged: [],
      conflicts: [],
      dropped: [],
      skipped: [],
      dryRun: false,
    });
    expect(await contents(memory)).toEqual(before);
  });

  it('into another, empty memory gives the same memory too', async () => {
    const memory = await seeded();
    const other = clocked();

    await createTransfer(other).import(
      CLI,
      createTransfer(other).parse(JSON.stringify(await createTransfer(memory).export(CLI))),
      {
        mode: 'replace',
      },
    );

    expect(await contents(other)).toEqual(await contents(memory));
  });
});

describe('wipe', () => {
  it("drops every live entry of the user to the trash, one drop revision each, and no one else's", async () => {
    const memory = await seeded();
    const bob: Caller = { user: 'bob', label: 'cli' };
    await seed(memory, { 'topics/bobs': ['Bob', 'bob\n'] }, bob);

    expect(await createTransfer(memory).wipe(CLI)).toBe(3);

    expect((await memory.recovery.trash(CLI)).map((item) => [item.name, item.droppedBy]).sort()).toEqual(
      Object.keys(ENTRIES).map((name) => [name, 'cli']),
    );
    for (const name of Object.keys(ENTRIES)) {
      expect((await memory.store.history(CALLER.user, name)).map((item) => item.operation)).toEqual(['create', 'drop']);
    }
    expect((await memory.index(bob)).map((row) => row.name)).toEqual(['topics/bobs']);
  });

  it('with a trash retention of 0 days purges what it dropped at once, as drop does', async () => {
    const memory = await seeded({ trashRetentionDays: 0 });

    expect(await createTransfer(memory).wipe(CLI)).toBe(3);

    expect(await memory.recovery.trash(CLI)).toEqual([]);
    expect(await memory.store.history(CALLER.user, 'people/ada')).toEqual([]);
  });

  it('of an empty memory drops nothing', async () => {
    expect(await createTransfer(clocked()).wipe(CLI)).toBe(0);
  });
});

describe('import, merge', () => {
  const incoming = () =>
    documentOf([
      { name: 'areas/engram', description: 'The memory server', body: 'TypeScript, Node 20.\nThree tools.\n' },
      { name: 'people/ada', description: 'Ada Lovelace', body: 'Different text.\n' },
      { name: 'topics/unicode', description: 'Another description', body: ENTRIES['topics/unicode']![1] },
      { name: 'topics/new', description: 'New one', body: 'new\n' },
    ]);

  it('adds new entries, keeps equal ones, and reports conflicts without overwriting them', async () => {
    const memory = await seeded();
    const before = await snapshot(memory);

    const report = await createTransfer(memory).import(CLI, createTransfer(memory).parse(incoming()), {
      mode: 'merge',
    });

    expect(report).toEqual({
      created: ['topics/new'],
      updated: [],
      unchanged: ['areas/engram'],
      conflicts: ['people/ada', 'topics/unicode'],
      dropped: [],
      skipped: [],
      dryRun: false,
    });
    const after = await snapshot(memory);
    expect(after.entries.filter((entry) => entry.name !== 'topics/new')).toEqual(before.entries);
    expect(await memory.store.history(CALLER.user, 'people/ada')).toHaveLength(1);
  });

  it('reports each entry once when the store runs the transaction again (PostgreSQL retries)', async () => {
    const memory = await seeded();
    const once = memory.store.mutateAll.bind(memory.store);
    // A retried transaction calls decide again from the start, as after a deadlock.
    vi.spyOn(memory.store, 'mutateAll').mockImplementation(async (actor, decide, rules) => {
      await once(
        actor,
        (entries, usage) => {
          decide(entries, usage);
          return decide(entries, usage);
        },
        rules,
      );
    });

    const report = await createTransfer(memory).import(CLI, createTransfer(memory).parse(incoming()), {
      mode: 'merge',
    });

    expect(report).toEqual({
      created: ['topics/new'],
      updated: [],
      unchanged: ['areas/engram'],
      conflicts: ['people/ada', 'topics/unicode'],
      dropped: [],
      skipped: [],
      dryRun: false,
    });
  });

  it('with overwrite replaces the conflicting entries', async () => {
    const memory = await seeded();

    const report = await createTransfer(memory).import(CLI, createTransfer(memory).parse(incoming()), {
      mode: 'merge',
      overwrite: true,
    });

    expect(report).toMatchObject({ created: ['topics/new'], updated: ['people/ada', 'topics/unicode'], conflicts: [] });
    const [ada, unicode] = await memory.store.get(CALLER.user, ['people/ada', 'topics/unicode']);
    expect(ada).toMatchObject({ body: 'Different text.\n', description: 'Ada Lovelace', revision: 2 });
    expect(unicode).toMatchObject({ description: 'Another description', revision: 2 });
  });

  it('records every imported change as one import revision by the importer', async () => {
    const memory = await seeded();

    await createTransfer(memory).import(CLI, createTransfer(memory).parse(incoming()), {
      mode: 'merge',
      overwrite: true,
    });

    const last = async (name: string) => (await memory.store.history(CALLER.user, name)).at(-1);
    expect(await last('topics/new')).toMatchObject({ revision: 1, operation: 'import', actor: 'cli', body: 'new\n' });
    expect(await last('people/ada')).toMatchObject({ revision: 2, operation: 'import', actor: 'cli' });
    expect(await last('topics/unicode')).toMatchObject({ revision: 2, operation: 'import', actor: 'cli' });
    expect(await memory.store.history(CALLER.user, 'areas/engram')).toEqual([
      expect.objectContaining({ revision: 1, operation: 'create', actor: 'test' }),
    ]);
  });

  it('normalises names and line endings as a write does', async () => {
    const memory = clocked();

    await createTransfer(memory).import(
      CLI,
      createTransfer(memory).parse(documentOf([{ name: ' People/Ada ', description: 'Ada', body: 'one\r\ntwo\r\n' }])),
      { mode: 'merge' },
    );

    expect(await contents(memory)).toEqual([{ name: 'people/ada', description: 'Ada', body: 'one\ntwo\n' }]);
  });
});

describe('import, replace', () => {
  it('makes the memory equal to the document, dropping the others to the trash, in one transaction', async () => {
    const memory = await seeded();
    const mutate = vi.spyOn(memory.store, 'mutate');
    const mutateAll = vi.spyOn(memory.store, 'mutateAll');
    const text = documentOf([
      { name: 'people/ada', description: 'Ada Lovelace', body: 'Wrote the first program.\n' },
      { name: 'areas/engram', description: 'Rewritten', body: 'New plan.\n' },
      { name: 'topics/new', description: 'New', body: 'new\n' },
    ]);

    const report = await createTransfer(memory).import(CLI, createTransfer(memory).parse(text), { mode: 'replace' });

    expect(report).toEqual({
      created: ['topics/new'],
      updated: ['areas/engram'],
      unchanged: ['people/ada'],
      conflicts: [],
      dropped: ['topics/unicode'],
      skipped: [],
      dryRun: false,
    });
    expect(mutateAll).toHaveBeenCalledTimes(1);
    expect(mutate).not.toHaveBeenCalled();
    expect(await contents(memory)).toEqual([
      { name: 'areas/engram', description: 'Rewritten', body: 'New plan.\n' },
      { name: 'people/ada', description: 'Ada Lovelace', body: 'Wrote the first program.\n' },
      { name: 'topics/new', description: 'New', body: 'new\n' },
    ]);
    expect(await memory.recovery.trash(CLI)).toEqual([
      expect.objectContaining({ name: 'topics/unicode', droppedBy: 'cli' }),
    ]);
  });

  it('with an empty document drops everything, and undrop brings an entry back', async () => {
    const memory = await seeded();

    const report = await createTransfer(memory).import(CLI, createTransfer(memory).parse(documentOf([])), {
      mode: 'replace',
    });

    expect(report.dropped).toEqual(Object.keys(ENTRIES));
    expect(await memory.index(CLI)).toEqual([]);
    await memory.recovery.undrop(CLI, 'people/ada');
    expect(await contents(memory)).toEqual([
      { name: 'people/ada', description: 'Ada Lovelace', body: 'Wrote the first program.\n' },
    ]);
  });

  it('with a trash retention of 0 days purges the entries it dropped at once', async () => {
    const memory = await seeded({ trashRetentionDays: 0 });

    const report = await createTransfer(memory).import(
      CLI,
      createTransfer(memory).parse(documentOf([{ name: 'topics/new', description: 'New', body: 'new\n' }])),
      { mode: 'replace' },
    );

    expect(report.dropped).toEqual(Object.keys(ENTRIES));
    expect(await memory.recovery.trash(CLI)).toEqual([]);
    expect((await memory.index(CLI)).map((row) => row.name)).toEqual(['topics/new']);
  });

  it("changes nothing when the result would pass the user's cap", async () => {
    const memory = await seeded({ userCap: 200 });
    const text = documentOf([
      { name: 'topics/a', description: 'A', body: 'a'.repeat(110) },
      { name: 'topics/b', description: 'B', body: 'b'.repeat(110) },
    ]);

    await expectImportRefused(
      memory,
      text,
      'TOO_LARGE',
      /^the import would bring this memory to 238 bytes \(names, descriptions and bodies\); the cap is 200\./,
    );
  });
});

describe('import, dry run', () => {
  it('reports what would happen and changes nothing', async () => {
    const memory = await seeded();
    const before = await state(memory);
    const text = documentOf([
      { name: 'people/ada', description: 'Ada Lovelace', body: 'Changed.\n' },
      { name: 'topics/new', description: 'New', body: 'new\n' },
    ]);

    const merge = await createTransfer(memory).import(CLI, createTransfer(memory).parse(text), {
      mode: 'merge',
      dryRun: true,
    });
    const replace = await createTransfer(memory).import(CLI, createTransfer(memory).parse(text), {
      mode: 'replace',
      dryRun: true,
    });

    expect(merge).toEqual({
      created: ['topics/new'],
      updated: [],
      unchanged: [],
      conflicts: ['people/ada'],
      dropped: [],
      skipped: [],
      dryRun: true,
    });
    expect(replace).toEqual({
      created: ['topics/new'],
      updated: ['people/ada'],
      unchanged: [],
      conflicts: [],
      dropped: ['areas/engram', 'topics/unicode'],
      skipped: [],
      dryRun: true,
    });
    expect(await state(memory)).toEqual(before);
  });
});

describe('import of a malformed document', () => {
  /** Imports `text` into a freshly seeded memory, expecting this refusal and nothing changed. */
  async function expectMalformed(text: string, message: string | RegExp): Promise<void> {
    await expectImportRefused(await seeded(), text, 'INVALID_ARGUMENT', message);
  }

  it('refuses a truncated file, saying where the JSON breaks', async () => {
    const memory = await seeded();
    const full = JSON.stringify(await createTransfer(memory).export(CLI));

    await expectImportRefused(
      memory,
      full.slice(0, full.length - 20),
      'INVALID_ARGUMENT',
      /^the import file is not valid JSON \(.*position \d+.*\); nothing was imported\.$/,
    );
  });

  it('refuses an entry with an invalid name, saying which', async () => {
    await expectMalformed(
      documentOf([
        { name: 'topics/fine', description: 'Fine', body: 'fine\n' },
        { name: 'people/John Smith', description: 'John', body: 'john\n' },
      ]),
      'entries[1]: "people/John Smith" is not a valid name (<group>/<slug>); nothing was imported.',
    );
  });

  it('refuses a name that appears twice, once normalised', async () => {
    await expectMalformed(
      documentOf([
        { name: 'topics/a', description: 'A', body: 'a\n' },
        { name: 'topics/b', description: 'B', body: 'b\n' },
        { name: 'Topics/A', description: 'A again', body: 'a again\n' },
      ]),
      'entries[2]: topics/a appears twice; nothing was imported.',
    );
  });

  it('refuses an entry over the entry cap, saying which and by how much', async () => {
    await expectMalformed(
      documentOf([
        { name: 'topics/small', description: 'Small', body: 'small\n' },
        { name: 'topics/big', description: 'Big', body: 'x'.repeat(16_385) },
      ]),
      /^entries\[1\]: topics\/big would be 16,385 bytes; the cap is 16,384\. .*; nothing was imported\.$/,
    );
  });

  it('refuses a description over its cap or empty', async () => {
    await expectMalformed(
      documentOf([{ name: 'topics/long', description: 'd'.repeat(201), body: 'x\n' }]),
      /^entries\[0\]: description is 201 characters; the cap is 200\. .*; nothing was imported\.$/,
    );
    await expectMalformed(
      documentOf([{ name: 'topics/blank', description: '   ', body: 'x\n' }]),
      'entries[0]: the description is empty; nothing was imported.',
    );
  });

  it('refuses a field of the wrong type, saying which', async () => {
    await expectMalformed(
      documentOf([
        { name: 'topics/a', description: 'A', body: 'a\n' },
        { name: 'topics/b', description: 'B', body: 42 },
      ]),
      /^the import file is not an Engram export: at entries\[1\]\.body: .*expected string.*; nothing was imported\.$/,
    );
  });

  it('refuses a document that is not an Engram export, or of another version', async () => {
    await expectMalformed(JSON.stringify({ entries: [] }), /^the import file is not an Engram export: at format: /);
    await expectMalformed(
      JSON.stringify({ format: EXPORT_FORMAT, version: 2, entries: [] }),
      /^the import file is not an Engram export: at version: /,
    );
    await expectMalformed('[]', /^the import file is not an Engram export: at the document: /);
  });

  it('refuses an unknown field, saying where', async () => {
    await expectMalformed(
      documentOf([{ name: 'topics/a', description: 'A', body: 'a\n', bodyy: 'typo' }]),
      /^the import file is not an Engram export: at entries\[0\]: .*"bodyy"; nothing was imported\.$/,
    );
  });
});

/** The streamed export, joined. */
async function exportedText(memory: Memory, withHistory: boolean): Promise<string> {
  let text = '';
  for await (const piece of createTransfer(memory).exportText(CLI, { withHistory })) text += piece;
  return text;
}

describe('export as a stream of text', () => {
  it.each([false, true])('is the document, pretty-printed, piece by piece (history %s)', async (withHistory) => {
    const memory = await seeded();
    for (let i = 0; i < 120; i++) await seed(memory, { [`topics/n${i}`]: [`N ${i}`, `${i}\n`] });
    await memory.write(CLI, { name: 'people/ada', new: 'More.' });
    await memory.drop(CLI, 'topics/n7');
    await memory.drop(CLI, 'topics/n8');

    const text = await exportedText(memory, withHistory);
    const parsed = JSON.parse(text);
    expect(text).toBe(`${JSON.stringify(parsed, null, 2)}\n`);
    const document = await createTransfer(memory).export(CLI, { withHistory });
    expect({ ...parsed, exportedAt: undefined }).toEqual({ ...document, exportedAt: undefined });
    expect(parsed.entries).toHaveLength(121);
    if (withHistory)
      expect(parsed.trash.map((entry: { name: string }) => entry.name)).toEqual(['topics/n8', 'topics/n7']);
  });

  it.each([false, true])('of an empty memory is the empty document (history %s)', async (withHistory) => {
    const memory = clocked();
    const text = await exportedText(memory, withHistory);
    expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
    expect(JSON.parse(text)).toEqual({
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
      exportedAt: expect.any(String),
      entries: [],
      ...(withHistory ? { trash: [] } : {}),
    });
  });

  it('reads the store a few entries at a time, never all bodies at once', async () => {
    const memory = await seeded();
    for (let i = 0; i < 200; i++) await seed(memory, { [`topics/n${i}`]: [`N ${i}`, `${i}\n`] });
    const get = vi.spyOn(memory.store, 'get');
    await exportedText(memory, false);
    expect(Math.max(...get.mock.calls.map(([, names]) => names.length))).toBeLessThanOrEqual(50);
  });
});

describe('import and the caps', () => {
  it('counts names and descriptions: empty bodies with long descriptions cannot pass the byte cap', async () => {
    const memory = clocked({ userCap: 10_000, maxEntries: 10_000 });
    const entries = Array.from({ length: 60 }, (_, i) => ({
      name: `topics/t${i}`,
      description: 'd'.repeat(200),
      body: '',
    }));
    await expectImportRefused(
      memory,
      documentOf(entries),
      'TOO_LARGE',
      /^the import would bring this memory to 12,5\d\d bytes \(names, descriptions and bodies\); the cap is 10,000\./,
    );
  });

  it('refuses more entries than the entry cap, with what is there already', async () => {
    const memory = await seeded({ maxEntries: 5 });
    const three = ['x', 'y', 'z'].map((slug) => ({ name: `topics/${slug}`, description: slug, body: `${slug}\n` }));
    const before = await state(memory);
    await expectEngramError(
      async () =>
        createTransfer(memory).import(CLI, createTransfer(memory).parse(documentOf(three)), { mode: 'merge' }),
      'TOO_MANY_ENTRIES',
      /^the import would make 6 entries in this memory; the cap is 5\. Make room first/,
    );
    expect(await state(memory)).toEqual(before);
    // Replacing drops the others, so the same document fits.
    const report = await createTransfer(memory).import(CLI, createTransfer(memory).parse(documentOf(three)), {
      mode: 'replace',
    });
    expect(report.created).toEqual(['topics/x', 'topics/y', 'topics/z']);
  });

  it('refuses a document with more entries than the cap before reading the store', async () => {
    const memory = clocked({ maxEntries: 2 });
    const three = ['x', 'y', 'z'].map((slug) => ({ name: `topics/${slug}`, description: slug, body: '' }));
    await expectImportRefused(memory, documentOf(three), 'TOO_MANY_ENTRIES', /^the import would make 3 entries/);
  });
});

describe('import and the groups', () => {
  const document = documentOf([
    { name: 'topics/ok', description: 'Fine', body: 'ok\n' },
    { name: 'secret/x', description: 'Not writable', body: 'x\n' },
  ]);

  it('leaves out entries of groups the model cannot write, and says which', async () => {
    const memory = clocked();
    const report = await createTransfer(memory).import(CLI, createTransfer(memory).parse(document), { mode: 'merge' });
    expect(report.created).toEqual(['topics/ok']);
    expect(report.skipped).toEqual(['secret/x']);
    expect((await memory.index(CLI)).map((row) => row.name)).toEqual(['topics/ok']);
  });

  it('imports them too when the owner asks for every group', async () => {
    const memory = clocked();
    const report = await createTransfer(memory).import(CLI, createTransfer(memory).parse(document), {
      mode: 'merge',
      allGroups: true,
    });
    expect(report.created).toEqual(['topics/ok', 'secret/x']);
    expect(report.skipped).toEqual([]);
  });

  it('in replace mode, keeps no skipped name alive and drops the rest', async () => {
    const memory = await seeded();
    const report = await createTransfer(memory).import(CLI, createTransfer(memory).parse(document), {
      mode: 'replace',
    });
    expect(report.skipped).toEqual(['secret/x']);
    expect((await memory.index(CLI)).map((row) => row.name)).toEqual(['topics/ok']);
  });
});
