/**
 * An import from another memory system neither swells nor stalls the server whatever its
 * file repeats or nests (issue #25): a plan lists a bounded number of the items it leaves
 * out and counts the rest, so a ChatGPT paste of one line millions of times is one
 * report item with its count; splitting is one pass over the text, done a step at a time;
 * and a JSONL line nested millions of levels deep is refused at the 65th, before it is
 * parsed. Measured as the server's heap, the longest pause of its event loop while the
 * hostile import runs (beyond the one known stall of flattening the file's text), and the
 * server serving others afterwards — never as wall time.
 */

import { describe, expect, it } from 'vitest';
import { HELD_LOOP_MS, withEventLoopDelay } from '../helpers/event-loop.js';
import { collectGarbage, withHeapPeak } from '../helpers/heap.js';
import { contents } from './api-client.js';
import { raw, startTestServer, type TestServer } from './fixtures.js';
import { postImport } from './import-client.js';

/**
 * The stall api-import-stream.test.ts allows beyond HELD_LOOP_MS for a file of some 60 MB,
 * and does not fix: the file's text comes out of the body's parser as a string of many
 * pieces, and the bridge's first look at it makes V8 copy it into one (~200 ms for 60 MB).
 * It is known and separate: these tests allow it, so the loop may be held up to
 * HELD_LOOP_MS + FILE_TEXT_FLATTEN_MS once; the bridge's own reading never holds it longer
 * than HELD_LOOP_MS (test/transfer/bridges/bounds.test.ts measures that on a flat text).
 */
const FILE_TEXT_FLATTEN_MS = 250;

/** Room for a test of many megabytes on a busy machine (its time is never what is asserted). */
const HEAVY_TEST_MS = 120_000;

/** A `?from` import body holding one file. */
const fromFiles = (path: string, text: string) => Buffer.from(JSON.stringify({ files: [{ path, text }] }));

/** Runs the hostile import, measuring the server's heap and the longest pause of its event loop meanwhile. */
async function measured(server: TestServer, body: Buffer, path: string) {
  // The first import of a kind loads its bridge's code (once per process): not what is measured here.
  await postImport(server.port, fromFiles('warm-up', 'x'), undefined, path.replace(/dryRun=1&?/, 'dryRun=1&'));
  collectGarbage();
  const { result, peakBytes } = await withHeapPeak(() =>
    withEventLoopDelay(() => postImport(server.port, body, undefined, path)),
  );
  return { answer: result.result, maxDelayMs: result.maxDelayMs, peakBytes };
}

/** The server still answers others once the hostile import is over. */
async function stillServing(server: TestServer): Promise<void> {
  expect((await raw(server.port, { path: '/healthz' })).status).toBe(200);
  const small = await postImport(
    server.port,
    fromFiles('memories.txt', 'Likes tea\n'),
    undefined,
    '/api/import?from=chatgpt',
  );
  expect(small.status).toBe(200);
}

