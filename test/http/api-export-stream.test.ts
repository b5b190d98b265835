/**
 * A large export does not make the server hold it (issue #9, class 1): ten clients
 * downloading a memory of many megabytes at once, with or without its history, raise the
 * server's heap by a few MB each, a bound that does not grow with the export, because the
 * document is read a few entries at a time and written out as the clients take it. Also:
 * what the gate on imports answers (class 11).
 */

import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../helpers/heap.js';
import { rules } from '../helpers/rules.js';
import { api, apiError, LOCAL } from './api-client.js';
import { startTestServer } from './fixtures.js';

/** Downloads `path`, counting the bytes and keeping none of them. */
function download(port: number, path: string): Promise<number> {
  return startDownload(port, path).then((download) => download.done);
}

interface Download {
  /** Stops reading after `bytes`; resolves once there. */
  pauseAfter(bytes: number): Promise<void>;
  resume(): void;
  readonly done: Promise<number>;
}

function startDownload(port: number, path: string): Promise<Download> {
  return new Promise((resolveStart, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, headers: { Host: `127.0.0.1:${port}` } }, (res) => {
      let bytes = 0;
      let pauseAt = Number.POSITIVE_INFINITY;
      let paused: () => void = () => {};
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes >= pauseAt) {
          pauseAt = Number.POSITIVE_INFINITY;
          res.pause();
          paused();
        }
      });
      const done = new Promise<number>((resolve) => res.on('end', () => resolve(bytes)));
      res.on('error', reject);
      resolveStart({
        pauseAfter: (limit) =>
          new Promise((resolve) => {
            pauseAt = limit;
            paused = resolve;
          }),
        resume: () => res.resume(),
        done,
      });
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** The heap in use once garbage is collected: what the process really holds. */
function retainedHeap(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/**
 * What one download in flight may hold here, whatever the export's size: a batch of entries
 * read from the store, one entry's revisions and the JSON of one entry (about 1 MB without
 * history and 2 MB with ten revisions an entry, as measured). Before exports streamed, each
 * download held the whole document, here over 20 MB.
 */
const HELD_PER_DOWNLOAD = 3 * 1024 * 1024;

/**
 * Ten clients download `path` at once and pause halfway: what the server then holds,
 * beyond what it held before, and what each client got in the end.
 */
async function heldByTenHalfwayDownloads(port: number, path: string) {
  const size = await download(port, path);
  const baseline = retainedHeap();
  const downloads = await Promise.all(Array.from({ length: 10 }, () => startDownload(port, path)));
  await Promise.all(downloads.map((each) => each.pauseAfter(size / 2)));
  // Let the server fill what the sockets take and wait for the clients to read again.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const held = retainedHeap() - baseline;
  for (const each of downloads) each.resume();
  const sizes = await Promise.all(downloads.map((each) => each.done));
  return { size, held, sizes };
}

describe('GET /api/export, streamed', () => {
  it('ten clients halfway through downloading a large memory hold a few MB each, not the export', async () => {
    const server = await startTestServer();
    const body = `${'x'.repeat(120)}\n`.repeat(130);
    // Written straight to the store, in one transaction: past the caps a Memory would apply.
    await server.store.mutateAll(
      LOCAL,
      () =>
        Array.from({ length: 1_500 }, (_, i) => ({
          name: `topics/entry-${i}`,
          change: { kind: 'put', operation: 'create', description: `Entry ${i}`, body } as const,
        })),
      rules,
    );
    const { size, held, sizes } = await heldByTenHalfwayDownloads(server.port, '/api/export');

    expect(size).toBeGreaterThan(20_000_000);
    expect(sizes.every((each) => Math.abs(each - size) < 1_000)).toBe(true);
    expect(held).toBeLessThan(10 * HELD_PER_DOWNLOAD);
  });

  it('so do ten clients downloading it with its history (?history=1), however many revisions it holds', async () => {
    const server = await startTestServer();
    // Ten revisions of 16 KB for each of 150 entries, past the history cap a Memory would apply.
    const uncapped = { ...rules, historyCap: Number.MAX_SAFE_INTEGER };
    for (let revision = 1; revision <= 10; revision++) {
      const body = `${`revision ${revision} `.padEnd(127, 'x')}\n`.repeat(128);
      await server.store.mutateAll(
        LOCAL,
        () =>
          Array.from({ length: 150 }, (_, i) => ({
            name: `topics/entry-${i}`,
            change: {
              kind: 'put',
              operation: revision === 1 ? 'create' : 'replace',
              description: `Entry ${i}`,
              body,
            } as const,
          })),
        uncapped,
      );
    }
    const { size, held, sizes } = await heldByTenHalfwayDownloads(server.port, '/api/export?history=1');

    expect(size).toBeGreaterThan(20_000_000);
    expect(sizes.every((each) => Math.abs(each - size) < 1_000)).toBe(true);
    expect(held).toBeLessThan(10 * HELD_PER_DOWNLOAD);
  });

  it('sends a document that parses, with the download headers', async () => {
    const server = await startTestServer();
    await server.memory.write(LOCAL, { name: 'topics/a', description: 'A', new: 'a' });
    const response = await api(server.port, 'GET', '/api/export?history=1');
    expect(response.status).toBe(200);
    expect(response.headers['content-disposition']).toBe('attachment; filename="engram-export.json"');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.json.entries.map((entry: { name: string }) => entry.name)).toEqual(['topics/a']);
    expect(response.json.trash).toEqual([]);
  });
});

