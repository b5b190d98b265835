/**
 * A large import neither stalls nor swells the server (issue #9, class 11): the body of
 * `POST /api/import` is parsed and checked as it arrives, a slice at a time, so the event
 * loop stays free for everyone else whatever the document's size; a document over a cap is
 * refused as soon as that is known, without reading the rest; and what an import holds
 * does not grow with the document. Measured as event-loop delay and heap, never wall time.
 */

import { describe, expect, it } from 'vitest';
import { HELD_LOOP_MS, withEventLoopDelay } from '../helpers/event-loop.js';
import { collectGarbage, withHeapPeak } from '../helpers/heap.js';
import { contents, LOCAL } from './api-client.js';
import { startTestServer } from './fixtures.js';
import { postImport } from './import-client.js';

const LONG_DESCRIPTION = 'A long description that says little, over and over. '.repeat(4).slice(0, 190);

/**
 * The class-3 attack: 240,000 entries with empty bodies and long descriptions, about 58 MB,
 * under the 64 MiB body cap. Before the fix the server parsed and checked it in one stretch
 * of seconds, holding four copies of it.
 */
function attackDocument(): Buffer {
  const entries = Array.from(
    { length: 240_000 },
    (_, i) => `{"name":"topics/n${i}","description":"${LONG_DESCRIPTION}","body":""}`,
  );
  return Buffer.from(`{"format":"engram-export","version":1,"entries":[${entries.join(',')}]}`);
}

/** A document the server must read to its end (its trash is checked, never imported): about 30 MB. */
function longTrashDocument(): Buffer {
  const entries = Array.from(
    { length: 100_000 },
    (_, i) =>
      `{"name":"topics/n${i}","description":"${LONG_DESCRIPTION}","body":"",` +
      '"droppedAt":"2026-01-01T00:00:00.000Z","droppedBy":"test"}',
  );
  return Buffer.from(
    `{"format":"engram-export","version":1,"entries":[{"name":"topics/kept","description":"Kept","body":"x"}],` +
      `"trash":[${entries.join(',')}]}`,
  );
}

/**
 * What two imports in flight may hold here, whatever the documents' size: a slice of each
 * body, the parser's state, the entries kept (16 MB measured, garbage not yet collected
 * included). Before the fix, each held its 30 MB document several times over.
 */
const HELD_HEAP_BYTES = 48 * 1024 * 1024;

/** One entry of a history no server keeps, about 25 MB: before the fix its revisions were checked in one stretch. */
function longHistoryDocument(): Buffer {
  const revisions = Array.from(
    { length: 100_000 },
    (_, i) =>
      `{"revision":${i + 1},"operation":"replace","actor":"test","at":"2026-01-01T00:00:00.000Z",` +
      `"description":"${LONG_DESCRIPTION}","body":""}`,
  );
  return Buffer.from(
    '{"format":"engram-export","version":1,"entries":[{"name":"topics/long","description":"Long",' +
      `"body":"x","revisions":[${revisions.join(',')}]}]}`,
  );
}

/**
 * The same attack as another memory system's file: a 31 MB memory.jsonl of 110,000 entities,
 * sent to `?from=server-memory`. Before the fix its lines were parsed and planned whole (5 s;
 * 10 s at 60 MB).
 */
function attackMemoryJsonl(): Buffer {
  const lines = Array.from({ length: 110_000 }, (_, i) =>
    JSON.stringify({ type: 'entity', name: `n${i}`, entityType: 'thing', observations: [LONG_DESCRIPTION] }),
  );
  return Buffer.from(JSON.stringify({ files: [{ path: 'memory.jsonl', text: lines.join('\n') }] }));
}

