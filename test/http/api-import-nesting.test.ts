/**
 * An import read as it arrives (import-stream.ts) holds the values it is still inside of,
 * and the top-level members it has met (each as its kind, until the document's checks):
 * the streaming parser keeps a frame of some 250 bytes for each level of nesting, so a body
 * of nothing but `[` made the server hold some 250 times what it read (4 MB of `[`: 270 MB
 * measured; at the 64 MiB import cap, more than the heap, and the server dies). Every other
 * JSON door refuses nesting deeper than MAX_JSON_DEPTH; an import does too, as soon as it
 * is passed, with nothing imported. Measured as heap, never wall time.
 */

import { describe, expect, it } from 'vitest';
import { withHeapPeak } from '../helpers/heap.js';
import { contents } from './api-client.js';
import { startTestServer } from './fixtures.js';
import { postImport } from './import-client.js';

/** About a million levels: what a 4 MB body can open. */
const LEVELS = 1_000_000;

/** What reading such a body may hold: a slice of it and the parser's first levels (before the fix: some 250 MB). */
const HELD_HEAP_BYTES = 32 * 1024 * 1024;

describe('POST /api/import of JSON nested a million levels deep', () => {
  it.each([
    ['an Engram export', '/api/import', '{"format":"engram-export","version":1,"entries":['],
    ['a file of another system', '/api/import?from=markdown', '{"files":[{"path":"a/b.md","text":"x"}],"options":'],
  ])('refuses %s at the 65th level, holding a few MB, and imports nothing', async (_, path, start) => {
    const server = await startTestServer();
    const body = Buffer.from(start + '['.repeat(LEVELS));
    const { result, peakBytes } = await withHeapPeak(() => postImport(server.port, body, undefined, path));
    expect(result.status).toBe(400);
    expect(result.json.error.code).toBe('INVALID_ARGUMENT');
    expect(result.json.error.message).toBe(
      'the request body is JSON nested more than 64 levels deep; nothing was imported.',
    );
    expect(peakBytes).toBeLessThan(HELD_HEAP_BYTES);
    expect(await contents(server.memory)).toEqual([]);
  });
});

describe('POST /api/import of a body with 200,000 top-level members', () => {
  it.each([
    ['an Engram export', '/api/import', '{"format":"engram-export","version":1,'],
    ['a file of another system', '/api/import?from=markdown', '{"files":[{"path":"a/b.md","text":"x"}],'],
  ])('refuses %s at the 33rd member, holding a few MB, and imports nothing', async (_, path, start) => {
    const server = await startTestServer();
    const keys = Array.from({ length: 200_000 }, (_, i) => `"k${i}":0`).join(',');
    const body = Buffer.from(`${start}${keys},"entries":[]}`);
    const { result, peakBytes } = await withHeapPeak(() => postImport(server.port, body, undefined, path));
    expect(result.status).toBe(400);
    expect(result.json.error).toEqual({
      code: 'INVALID_ARGUMENT',
      message:
        'the request body has more than 32 top-level members, which no import document has; nothing was imported.',
    });
    expect(peakBytes).toBeLessThan(HELD_HEAP_BYTES);
    expect(await contents(server.memory)).toEqual([]);
  });
});

describe('POST /api/import of a body with a top-level member twice', () => {
  it('refuses it, imports nothing, and never takes the entries of both arrays', async () => {
    const server = await startTestServer();
    const entry = (name: string) => JSON.stringify({ name, description: name, body: `${name}\n` });
    const body = Buffer.from(
      `{"format":"engram-export","version":1,"entries":[${entry('topics/first')}],"entries":[${entry('topics/second')}]}`,
    );
    const result = await postImport(server.port, body);
    expect(result.status).toBe(400);
    expect(result.json.error).toEqual({
      code: 'INVALID_ARGUMENT',
      message:
        'the request body has the top-level member "entries" twice, which no import document has; nothing was imported.',
    });
    expect(await contents(server.memory)).toEqual([]);
  });
});
