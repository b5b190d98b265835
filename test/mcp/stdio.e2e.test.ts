/**
 * End to end over MCP stdio: `engram stdio` is spawned as a child process and driven by
 * the official SDK clients (v1, and v2 in both protocol eras): tools/list equals the
 * spec, every row and every error of DESIGN §2 as the model sees it, restarts, the actor
 * in history, and two servers writing one database at once.
 *
 * Every scenario runs with the v1 client on SQLite. The other clients, and PostgreSQL
 * (skipped, with a notice, where no server is available), run a smoke subset: what
 * differs between clients (tools/list, instructions, the handshake's client name, tool
 * and protocol errors) and between databases (restarts, concurrent servers). The rows of
 * the table run in the core, tools and CLI suites too; here they check the wire.
 *
 * A server process costs a second or more, so the tests of a describe that need no
 * fresh database share one (sharedServer), each test with entry names of its own.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { type EngramDatabase, postgresBackend, SQLITE_BACKEND, type TestBackend } from '../helpers/backends.js';
import { boundaryTagOf } from '../helpers/boundary.js';
import { type Cleanup, childEnv, ENGRAM_CLI, queryDatabase, type TempDir, tempDir } from '../helpers/engram.js';
import { MCP_CLIENTS, type McpClientKind, type McpSession } from '../helpers/mcp-clients.js';
import { findTestPostgres } from '../helpers/postgres.js';

interface SpecTool {
  function: { name: string; description: string; parameters: Record<string, unknown> };
}
const SPEC = JSON.parse(readFileSync(new URL('../../spec/tools.json', import.meta.url), 'utf8')) as SpecTool[];

/** Which database, and which client: every client on SQLite, the first on PostgreSQL too. */
interface Setup {
  readonly backend: TestBackend;
  readonly kind: McpClientKind;
  /** Every scenario (the first client on SQLite), or the smoke subset. */
  readonly full: boolean;
}

const postgres = await findTestPostgres();
const SETUPS: readonly Setup[] = [
  ...MCP_CLIENTS.map((kind, i) => ({ backend: SQLITE_BACKEND, kind, full: i === 0 })),
  ...(postgres ? [{ backend: postgresBackend(postgres), kind: MCP_CLIENTS[0]!, full: false }] : []),
];

interface Server {
  readonly session: McpSession;
  readonly database: EngramDatabase;
  readonly dir: TempDir;
}

interface StartOptions {
  readonly config?: unknown;
  readonly clientName?: string;
  /** Reuse the folder and the database of an earlier server. */
  readonly reuse?: Server;
}

/**
 * Spawns `engram stdio` on a fresh database and connects the client to it; closed after
 * the test (or when `cleanup` says).
 */
async function start(
  { backend, kind }: Setup,
  options: StartOptions = {},
  cleanup: Cleanup = onTestFinished,
): Promise<Server> {
  const dir = options.reuse?.dir ?? tempDir(cleanup);
  const database = options.reuse?.database ?? (await backend.create(dir, cleanup));
  const session = await kind.connect({
    database: database.args,
    configHome: dir.path,
    ...(options.config === undefined ? {} : { config: dir.config(options.config) }),
    ...(options.clientName === undefined ? {} : { clientName: options.clientName }),
  });
  cleanup(() => session.close());
  return { session, database, dir };
}

/**
 * One server for the tests of the enclosing describe that need no fresh database:
 * started by the first test that asks, closed after the describe. Each test uses entry
 * names no other test of the describe uses, so it finds what it needs whatever ran before.
 */
function sharedServer(setup: Setup): () => Promise<Server> {
  let server: Promise<Server> | undefined;
  const undo: (() => void | Promise<void>)[] = [];
  afterAll(async () => {
    for (const step of undo.reverse()) await step();
  });
  return () => {
    server ??= start(setup, {}, (step) => undo.push(step));
    return server;
  };
}

/** The body as stored, read from the database itself (final newline included). */
async function storedBody(server: Server, name: string): Promise<string | undefined> {
  const rows = await server.database.query<{ body: string }>(
    `SELECT r.body FROM entries e JOIN revisions r ON r.entry_id = e.id AND r.revision = e.revision
      WHERE e.name = ? AND e.dropped_at IS NULL`,
    name,
  );
  return rows[0]?.body;
}