/**
 * A stall this test allows beyond HELD_LOOP_MS, and does not yet fix: a file's text comes
 * out of the body's parser as a string of many pieces, and the bridge's first look at it
 * makes V8 copy all of it into one string, ~200 ms for 60 MB on a 2-core AMD EPYC here
 * (298 ms measured in a CI run), in one stretch. Ending it means carrying a file's text
 * as its pieces through the bridges. The bridge's own parsing, which this test guards,
 * held the loop for the whole parse before it read a slice at a time (JSON.parse of the
 * file, 0.25 to 0.4 s on a faster machine, with a scan for NUL before it).
 */
const FILE_TEXT_FLATTEN_MS = 250;

/** A `?from` import body holding one file. */
const fromFiles = (path: string, text: string) => Buffer.from(JSON.stringify({ files: [{ path, text }] }));

/** One export entry of the llama.cpp WebUI, as it stores it. */
const webuiEntry = (i: number, description: string, body: string) => ({
  body,
  description,
  name: `topics/n${i}`,
  updated: 1_764_000_000_000 + i,
});

/**
 * The attack as a llama.cpp WebUI export: 220,000 entries, a 60 MB file sent to
 * `?from=llama-webui` (a 64 MB body, its quotes escaped). Before the fix the bridge parsed
 * the file's text with one JSON.parse (0.25 to 0.4 s of event loop), after a pass over all
 * of it for NUL characters.
 */
function attackWebuiExport(): Buffer {
  const entries = Array.from({ length: 220_000 }, (_, i) => webuiEntry(i, `${LONG_DESCRIPTION}, said again`, ''));
  const text = JSON.stringify({ entries });
  return Buffer.from(JSON.stringify({ files: [{ path: 'llama_memory_2026-12-03.json', text }] }));
}