describe('POST /api/import?from=chatgpt of a paste that repeats one line', () => {
  it(
    "answers one duplicate item with its count, not 2.6 million, in a bounded heap, the loop held no longer than the text's flattening",
    async () => {
      const server = await startTestServer();
      // 60 MB: one line, 2.6 million times. Before: one report item per repeat, some 1 GB (shorter lines, past the heap).
      const text = 'Prefers short answers.\n'.repeat(2_600_000);
      const { answer, maxDelayMs, peakBytes } = await measured(
        server,
        fromFiles('memories.txt', text),
        '/api/import?from=chatgpt&dryRun=1',
      );
      expect(answer.status).toBe(200);
      expect(answer.json.items).toEqual([
        { source: '1 memories', names: [{ name: 'topics/chatgpt-memories', action: 'create' }], notes: [] },
        {
          source: 'line 2',
          names: [],
          notes: ['the same memory as line 1, and 2,599,998 more lines after it: kept once'],
          problem: 'duplicate',
        },
      ]);
      expect(JSON.stringify(answer.json).length).toBeLessThan(4096);
      // The text itself, as sent and as the parser put it together: some 3 times 60 MB at most.
      expect(peakBytes).toBeLessThan(256 * 1024 * 1024);
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS + FILE_TEXT_FLATTEN_MS);
      await stillServing(server);
      expect(await contents(server.memory)).toEqual([
        expect.objectContaining({ name: 'topics/chatgpt-memories', body: 'Likes tea\n' }),
      ]);
    },
    HEAVY_TEST_MS,
  );

  it(
    "reads a paste with \\r line ends line by line: one duplicate item, in a bounded heap, the loop held no longer than the text's flattening",
    async () => {
      const server = await startTestServer();
      // 60 MB of lines ending in \r alone. Before: one "line", split into 2.6 million strings and read in one step.
      const text = 'Prefers short answers.\r'.repeat(2_600_000);
      const { answer, maxDelayMs, peakBytes } = await measured(
        server,
        fromFiles('memories.txt', text),
        '/api/import?from=chatgpt&dryRun=1',
      );
      expect(answer.status).toBe(200);
      expect(answer.json.items[1]).toEqual({
        source: 'line 2',
        names: [],
        notes: ['the same memory as line 1, and 2,599,998 more lines after it: kept once'],
        problem: 'duplicate',
      });
      expect(peakBytes).toBeLessThan(256 * 1024 * 1024);
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS + FILE_TEXT_FLATTEN_MS);
      await stillServing(server);
    },
    HEAVY_TEST_MS,
  );

  it(
    'lists 100 duplicates of distinct lines and counts the rest',
    async () => {
      const server = await startTestServer();
      const lines = Array.from({ length: 5_000 }, (_, i) => `memory ${i}`);
      const answer = await postImport(
        server.port,
        fromFiles('memories.txt', `${lines.join('\n')}\n${lines.join('\n')}\n`),
        undefined,
        '/api/import?from=chatgpt&dryRun=1',
      );
      expect(answer.status).toBe(200);
      const duplicates = answer.json.items.filter((item: { problem?: string }) => item.problem === 'duplicate');
      expect(duplicates).toHaveLength(100);
      expect(duplicates[0]).toEqual({
        source: 'line 5001',
        names: [],
        notes: ['the same memory as line 1: kept once'],
        problem: 'duplicate',
      });
      expect(answer.json.unlisted).toEqual({ duplicate: 4_900, 'too-large': 0, 'not-an-entry': 0 });
    },
    HEAVY_TEST_MS,
  );
});

describe('POST /api/import?from=chatgpt&split=1 of a paste of millions of lines', () => {
  it(
    "splits it in one pass, a step at a time: the loop held no longer than the text's flattening, and the server serves others after",
    async () => {
      // Caps raised so that the whole paste fits (30 MB, some 1,900 entries): the split itself is what is measured.
      const server = await startTestServer({ policy: { maxEntries: 4_000, userCap: 64 * 1024 * 1024 } });
      const lines = Array.from({ length: 2_000_000 }, (_, i) => `memory ${i}`);
      const { answer, maxDelayMs } = await measured(
        server,
        fromFiles('memories.txt', lines.join('\n')),
        '/api/import?from=chatgpt&dryRun=1&split=1',
      );
      expect(answer.status).toBe(200);
      const [item] = answer.json.items;
      // Before: each line measured against the whole piece so far (a 6-million-line paste held the loop some 40 s).
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS + FILE_TEXT_FLATTEN_MS);
      expect(item.names.length).toBeGreaterThan(1_500);
      expect(item.names.slice(0, 2)).toEqual([
        { name: 'topics/chatgpt-memories', action: 'create' },
        { name: 'topics/chatgpt-memories-2', action: 'create' },
      ]);
      await stillServing(server);
    },
    HEAVY_TEST_MS,
  );

  it(
    "refuses a paste past the user cap as soon as it passes it, in a bounded heap, the loop held no longer than the text's flattening",
    async () => {
      const server = await startTestServer();
      const lines = Array.from({ length: 6_000_000 }, (_, i) => `m${i}`);
      const { answer, maxDelayMs, peakBytes } = await measured(
        server,
        fromFiles('memories.txt', lines.join('\n')),
        '/api/import?from=chatgpt&dryRun=1&split=1',
      );
      expect(answer.status).toBe(413);
      expect(answer.json.error.code).toBe('TOO_LARGE');
      expect(answer.json.error.message).toMatch(
        /^the entries of this source come to more than 4,194,304 bytes, all one memory may hold .*Import a part of it at a time, or raise userCap in the configuration\.$/,
      );
      expect(peakBytes).toBeLessThan(256 * 1024 * 1024);
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS + FILE_TEXT_FLATTEN_MS);
      await stillServing(server);
    },
    HEAVY_TEST_MS,
  );
});

