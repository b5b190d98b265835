/**
 * The wire of `engram stdio`: one JSON-RPC message per line on stdin, one per line on
 * stdout, read with bounded memory. It stands in for the SDK's StdioServerTransport,
 * which drops a line that is not JSON in silence and closes the connection on a line over
 * its buffer size. Here every line that cannot be served is answered with a JSON-RPC
 * error (id null: its id cannot be read), reported on stderr, and the next lines are
 * served; a line over the limit is discarded as it arrives. The SDK still does the
 * protocol: serveStdio runs over this transport, but a fast path (stdio-fast-path.ts),
 * when given, is offered each message's JSON first, before the SDK's parsing, and answers
 * the hot requests directly.
 */

import type { Readable, Writable } from 'node:stream';
import { type JSONRPCMessage, ProtocolErrorCode, serializeMessage, type Transport } from '@modelcontextprotocol/server';
import { parseMessage, parseText, type Refusal, refusalAnswer } from './json-rpc-decode.js';
import { LineReader } from './line-reader.js';
import type { StdioFastPath } from './stdio-fast-path.js';

/** Largest line read, in bytes: the body cap of MCP over HTTP, far above any real tool call. */
export const MAX_LINE_BYTES = 1024 * 1024;

const TOO_LARGE: Refusal = {
  code: ProtocolErrorCode.InvalidRequest,
  message: `Request too large: the limit is ${MAX_LINE_BYTES} bytes per line. Send smaller writes; an entry holds at most a few KiB.`,
};

const CARRIAGE_RETURN = 0x0d;

export class StdioLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private closed = false;
  private readonly reader = new LineReader(
    MAX_LINE_BYTES,
    (line) => this.receive(line),
    () => this.refuse(TOO_LARGE),
  );

  /** `report` receives one line for each line refused (stderr). */
  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    private readonly report: (line: string) => void,
    private readonly fastPath?: StdioFastPath,
  ) {}

  /**
   * How the fast path writes its answers: dropped once closed, as the SDK's are. Nothing
   * waits for them to drain, and a failure is the stream's error, which onOutputError reports.
   */
  private readonly writeAnswer = (line: string): void => {
    if (!this.closed) this.stdout.write(line);
  };

  private fail(error: unknown): void {
    this.onerror?.(error instanceof Error ? error : new Error(String(error)));
  }

  private readonly onData = (chunk: Buffer) => this.reader.push(chunk);
  private readonly onInputError = (error: Error) => this.onerror?.(error);
  private readonly onInputEnd = () => void this.close();
  /** Stays attached after close, so a late write failure (the client went away) is not an uncaught error. */
  private readonly onOutputError = (error: Error) => {
    if (this.closed) return;
    this.onerror?.(error);
    void this.close();
  };

  async start(): Promise<void> {
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onInputError);
    this.stdin.on('end', this.onInputEnd);
    this.stdin.on('close', this.onInputEnd);
    this.stdout.on('error', this.onOutputError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the stdio connection is closed'));
    this.fastPath?.sent(message);
    return this.writeLine(serializeMessage(message));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onInputError);
    this.stdin.off('end', this.onInputEnd);
    this.stdin.off('close', this.onInputEnd);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.onclose?.();
  }

  private receive(line: Buffer): void {
    const text = line.toString('utf8', 0, line.at(-1) === CARRIAGE_RETURN ? line.length - 1 : line.length);
    if (text.trim() === '') return;
    const parsed = parseText(text, 'line');
    if ('code' in parsed) {
      this.refuse(parsed);
      return;
    }
    try {
      if (this.fastPath?.take(parsed.json, this.writeAnswer)) return;
      const decoded = parseMessage(parsed.json, 'line');
      if ('code' in decoded) {
        this.refuse(decoded);
        return;
      }
      this.fastPath?.given(decoded.message);
      this.onmessage?.(decoded.message);
    } catch (error) {
      this.fail(error);
    }
  }

  private refuse({ code, message }: Refusal): void {
    if (this.closed) return;
    this.report(`stdio: refused a line (${code}): ${message}`);
    this.writeLine(`${refusalAnswer({ code, message })}\n`).catch((error: unknown) => this.fail(error));
  }

  /** Resolves once stdout has taken the line, waiting for it to drain when it is full. */
  private writeLine(line: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.stdout.write(line)) {
        resolve();
        return;
      }
      const onDrain = () => {
        this.stdout.off('error', onError);
        resolve();
      };
      const onError = (error: Error) => {
        this.stdout.off('drain', onDrain);
        reject(error);
      };
      this.stdout.once('drain', onDrain);
      this.stdout.once('error', onError);
    });
  }
}
