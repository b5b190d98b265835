/**
 * `engram stdio` against what a clumsy or hostile client writes on the wire: a line that
 * is not JSON, a line far over the limit, JSON nested too deep, JSON that is not JSON-RPC.
 * Each gets a JSON-RPC error and a line on stderr, and the server goes on serving. And a
 * client that pipelines a read (or a completion) right behind a write, without waiting, reads the write.
 * One process serves all of it, as one client's connection would.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it, vi } from 'vitest';
import { MAX_LINE_BYTES } from '../../src/mcp/stdio-transport.js';
import { childEnv, ENGRAM_CLI, type TempDir, tempDir } from '../helpers/engram.js';

type Message = Record<string, unknown> & { id?: unknown; error?: { code: number; message: string } };

/** Writes raw bytes to `engram stdio` and reads every line it answers. */
class Wire {
  readonly answers: Message[] = [];
  stderr = '';
  exitCode: number | null | undefined;
  private readonly child: ChildProcess;
  private readonly waiting = new Map<number, (message: Message) => void>();
  private readonly exited: Promise<number | null>;

  constructor(dir: TempDir) {
    this.child = spawn(process.execPath, [ENGRAM_CLI, 'stdio', '--db', dir.file('m.db')], {
      env: childEnv(dir.path),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      const message = JSON.parse(line) as Message;
      this.answers.push(message);
      if (typeof message.id === 'number') this.waiting.get(message.id)?.(message);
    });
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code) => {
        this.exitCode = code;
        resolve(code);
      }),
    );
  }

  write(text: string): void {
    this.child.stdin?.write(text);
  }

  /** The answer to request `id`; fails at once if the server exits first. */
  answer(id: number): Promise<Message> {
    return Promise.race([
      new Promise<Message>((resolve) => this.waiting.set(id, resolve)),
      this.exited.then((code) => Promise.reject(new Error(`engram stdio exited (${code}) before answering ${id}`))),
    ]);
  }

  request(id: number, method: string, params?: unknown): Promise<Message> {
    const answered = this.answer(id);
    this.write(`${line(id, method, params)}\n`);
    return answered;
  }

  /** Answers sent with id null, i.e. to lines whose id could not be read. */
  refusals(): Message[] {
    return this.answers.filter((message) => message.id === null);
  }

  end(): Promise<number | null> {
    this.child.stdin?.end();
    return this.exited;
  }
}

function line(id: number, method: string, params?: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
}

function toolCall(id: number, name: string, args: Record<string, unknown>): string {
  return line(id, 'tools/call', { name, arguments: args });
}

function textOf(message: Message): string {
  return (message.result as { content: { text: string }[] }).content[0]!.text;
}

describe('engram stdio on a hostile wire', () => {
  it('answers every bad line with a JSON-RPC error, logs it, and keeps serving', async () => {
    const wire = new Wire(tempDir());
    await wire.request(1, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'wire-test', version: '1' },
    });
    wire.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);

    // Not JSON: a parse error, and the next request is still answered.
    wire.write('this is not JSON\n');
    expect(await wire.request(2, 'tools/list')).toMatchObject({ result: { tools: expect.any(Array) } });
    expect(wire.refusals()).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the line is not valid JSON.' } },
    ]);
    // stderr is a pipe of its own: its line may arrive after the answer on stdout.
    await vi.waitFor(() => expect(wire.stderr).toContain('stdio: refused a line (-32700): Parse error'), {
      timeout: 10_000,
    });

    // 11 MiB on one line: refused for its size, and the server lives on.
    const huge = toolCall(3, 'memory_write', {
      name: 'topics/huge',
      description: 'Huge',
      new: 'x'.repeat(11 * 1024 * 1024),
    });
    wire.write(`${huge}\n`);
    expect(await wire.request(4, 'ping')).toMatchObject({ id: 4, result: {} });
    expect(wire.refusals()[1]).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: `Request too large: the limit is ${MAX_LINE_BYTES} bytes per line. Send smaller writes; an entry holds at most a few KiB.`,
      },
    });
    // stderr is a pipe of its own: its line may arrive after the answer on stdout.
    await vi.waitFor(() => expect(wire.stderr).toContain('stdio: refused a line (-32600): Request too large'), {
      timeout: 10_000,
    });

    // JSON nested 50,000 deep, and JSON that is not a JSON-RPC message.
    const deep = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    wire.write(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"memory_open","arguments":${deep}}}\n`);
    wire.write('{"hello":"world"}\n');
    expect(await wire.request(6, 'ping')).toMatchObject({ id: 6, result: {} });
    expect(wire.refusals().slice(2)).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid request: the JSON is nested more than 64 levels deep.' },
      },
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid request: the line is JSON but not a JSON-RPC 2.0 message.' },
      },
    ]);

    // A read pipelined right behind a write, both sent before any answer is read, sees the write.
    const written = wire.answer(7);
    const opened = wire.answer(8);
    wire.write(
      `${toolCall(7, 'memory_write', { name: 'topics/piped', description: 'Piped', new: 'sent blind' })}\n` +
        `${toolCall(8, 'memory_open', { names: ['topics/piped'] })}\n`,
    );
    expect(textOf(await written)).toBe('topics/piped (11 bytes): Piped');
    const open = await opened;
    expect(open.result).toMatchObject({ isError: false });
    expect(textOf(open)).toContain('sent blind');

    // So does completing an entry's name.
    const completed = wire.answer(10);
    wire.write(
      `${toolCall(9, 'memory_write', { name: 'topics/blind', description: 'Blind', new: 'also blind' })}\n` +
        `${line(10, 'completion/complete', { ref: { type: 'ref/resource', uri: 'memory://entry/{name}' }, argument: { name: 'name', value: 'blind' } })}\n`,
    );
    expect((await completed).result).toEqual({ completion: { values: ['topics/blind'], total: 1, hasMore: false } });

    expect(wire.exitCode).toBeUndefined();
    expect(await wire.end()).toBe(0);
    expect(wire.stderr).not.toMatch(/internal error|Maximum call stack/);
  });
});