/** Everything the model can see, plus the number of revisions recorded. */
async function memoryState(server: Server) {
  const index = await server.session.call('memory_open');
  const names = index.text.startsWith('Memory is empty')
    ? []
    : index.text.split('\n').map((line) => line.split(' (')[0]);
  const opened = names.length === 0 ? undefined : await server.session.call('memory_open', { names });
  const [revisions] = await server.database.query<{ count: number }>(
    'SELECT CAST(count(*) AS integer) AS count FROM revisions',
  );
  return { index, opened, revisions };
}

/** Calls a tool that must be refused with `message`, and checks that nothing changed. */
async function expectRefusal(server: Server, tool: string, args: Record<string, unknown>, message: string | RegExp) {
  const before = await memoryState(server);
  const outcome = await server.session.call(tool, args);
  expect(outcome.isError).toBe(true);
  if (typeof message === 'string') expect(outcome.text).toBe(message);
  else expect(outcome.text).toMatch(message);
  expect(await memoryState(server)).toEqual(before);
}

/** Writes and expects success; returns the index line that came back. */
async function write(server: Server, args: Record<string, unknown>): Promise<string> {
  const outcome = await server.session.call('memory_write', args);
  expect(outcome).toMatchObject({ isError: false });
  return outcome.text;
}

describe.each(SETUPS)('engram stdio on $backend.label with the $kind.label', (setup) => {
  /** A scenario of the full run only (see the header); `it` runs on every setup. */
  const full = (name: string, test: () => Promise<void>) => {
    if (setup.full) it(name, test);
  };
  /** A scenario of the full run and of every other database. */
  const perDatabase = (name: string, test: () => Promise<void>) => {
    if (setup.full || setup.backend !== SQLITE_BACKEND) it(name, test);
  };

  /**
   * The server the tools-and-instructions tests and the memory_open tests share: the
   * first write nothing, so sharing one spares a process (some 0.4 s of CPU) per setup.
   */
  const listsAndOpens = sharedServer(setup);

  describe('tools and instructions', () => {
    const shared = listsAndOpens;

    it('lists exactly the three tools of the spec, verbatim', async () => {
      const { session } = await shared();
      const tools = await session.listTools();
      expect(tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }))).toStrictEqual(
        SPEC.map(({ function: f }) => ({ name: f.name, description: f.description, inputSchema: f.parameters })),
      );
    });

    it('marks memory_open read-only and memory_drop destructive', async () => {
      const { session } = await shared();
      const annotations = Object.fromEntries((await session.listTools()).map((tool) => [tool.name, tool.annotations]));
      expect(annotations.memory_open).toMatchObject({ readOnlyHint: true });
      expect(annotations.memory_write).toMatchObject({ readOnlyHint: false, destructiveHint: false });
      expect(annotations.memory_drop).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    });

    it('tells the model to open the index at the start of a session', async () => {
      const { session } = await shared();
      expect(session.instructions).toMatch(/at the start of a session, call memory_open with no arguments/i);
    });

    full('rewrites only the group sentence when groups are configured', async () => {
      const { session } = await start(setup, { config: { groups: { notes: 'loose ideas', crew: 'the team' } } });
      const tool = (await session.listTools()).find((t) => t.name === 'memory_write');
      const spec = SPEC.find((t) => t.function.name === 'memory_write')!.function.description;
      expect(tool?.description).toBe(
        spec.replace(
          'areas for ongoing projects, people for the ones the user works with, topics for lasting facts about them.',
          'notes for loose ideas, crew for the team.',
        ),
      );
    });
  });

  describe('memory_open', () => {
    const shared = listsAndOpens;

    it('says in one line that the memory is empty and how to create an entry', async () => {
      const { session } = await start(setup);
      const outcome = await session.call('memory_open');
      expect(outcome.isError).toBe(false);
      expect(outcome.text).not.toContain('\n');
      expect(outcome.text).toMatch(/^Memory is empty\. Create the first entry with memory_write/);
    });

    full('lists one index line per entry, sorted by name, and nothing else', async () => {
      const server = await start(setup);
      await write(server, { name: 'topics/zebra', description: 'Last', new: 'z' });
      await write(server, { name: 'people/allozaur', description: 'llama.cpp WebUI maintainer', new: 'Héllo ✓' });
      await write(server, { name: 'areas/engram', description: 'This project', new: 'a\nb' });
      expect(await server.session.call('memory_open', { names: [] })).toEqual({
        isError: false,
        text: [
          'areas/engram (4 bytes): This project',
          'people/allozaur (11 bytes): llama.cpp WebUI maintainer',
          'topics/zebra (2 bytes): Last',
        ].join('\n'),
      });
    });

    it('returns every requested entry, normalised and de-duplicated, index line then body', async () => {
      const server = await shared();
      await write(server, { name: 'topics/a', description: 'First', new: 'one\ntwo' });
      await write(server, { name: 'topics/b', description: 'Second', new: 'three' });
      const outcome = await server.session.call('memory_open', { names: ['topics/b', ' Topics/A ', 'topics/b'] });
      const tag = boundaryTagOf(outcome.text);
      expect(outcome).toEqual({
        isError: false,
        text:
          `topics/b (6 bytes): Second\nthree\n=== end of topics/b [${tag}] ===\n\n` +
          `topics/a (8 bytes): First\none\ntwo\n=== end of topics/a [${tag}] ===`,
      });
    });

    full('reports a missing name with suggestions and still returns the found ones', async () => {
      const server = await shared();
      await write(server, { name: 'topics/editor', description: 'Editor', new: 'Helix' });
      const outcome = await server.session.call('memory_open', { names: ['topics/editor', 'topics/editr'] });
      expect(outcome).toEqual({
        isError: false,
        text:
          `topics/editor (6 bytes): Editor\nHelix\n=== end of topics/editor [${boundaryTagOf(outcome.text)}] ===\n\n` +
          'topics/editr not found. Did you mean topics/editor?',
      });
    });
  });

  describe('memory_write, every row of the table', () => {
    const shared = sharedServer(setup);

    it('creates: description required, final newline added', async () => {
      const server = await shared();
      expect(
        await write(server, { name: 'topics/editor', description: 'Editor preferences', new: 'Uses Helix.' }),
      ).toBe('topics/editor (12 bytes): Editor preferences');
      expect(await storedBody(server, 'topics/editor')).toBe('Uses Helix.\n');
    });

    full('refuses to create without a description', async () => {
      const server = await shared();
      await expectRefusal(
        server,
        'memory_write',
        { name: 'topics/keyboard', new: 'Uses Helix.' },
        'topics/keyboard does not exist yet: to create it, pass description (one line on what it covers) together with new.',
      );
    });

    full('refuses old on an entry that does not exist, suggesting close names and how to create', async () => {
      const server = await shared();
      await write(server, { name: 'people/grace', description: 'Editor', new: 'Helix' });
      const message =
        'people/grce not found. Did you mean people/grace? ' +
        'To create it, call memory_write with name, description and new (without old).';
      await expectRefusal(server, 'memory_write', { name: 'people/grce', old: 'Helix', new: 'Vim' }, message);
      await expectRefusal(server, 'memory_write', { name: 'people/grce', old: 'Helix' }, message);
    });

    it('appends with the newlines the table asks for', async () => {
      const server = await shared();
      await write(server, { name: 'topics/log', description: 'Log', new: 'a' });
      expect(await write(server, { name: 'topics/log', new: 'b\nc' })).toBe('topics/log (6 bytes): Log');
      expect(await storedBody(server, 'topics/log')).toBe('a\nb\nc\n');

      await write(server, { name: 'topics/log', old: '\nc' }); // the body no longer ends with a newline
      expect(await storedBody(server, 'topics/log')).toBe('a\nb');
      await write(server, { name: 'topics/log', new: 'd\n' });
      expect(await storedBody(server, 'topics/log')).toBe('a\nb\nd\n');

      await write(server, { name: 'topics/log', old: 'a\nb\nd' }); // the body is now empty
      expect(await storedBody(server, 'topics/log')).toBe('');
      expect(await write(server, { name: 'topics/log', new: 'e' })).toBe('topics/log (2 bytes): Log');
      expect(await storedBody(server, 'topics/log')).toBe('e\n');
    });

    full('replaces the one occurrence literally, spanning lines and with $ patterns', async () => {
      const server = await shared();
      await write(server, { name: 'areas/qwentts-cpp', description: 'TTS port', new: 'Target: 24 kHz.\nVoice: warm.' });
      await write(server, { name: 'areas/qwentts-cpp', old: '24 kHz.\nVoice', new: "$& $1 $$ $' 48 kHz.\nTone" });
      expect(await storedBody(server, 'areas/qwentts-cpp')).toBe("Target: $& $1 $$ $' 48 kHz.\nTone: warm.\n");
    });

    full('replaces by nothing when new is empty', async () => {
      const server = await shared();
      await write(server, { name: 'topics/daily', description: 'Editor', new: 'Uses Helix daily.' });
      expect(await write(server, { name: 'topics/daily', old: ' daily', new: '' })).toBe(
        'topics/daily (12 bytes): Editor',
      );
      expect(await storedBody(server, 'topics/daily')).toBe('Uses Helix.\n');
    });

    full('removes old together with the newline right after it, or at the very end without one', async () => {
      const server = await shared();
      await write(server, { name: 'topics/facts', description: 'Facts', new: 'one\ntwo\nthree' });
      await write(server, { name: 'topics/facts', old: 'two' });
      expect(await storedBody(server, 'topics/facts')).toBe('one\nthree\n');
      await write(server, { name: 'topics/facts', old: 'three\n' });
      expect(await storedBody(server, 'topics/facts')).toBe('one\n');
    });

    full('updates the description alone, and with any other write', async () => {
      const server = await shared();
      await write(server, { name: 'topics/desk', description: 'Editor', new: 'Helix' });
      expect(await write(server, { name: 'topics/desk', description: '  Editor\n and\tkeyboard  ' })).toBe(
        'topics/desk (6 bytes): Editor and keyboard',
      );
      expect(await write(server, { name: 'topics/desk', description: 'Tools', new: 'Moonlander' })).toBe(
        'topics/desk (17 bytes): Tools',
      );
      expect(await storedBody(server, 'topics/desk')).toBe('Helix\nMoonlander\n');
    });

    full('refuses a write with nothing to do', async () => {
      const server = await shared();
      await write(server, { name: 'topics/idle', description: 'Editor', new: 'Helix' });
      await expectRefusal(
        server,
        'memory_write',
        { name: 'topics/idle' },
        'Nothing to do: pass new to append, old and new to replace, old alone to remove, or description to update it.',
      );
    });

    full('normalises names and line endings, and counts sizes in UTF-8 bytes', async () => {
      const server = await shared();
      await write(server, { name: ' People/Allozaur ', description: 'Maintainer', new: 'a\r\nb\rc' });
      expect(await write(server, { name: 'people/allozaur', new: 'é✓' })).toBe(
        'people/allozaur (12 bytes): Maintainer',
      );
      expect(await storedBody(server, 'people/allozaur')).toBe('a\nb\nc\né✓\n');
    });

    full('succeeds and returns the line when the write changes nothing', async () => {
      const server = await shared();
      await write(server, { name: 'topics/same', description: 'Editor', new: 'Helix' });
      const before = await memoryState(server);
      expect(await write(server, { name: 'topics/same', old: 'Helix', new: 'Helix' })).toBe(
        'topics/same (6 bytes): Editor',
      );
      expect(await memoryState(server)).toEqual(before);
    });
  });

  describe('the errors, each a tool result that changes nothing', () => {
    const shared = sharedServer(setup);

    full('refuses an empty old', async () => {
      const server = await shared();
      await write(server, { name: 'areas/empty-old', description: 'Editor', new: 'Helix' });
      await expectRefusal(
        server,
        'memory_write',
        { name: 'areas/empty-old', old: '', new: 'Vim' },
        'old must not be empty: pass the exact text to replace or remove, or leave old out to append new.',
      );
    });

    it('quotes the closest line when old is not found', async () => {
      const server = await shared();
      await write(server, { name: 'areas/qwentts-cpp', description: 'TTS', new: 'Target: 24 kHz.\nVoice: warm.' });
      await expectRefusal(
        server,
        'memory_write',
        { name: 'areas/qwentts-cpp', old: 'Target: 22 kHz.', new: 'Target: 48 kHz.' },
        'old text not found in areas/qwentts-cpp. Closest line: "Target: 24 kHz." ' +
          'Copy the exact text from memory_open(["areas/qwentts-cpp"]) and call again.',
      );
    });

    full('gives the count and the lines when old occurs more than once, overlapping ones included', async () => {
      const server = await shared();
      await write(server, { name: 'areas/x', description: 'X', new: 'a\nTODO\nb\nTODO\nTODO TODO' });
      await expectRefusal(
        server,
        'memory_write',
        { name: 'areas/x', old: 'TODO' },
        'old text occurs 4 times in areas/x (lines 2, 4, 5). ' +
          'Include more of the surrounding text so that it occurs exactly once.',
      );
      await write(server, { name: 'topics/y', description: 'Y', new: 'aaa' });
      await expectRefusal(
        server,
        'memory_write',
        { name: 'topics/y', old: 'aa', new: 'b' },
        'old text occurs 2 times in topics/y (line 1). Include more of the surrounding text so that it occurs exactly once.',
      );
    });

    full('refuses a body over the entry cap, saying how to split', async () => {
      const server = await shared();
      await write(server, { name: 'areas/big', description: 'Big', new: 'x'.repeat(16_383) });
      await expectRefusal(
        server,
        'memory_write',
        { name: 'areas/big', new: 'y'.repeat(825) },
        'areas/big would be 17,210 bytes; the cap is 16,384. ' +
          'Split the subject: move part of it to a new entry such as areas/big-more, then remove it here.',
      );
    });

    full('refuses a write past the per-user cap', async () => {
      const server = await start(setup, { config: { userCap: 60 } });
      await write(server, { name: 'topics/a', description: 'A', new: 'x'.repeat(19) });
      await expectRefusal(
        server,
        'memory_write',
        { name: 'topics/b', description: 'B', new: 'y'.repeat(24) },
        'topics/b would bring this memory to 63 bytes (names, descriptions and bodies); the cap is 60. ' +
          'Make room first: shorten or drop entries ' +
          'that are no longer needed (memory_open() shows their sizes), then call again.',
      );
    });

    full('refuses a description over 200 characters, or empty on create', async () => {
      const server = await shared();
      await write(server, { name: 'topics/long', description: 'X', new: 'x' });
      await expectRefusal(
        server,
        'memory_write',
        { name: 'topics/long', description: 'd'.repeat(201) },
        'description is 201 characters; the cap is 200. Shorten it to one line on what topics/long covers and call again.',
      );
      await expectRefusal(
        server,
        'memory_write',
        { name: 'topics/blank', description: ' \n\t ', new: 'y' },
        /^topics\/blank does not exist yet: to create it, pass description/,
      );
    });

    full('refuses an invalid name, saying what a name looks like', async () => {
      const server = await shared();
      const message =
        '"people/John Smith" is not a valid name: use <group>/<slug>, the slug made of a-z 0-9 - . _ ' +
        '(for example people/john-smith). Groups you can write: areas, people, topics.';
      await expectRefusal(server, 'memory_write', { name: 'people/John Smith', description: 'J', new: 'j' }, message);
      await expectRefusal(server, 'memory_open', { names: ['people/John Smith'] }, message);
      await expectRefusal(server, 'memory_drop', { name: 'people/John Smith' }, message);
    });

    full('keeps entries of unconfigured groups listed, readable and droppable, but not writable', async () => {
      const notes = await start(setup, { config: { groups: { notes: 'loose ideas' } } });
      await write(notes, { name: 'notes/idea', description: 'An idea', new: 'Fly.' });
      await notes.session.close();

      const server = await start(setup, { reuse: notes });
      expect((await server.session.call('memory_open')).text).toBe('notes/idea (5 bytes): An idea');
      const opened = (await server.session.call('memory_open', { names: ['notes/idea'] })).text;
      expect(opened).toBe(`notes/idea (5 bytes): An idea\nFly.\n=== end of notes/idea [${boundaryTagOf(opened)}] ===`);
      await expectRefusal(
        server,
        'memory_write',
        { name: 'notes/idea', new: 'Walk.' },
        'notes/idea is in group "notes", which cannot be written. Groups you can write: areas, people, topics ' +
          '(for example areas/idea).',
      );
      expect(await server.session.call('memory_drop', { name: 'notes/idea' })).toEqual({
        isError: false,
        text: 'Dropped notes/idea (5 bytes): An idea',
      });
    });

    full('reports names that do not exist, with suggestions', async () => {
      const server = await shared();
      await write(server, { name: 'topics/editor', description: 'Editor', new: 'Helix' });
      await expectRefusal(
        server,
        'memory_open',
        { names: ['topics/editr'] },
        'topics/editr not found. Did you mean topics/editor?\nmemory_open() with no names lists every entry.',
      );
      await expectRefusal(
        server,
        'memory_drop',
        { name: 'topics/editr' },
        'topics/editr not found, nothing was dropped. Did you mean topics/editor? memory_open() lists every entry.',
      );
    });

    full('refuses more than 50 names in one memory_open', async () => {
      const server = await shared();
      const names = Array.from({ length: 51 }, (_, i) => `topics/t${i}`);
      await expectRefusal(
        server,
        'memory_open',
        { names },
        'memory_open takes at most 50 names per call; 51 were given. ' +
          'Open the entries you need most first, then the rest in another call.',
      );
    });

    it('answers arguments of the wrong type with a tool error, not a protocol error', async () => {
      const server = await shared();
      await write(server, { name: 'topics/editor', description: 'Editor', new: 'Helix' });
      await expectRefusal(server, 'memory_open', { names: 7 }, /^memory_open: names must be an array/);
      await expectRefusal(server, 'memory_open', { names: [1, 2] }, /^memory_open: names must be an array of strings/);
      await expectRefusal(server, 'memory_write', { name: 'topics/editor', new: 5 }, /^memory_write: new must be a/);
      await expectRefusal(server, 'memory_write', { name: ['topics/editor'], new: 'x' }, /name must be a string/);
      await expectRefusal(server, 'memory_write', { name: 'topics/editor', text: 'x' }, /does not take "text"/);
      await expectRefusal(server, 'memory_drop', {}, /^memory_drop needs name/);
    });

    it('opens names given as one string, or as a JSON-encoded array string (DESIGN §2)', async () => {
      const server = await shared();
      await write(server, { name: 'topics/editor', description: 'Editor', new: 'Helix' });
      const proper = await server.session.call('memory_open', { names: ['topics/editor'] });
      expect(proper.isError).toBe(false);
      expect(await server.session.call('memory_open', { names: 'topics/editor' })).toEqual(proper);
      expect(await server.session.call('memory_open', { names: '["topics/editor"]' })).toEqual(proper);
    });

    it('answers an unknown tool with a protocol error', async () => {
      const server = await shared();
      await expect(server.session.call('memory_forget', { name: 'topics/x' })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('Unknown tool "memory_forget"'),
      });
      expect((await server.session.call('memory_open')).isError).toBe(false);
    });
  });

  describe('memory_drop', () => {
    it('removes the entry from the index and from memory_open, answering one line', async () => {
      const server = await start(setup);
      await write(server, { name: 'topics/editor', description: 'Editor', new: 'Helix' });
      await write(server, { name: 'topics/keyboard', description: 'Keyboard', new: 'Moonlander' });
      expect(await server.session.call('memory_drop', { name: 'Topics/Editor' })).toEqual({
        isError: false,
        text: 'Dropped topics/editor (6 bytes): Editor',
      });
      expect((await server.session.call('memory_open')).text).toBe('topics/keyboard (11 bytes): Keyboard');
      expect((await server.session.call('memory_open', { names: ['topics/editor'] })).isError).toBe(true);
    });
  });

  describe('processes and the database file', () => {
    perDatabase('keeps everything across a restart of the server', async () => {
      const first = await start(setup);
      await write(first, { name: 'topics/editor', description: 'Editor', new: 'Helix' });
      await write(first, { name: 'people/ada', description: 'Ada', new: 'Math.' });
      await write(first, { name: 'areas/old', description: 'Old', new: 'gone' });
      await first.session.call('memory_drop', { name: 'areas/old' });
      const before = await memoryState(first);
      await first.session.close();

      const second = await start(setup, { reuse: first });
      expect(await memoryState(second)).toEqual(before);
      expect(before.index.text).toBe('people/ada (6 bytes): Ada\ntopics/editor (6 bytes): Editor');
    });

    it('records the client name from the handshake as the actor of each change', async () => {
      const server = await start(setup, { clientName: 'claude-code' });
      await write(server, { name: 'topics/editor', description: 'Editor', new: 'Helix' });
      await write(server, { name: 'topics/editor', new: 'Vim' });
      await server.session.call('memory_drop', { name: 'topics/editor' });
      const actors = await server.database.query<{ actor: string }>('SELECT actor FROM revisions');
      expect(actors.map((row) => row.actor)).toEqual(['claude-code', 'claude-code', 'claude-code']);
    });

    perDatabase('loses no line when two servers append to one entry of one database concurrently', async () => {
      const a = await start(setup, { clientName: 'client-a' });
      const b = await start(setup, { reuse: a, clientName: 'client-b' });
      await write(a, { name: 'areas/log', description: 'Shared log', new: 'start' });
      const appends = (server: Server, prefix: string) =>
        Array.from({ length: 50 }, (_, i) =>
          server.session.call('memory_write', { name: 'areas/log', new: `${prefix}${i}` }),
        );
      const outcomes = await Promise.all([...appends(a, 'a'), ...appends(b, 'b')]);

      expect(outcomes.filter((outcome) => outcome.isError)).toEqual([]);
      const lines = (await storedBody(a, 'areas/log'))?.split('\n') ?? [];
      expect(lines.pop()).toBe('');
      const expected = ['start', ...Array.from({ length: 50 }, (_, i) => [`a${i}`, `b${i}`]).flat()];
      expect([...lines].sort()).toEqual(expected.sort());
      expect(new Set(lines).size).toBe(101);
      const [entry] = await a.database.query("SELECT revision FROM entries WHERE name = 'areas/log'");
      expect(entry).toEqual({ revision: 101 });
    });
  });
});