describe('POST /api/import, gated', () => {
  const document = (entries: unknown[]) => ({ format: 'engram-export', version: 1, entries });

  it('refuses a second import of the same user while one runs, with 429 and Retry-After', async () => {
    const server = await startTestServer();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const original = server.transfer.import.bind(server.transfer);
    server.transfer.import = async (...args) => {
      await held;
      return original(...args);
    };
    const first = api(server.port, 'POST', '/api/import', {
      body: document([{ name: 'topics/a', description: 'A', body: 'a\n' }]),
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = await api(server.port, 'POST', '/api/import', { body: document([]) });
    expect(second.status).toBe(429);
    expect(second.headers['retry-after']).toBe('5');
    expect(second.json).toEqual(
      apiError(
        'BUSY',
        'Another import into this memory is still running; nothing was imported. Try again when it has finished.',
      ),
    );
    release();
    expect((await first).status).toBe(200);
    expect((await api(server.port, 'POST', '/api/import', { body: document([]) })).status).toBe(200);
  });

  it("refuses a third user's import while two others run, with 429 and Retry-After, and takes it once one ends", async () => {
    const server = await startTestServer({ auth: 'token' });
    const [ada, bob, cy] = await Promise.all(
      ['ada', 'bob', 'cy'].map(async (user) => (await server.access.create({ user, label: user })).token),
    );
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered = 0;
    let bothIn: () => void = () => {};
    const twoRunning = new Promise<void>((resolve) => {
      bothIn = resolve;
    });
    const original = server.transfer.import.bind(server.transfer);
    server.transfer.import = async (...args) => {
      if (++entered === 2) bothIn();
      await held;
      return original(...args);
    };
    const running = [ada, bob].map((token) =>
      api(server.port, 'POST', '/api/import', {
        token,
        body: document([{ name: 'topics/a', description: 'A', body: 'a\n' }]),
      }),
    );
    await twoRunning;

    const third = await api(server.port, 'POST', '/api/import', {
      token: cy,
      body: document([{ name: 'topics/c', description: 'C', body: 'c\n' }]),
    });
    expect(third.status).toBe(429);
    expect(third.headers['retry-after']).toBe('5');
    expect(third.json).toEqual(
      apiError(
        'BUSY',
        'The server is already running as many imports as it takes at once; nothing was imported. Try again in a moment.',
      ),
    );
    expect(await server.memory.index({ user: 'cy', label: 'test' })).toEqual([]);

    release();
    expect((await Promise.all(running)).map((response) => response.status)).toEqual([200, 200]);
    const again = await api(server.port, 'POST', '/api/import', {
      token: cy,
      body: document([{ name: 'topics/c', description: 'C', body: 'c\n' }]),
    });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ created: ['topics/c'] });
  });

  it('leaves out entries of groups the model cannot write unless allGroups is asked', async () => {
    const server = await startTestServer();
    const entries = [
      { name: 'topics/ok', description: 'OK', body: 'ok\n' },
      { name: 'secret/x', description: 'X', body: 'x\n' },
    ];
    const skipped = await api(server.port, 'POST', '/api/import', { body: document(entries) });
    expect(skipped.json).toMatchObject({ created: ['topics/ok'], skipped: ['secret/x'] });
    const all = await api(server.port, 'POST', '/api/import?allGroups=1', { body: document(entries) });
    expect(all.json).toMatchObject({ created: ['secret/x'], unchanged: ['topics/ok'], skipped: [] });
  });
});