describe('POST /api/import of a document of many megabytes', () => {
  it('refuses the 58 MB, 240,000-entry attack at the entry cap, holding the event loop under the bound', async () => {
    const server = await startTestServer();
    await server.memory.write(LOCAL, { name: 'topics/before', description: 'Before', new: 'kept' });
    const before = await contents(server.memory);
    const document = attackDocument();
    // The first import loads the schema's library (some 60 ms, once per process): not what is measured here.
    await postImport(server.port, Buffer.from('{"format":"engram-export","version":1,"entries":[]}'));
    collectGarbage();
    const { result, maxDelayMs } = await withEventLoopDelay(() => postImport(server.port, document));
    expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
    expect(result.status).toBe(413);
    expect(result.json.error.code).toBe('TOO_MANY_ENTRIES');
    expect(result.json.error.message).toMatch(
      /^the import would make 1,001 entries in this memory; the cap is 1,000\./,
    );
    expect(await contents(server.memory)).toEqual(before);
  });

  it('reads a 30 MB document to its end a slice at a time, holding the event loop under the bound', async () => {
    const server = await startTestServer();
    const document = longTrashDocument();
    collectGarbage();
    const { result, maxDelayMs } = await withEventLoopDelay(() => postImport(server.port, document));
    expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
    expect(result.status).toBe(200);
    expect(result.json.created).toEqual(['topics/kept']);
  });

  it('reads an entry of 100,000 revisions one revision at a time, holding the event loop under the bound', async () => {
    const server = await startTestServer();
    const document = longHistoryDocument();
    collectGarbage();
    const { result, maxDelayMs } = await withEventLoopDelay(() => postImport(server.port, document));
    expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
    expect(result.status).toBe(200);
    expect(result.json.created).toEqual(['topics/long']);
  });

  it('says which revision of which entry is wrong, as before', async () => {
    const server = await startTestServer();
    const revision = { revision: 1, operation: 'create', actor: 'test', at: 'yesterday', description: 'A', body: 'a' };
    const document = {
      format: 'engram-export',
      version: 1,
      entries: [
        { name: 'topics/a', description: 'A', body: 'a' },
        {
          name: 'topics/b',
          description: 'B',
          body: 'b',
          revisions: [{ ...revision, at: '2026-01-01T00:00:00Z' }, revision],
        },
      ],
    };
    const result = await postImport(server.port, Buffer.from(JSON.stringify(document)));
    expect(result.status).toBe(400);
    expect(result.json.error.message).toMatch(
      /^the import file is not an Engram export: at entries\[1\]\.revisions\[1\]\.at: .+; nothing was imported\.$/,
    );
    expect(await contents(server.memory)).toEqual([]);
  });

  it('holds a few MB for two such imports at once, not the documents', async () => {
    const server = await startTestServer({ auth: 'token' });
    const tokens = await Promise.all(['alice', 'bob'].map((user) => server.access.create({ user })));
    const document = longTrashDocument();
    const { result, peakBytes } = await withHeapPeak(() =>
      Promise.all(tokens.map(({ token }) => postImport(server.port, document, token))),
    );
    expect(result.map((answer) => answer.status)).toEqual([200, 200]);
    // Each document is 30 MB; read whole, each import held it several times over.
    expect(peakBytes).toBeLessThan(HELD_HEAP_BYTES);
  });

  it('refuses a 31 MB memory.jsonl of 110,000 entities at the entry cap, holding the event loop under the bound', async () => {
    const server = await startTestServer();
    const document = attackMemoryJsonl();
    // The first import from memory.jsonl loads its bridge's code (once per process): not what is measured here.
    await postImport(server.port, fromFiles('memory.jsonl', ''), undefined, '/api/import?from=server-memory');
    collectGarbage();
    const { result, maxDelayMs } = await withEventLoopDelay(() =>
      postImport(server.port, document, undefined, '/api/import?from=server-memory'),
    );
    expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
    expect(result.status).toBe(413);
    expect(result.json.error.code).toBe('TOO_MANY_ENTRIES');
    expect(await contents(server.memory)).toEqual([]);
  });

  it('refuses a 60 MB llama.cpp WebUI export of 220,000 entries at the entry cap, holding the event loop under the bound', async () => {
    const server = await startTestServer();
    const document = attackWebuiExport();
    expect(document.length).toBeGreaterThan(60_000_000);
    // The first import from the llama.cpp WebUI loads its bridge's code (once per process): not what is measured here.
    const empty = JSON.stringify({ entries: [] });
    await postImport(
      server.port,
      fromFiles('llama_memory_2026-12-03.json', empty),
      undefined,
      '/api/import?from=llama-webui',
    );
    collectGarbage();
    const { result, maxDelayMs } = await withEventLoopDelay(() =>
      postImport(server.port, document, undefined, '/api/import?from=llama-webui'),
    );
    expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS + FILE_TEXT_FLATTEN_MS);
    expect(result.status).toBe(413);
    expect(result.json.error.code).toBe('TOO_MANY_ENTRIES');
    expect(result.json.error.message).toMatch(
      /^the import would make 1,001 entries in this memory; the cap is 1,000\./,
    );
    expect(await contents(server.memory)).toEqual([]);
  });

  it('imports a llama.cpp WebUI export of many slices exactly, entry by entry', async () => {
    const server = await startTestServer();
    const entries = Array.from({ length: 900 }, (_, i) =>
      webuiEntry(i, `Entry ${i}, "quoted" 🙂`, `${'text, naïve café 🙂\n'.repeat(40)}${i}\n`),
    );
    const text = JSON.stringify({ entries }, null, 2);
    const body = Buffer.from(JSON.stringify({ files: [{ path: 'llama_memory_2026-12-03.json', text }] }));
    const result = await postImport(server.port, body, undefined, '/api/import?from=llama-webui');
    expect(result.status).toBe(200);
    expect(result.json.report.created).toHaveLength(900);
    // Opened 50 at a time, the most memory_open takes.
    for (let start = 0; start < entries.length; start += 50) {
      const wanted = entries.slice(start, start + 50);
      const { found } = await server.memory.open(
        LOCAL,
        wanted.map(({ name }) => name),
      );
      expect(found.map(({ name, description, body }) => ({ name, description, body }))).toEqual(
        wanted.map(({ name, description, body }) => ({ name, description, body })),
      );
    }
  });
});
