/**
 * `engram stdio` answers a client's opening before its store opens (cli/stdio.ts): a tool
 * call sent in the same burst as `initialize` waits for the store and is answered from
 * it; a store that cannot be opened is still reported — on stderr as before, to each
 * tool call waiting for it, then the connection closes with exit code 1 — after the
 * opening has been answered.
 */

import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LineQueue } from '../../src/mcp/line-queue.js';
import { childEnv, ENGRAM_CLI, type TempDir, tempDir } from '../helpers/engram.js';

const line = (message: Record<string, unknown>) => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
const INITIALIZE = line({
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'store-open test', version: '1' } },
});
const INITIALIZED = line({ method: 'notifications/initialized' });
const LIST = line({ id: 2, method: 'tools/list' });
const toolCall = (id: number, name: string, args: Record<string, unknown>) =>
  line({ id, method: 'tools/call', params: { name, arguments: args } });

interface Answer {
  readonly id: number;
  readonly result?: { readonly tools?: unknown[]; readonly content?: { text: string }[]; readonly isError?: boolean };
  readonly error?: { readonly message: string };
}

/** `engram stdio` on `db`: its answers line by line, what it wrote on stderr, and its exit code once it ends. */
function start(dir: TempDir, db: string) {
  const child = spawn(process.execPath, [ENGRAM_CLI, 'stdio', '--db', db], {
    env: childEnv(dir.path),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output.stderr += chunk;
  });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output.stdout += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const lines = new LineQueue(child.stdout);
  const answers = async (count: number) => {
    const read: Answer[] = [];
    for (let n = 0; n < count; n++) read.push(JSON.parse(await lines.next()) as Answer);
    return read;
  };
  return { child, output, exited, answers };
}

/** A file where the memory should be that is no database at all. */
function damagedDatabase(dir: TempDir): string {
  const db = dir.file('damaged.db');
  writeFileSync(db, 'not a database, '.repeat(64));
  return db;
}

describe('engram stdio opens its store after the opening', () => {
  it('a tool call sent with the opening waits for the store and is answered from it', async () => {
    const dir = tempDir();
    const server = start(dir, dir.file('m.db'));
    const write = toolCall(3, 'memory_write', { name: 'topics/tea', description: 'Tea', new: 'Green, no sugar.' });
    const open = toolCall(4, 'memory_open', { names: ['topics/tea'] });
    server.child.stdin.write(INITIALIZE + INITIALIZED + LIST + write + open);
    const answers = await server.answers(4);
    server.child.stdin.end();
    expect(answers.map((answer) => answer.id)).toEqual([1, 2, 3, 4]);
    expect(answers[1]?.result?.tools).toHaveLength(3);
    expect(answers[2]?.result?.isError).toBe(false);
    expect(answers[3]?.result?.content?.[0]?.text).toContain('Green, no sugar.');
    expect(await server.exited).toBe(0);
  });

  it('a store that cannot be opened: stderr and every request say why, and it exits 1 of itself', async () => {
    const dir = tempDir();
    const db = damagedDatabase(dir);
    const server = start(dir, db);
    server.child.stdin.write(INITIALIZE + INITIALIZED + LIST + toolCall(3, 'memory_open', {}));
    // stdin stays open: the process ends of itself, as when the store was opened before serving.
    expect(await server.exited).toBe(1);
    const answers = server.output.stdout
      .split('\n')
      .filter((text) => text !== '')
      .map((text) => JSON.parse(text) as Answer);
    expect(answers.map((answer) => answer.id)).toEqual([1, 2, 3]);
    const why = `The file ${db} is not a readable Engram database`;
    expect(server.output.stderr).toContain(why);
    expect(server.output.stderr).not.toContain('serving MCP on stdio');
    // A call the SDK or the fast path took is answered as a tool's error; one still waiting for the SDK, as a JSON-RPC error.
    const call = answers[2];
    const told = call?.result?.isError === true ? call.result.content?.[0]?.text : call?.error?.message;
    expect(told).toContain(why);
    // Worded for the model: nothing happened, and calling again will not help.
    expect(told).toContain('Engram could not open its memory, so nothing was read or changed');
    expect(told).toContain('calling again will not help');
    if (process.env.ENGRAM_ACCEL_STDIO_FAST_PATH !== '0') {
      // The opening was answered before the store was opened, and so in full.
      expect(answers[1]?.result?.tools).toHaveLength(3);
      expect(call?.result?.isError).toBe(true);
    }
  });

  it('a store that cannot be opened is reported to a client that says nothing, and it exits 1', async () => {
    const dir = tempDir();
    const db = damagedDatabase(dir);
    const server = start(dir, db);
    expect(await server.exited).toBe(1);
    expect(server.output.stdout).toBe('');
    expect(server.output.stderr).toContain(`The file ${db} is not a readable Engram database`);
  });

  // With the fast path off the SDK answers initialize once loaded, by when the store has opened (STORE_OPEN_WAIT_MS).
  it.skipIf(process.env.ENGRAM_ACCEL_STDIO_FAST_PATH === '0')(
    'a signal before the store opened stops it without opening (or creating) the store',
    async () => {
      const dir = tempDir();
      const db = dir.file('never.db');
      const server = start(dir, db);
      server.child.stdin.write(INITIALIZE);
      expect((await server.answers(1))[0]?.id).toBe(1);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      expect(existsSync(db)).toBe(false);
      expect(server.output.stderr).not.toContain('serving MCP on stdio');
    },
  );

  it('a --db in a folder that does not exist is refused before anything is answered', async () => {
    const dir = tempDir();
    const db = join(dir.path, 'no-such-folder', 'memory.db');
    const server = start(dir, db);
    server.child.stdin.write(INITIALIZE);
    expect(await server.exited).toBe(1);
    expect(server.output.stdout).toBe('');
    expect(server.output.stderr).toContain(join(dir.path, 'no-such-folder'));
  });
});