/** Sends JSON-RPC lines to `engram stdio` by hand and collects what it prints. */
class RawServer {
  readonly stdoutLines: string[] = [];
  stderr = '';
  private readonly child: ChildProcess;
  private readonly waiting = new Map<number, (message: Record<string, unknown>) => void>();

  constructor(dir: TempDir) {
    this.child = spawn(process.execPath, [ENGRAM_CLI, 'stdio', '--db', dir.file('m.db')], {
      env: childEnv(dir.path),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      this.stdoutLines.push(line);
      const message = JSON.parse(line) as Record<string, unknown>;
      if (typeof message.id === 'number') this.waiting.get(message.id)?.(message);
    });
  }

  send(message: Record<string, unknown>): void {
    this.child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  }

  request(id: number, method: string, params?: unknown): Promise<Record<string, unknown>> {
    const answered = new Promise<Record<string, unknown>>((resolve) => this.waiting.set(id, resolve));
    this.send({ id, method, ...(params === undefined ? {} : { params }) });
    return answered;
  }

  /** Closes stdin and resolves with the exit code. */
  end(): Promise<number | null> {
    const exited = new Promise<number | null>((resolve) => this.child.once('exit', resolve));
    this.child.stdin?.end();
    return exited;
  }
}

describe('engram stdio on the wire', () => {
  it('writes only JSON-RPC to stdout and its log to stderr', async () => {
    const dir = tempDir();
    const server = new RawServer(dir);
    const initialized = await server.request(1, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'raw-client', version: '1.0.0' },
    });
    expect(initialized).toMatchObject({ result: { serverInfo: { name: 'engram' } } });
    server.send({ method: 'notifications/initialized' });
    const listed = await server.request(2, 'tools/list');
    expect((listed.result as { tools: unknown[] }).tools).toHaveLength(3);
    const called = await server.request(3, 'tools/call', {
      name: 'memory_write',
      arguments: { name: 'topics/raw', description: 'Raw', new: 'by hand' },
    });
    expect(called).toMatchObject({ result: { content: [{ type: 'text', text: 'topics/raw (8 bytes): Raw' }] } });
    expect(await server.end()).toBe(0);

    expect(server.stdoutLines).toHaveLength(3);
    for (const line of server.stdoutLines) {
      expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0', id: expect.any(Number) });
    }
    expect(server.stderr).toContain('engram: serving MCP on stdio');
    expect(queryDatabase(dir.file('m.db'), 'SELECT actor FROM revisions')).toEqual([{ actor: 'raw-client' }]);
  });
});