describe('POST /api/import?from=server-memory of hostile lines', () => {
  it(
    "refuses a line nested 25 million levels deep at the 65th, before parsing it, in a bounded heap, the loop held no longer than the text's flattening",
    async () => {
      const server = await startTestServer();
      // Before: JSON.parse of the line held the server 15 s and took 1.2 GB.
      const { answer, maxDelayMs, peakBytes } = await measured(
        server,
        fromFiles('memory.jsonl', '['.repeat(25_000_000)),
        '/api/import?from=server-memory',
      );
      expect(answer.status).toBe(400);
      expect(answer.json.error).toEqual({
        code: 'INVALID_ARGUMENT',
        message:
          'memory.jsonl line 1 is JSON nested more than 64 levels deep, which no memory.jsonl line is; nothing was imported.',
      });
      expect(peakBytes).toBeLessThan(128 * 1024 * 1024);
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS + FILE_TEXT_FLATTEN_MS);
      await stillServing(server);
    },
    HEAVY_TEST_MS,
  );

  it(
    "lists 100 relations to no entity out of 500,000 and counts the rest, in a bounded heap, the loop held no longer than the text's flattening",
    async () => {
      const server = await startTestServer();
      const entity = JSON.stringify({ type: 'entity', name: 'Ada', entityType: 'person', observations: ['x'] });
      const relation = JSON.stringify({ type: 'relation', from: 'Nobody', to: 'Ada', relationType: 'knows' });
      const text = `${entity}\n${`${relation}\n`.repeat(500_000)}`;
      const { answer, maxDelayMs, peakBytes } = await measured(
        server,
        fromFiles('memory.jsonl', text),
        '/api/import?from=server-memory&dryRun=1',
      );
      expect(answer.status).toBe(200);
      expect(answer.json.items).toHaveLength(101);
      expect(answer.json.items[1]).toEqual({
        source: 'line 2: relation "Nobody" knows "Ada"',
        names: [],
        notes: ['the file has no entity named "Nobody": left out'],
        problem: 'not-an-entry',
      });
      expect(answer.json.unlisted).toEqual({ duplicate: 0, 'too-large': 0, 'not-an-entry': 499_900 });
      // Before: a report item for each (800,000 of them: 800 MB of heap, the loop held 6 s, a 115 MB answer).
      expect(peakBytes).toBeLessThan(256 * 1024 * 1024);
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS + FILE_TEXT_FLATTEN_MS);
      await stillServing(server);
    },
    HEAVY_TEST_MS,
  );
});

describe('POST /api/import?from= of a file named by a path of megabytes', () => {
  it(
    'refuses a path longer than any file path, before the report could echo it',
    async () => {
      const server = await startTestServer();
      const answer = await postImport(
        server.port,
        fromFiles(`topics/${'a'.repeat(5_000)}.md`, 'x'),
        undefined,
        '/api/import?from=anthropic-memory&dryRun=1',
      );
      expect(answer.status).toBe(400);
      expect(answer.json.error.message).toMatch(
        /^files\[0\]\.path is longer than 4,096 characters, which no file path is: send /,
      );
    },
    HEAVY_TEST_MS,
  );
});
