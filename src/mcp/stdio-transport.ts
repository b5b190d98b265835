/**
 * The wire of `engram stdio`: one JSON-RPC message per line on stdin, one per line on
 * stdout, read with bounded memory. It stands in for the SDK's StdioServerTransport,
 * which drops a line that is not JSON in silence and closes the connection on a line over
 * its buffer size. Here every line that cannot be served is answered with a JSON-RPC
 * error (id null: its id cannot be read), reported on stderr, and the next lines are
 * served; a line over the limit is discarded as it arrives.
 *
 * The SDK does the protocol: serveStdio runs over this transport. Two shortcuts come
 * first, each offered a message's JSON before the SDK's parsing:
 * - the opening (stdio-opening.ts), when given, answers the client's handshake, then its
 *   `tools/list` and `ping`, before the SDK is even loaded. The transport reads from
 *   `listen()` on; messages the opening does not take wait, in order, and `loadSdk` is
 *   called: at the first such message, or once the connection has been quiet for
 *   QUIET_BEFORE_SDK_MS. When the SDK connects (`start()`), the opening is replayed into it
 *   (its answer to `initialize` compared with the one sent, and not written again), then
 *   the waiting messages are handed over, and from then on everything goes as below. Input
 *   that ends meanwhile is handled as below, once the waiting messages have been handed
 *   over. An SDK that cannot take the replayed handshake, or answers it with an error or
 *   another protocol version, would serve a client that believes otherwise: the
 *   connection is closed, with a report. If the SDK cannot be loaded, or the store cannot be
 *   opened (`abandon`), each waiting request is answered with an error before the connection closes.
 * - the fast path (stdio-fast-path.ts), when given, answers the hot requests directly.
 *
 * When the input ends (a script pipes its calls in and closes stdin; a client shutting
 * down), reading stops but the connection stays open until every request received has
 * been answered, or cancelled by the client, for at most ANSWERS_AFTER_END_MS: closing
 * at once would make the SDK abort the calls still running, their answers never written
 * (the calls themselves were applied).
 *
 * Nothing here loads the SDK: its parsing (json-rpc-decode.ts) is passed in, to be called
 * once it is connected, and only the SDK's types are imported.
 */

import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { JSON_RPC_ERROR, type ParseMessage, parseText, type Refusal, refusalAnswer } from './json-rpc-text.js';
import { LineReader } from './line-reader.js';
import type { StdioFastPath } from './stdio-fast-path.js';
import type { StdioOpening } from './stdio-opening.js';

/** Largest line read, in bytes: the body cap of MCP over HTTP, far above any real tool call. */
export const MAX_LINE_BYTES = 1024 * 1024;

/**
 * How long the connection stays without a message, after the opening answered one, before
 * the SDK is loaded anyway: a client's opening comes in one burst, each message right after
 * the answer before it, and loading the SDK in the middle of it would hold up its next answer.
 */
export const QUIET_BEFORE_SDK_MS = 100;

/**
 * How long, once the input has ended, the connection waits for the answers of requests
 * still running before it closes anyway: past any call's own bounds (PostgreSQL's
 * statement timeout is 30 s), so only a request that will never be answered meets it.
 */
export const ANSWERS_AFTER_END_MS = 60_000;

const TOO_LARGE: Refusal = {
  code: JSON_RPC_ERROR.InvalidRequest,
  message: `Request too large: the limit is ${MAX_LINE_BYTES} bytes per line. Send smaller writes; an entry holds at most a few KiB.`,
};

const CARRIAGE_RETURN = 0x0d;

export interface StdioShortcuts {
  readonly fastPath?: StdioFastPath;
  /** The opening, with what loads the SDK (which then calls `start()`); only with `listen()`. */
  readonly opening?: { readonly answerer: StdioOpening; readonly loadSdk: () => void };
}

/**
 * opening: the SDK not connected, the opening answering; replaying: the SDK connected and
 * the opening's `initialize` given to it, its answer awaited; serving: the SDK has it all.
 */
type Phase = 'opening' | 'replaying' | 'serving';

export class StdioLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  /** Resolves once the transport has closed. */
  readonly closed: Promise<void>;
  private markClosed: () => void = () => {};
  private isClosed = false;
  /** Whether the transport has closed, known at once (`closed` resolves a turn later). */
  get hasClosed(): boolean {
    return this.isClosed;
  }
  private reading = false;
  private phase: Phase;
  /** Messages received while the SDK was not serving yet, in order of arrival. */
  private waiting: unknown[] = [];
  /** The input ended: close once every request received is answered (closeWhenAnswered). */
  private inputEnded = false;
  /** Requests received and not answered yet (nor cancelled by the client), by id (idKey), with how many share it. */
  private readonly unanswered = new Map<string, number>();
  private answersTimer?: ReturnType<typeof setTimeout>;
  /** The opening's answer to `initialize`, while the SDK's answer to the replayed one is awaited. */
  private replayed?: { readonly id: unknown; readonly answer: string };
  private quiet?: ReturnType<typeof setTimeout>;

  private readonly reader = new LineReader(
    MAX_LINE_BYTES,
    (line) => this.receive(line),
    () => this.refuse(TOO_LARGE),
  );

  /**
   * `report` receives one line for each line refused or anything amiss (stderr); `parse` is
   * the SDK's parsing, called only once the SDK is connected (so it may be bound as it loads).
   */
  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    private readonly report: (line: string) => void,
    private readonly parse: ParseMessage,
    private readonly shortcuts: StdioShortcuts = {},
  ) {
    this.closed = new Promise((resolve) => {
      this.markClosed = resolve;
    });
    this.phase = shortcuts.opening ? 'opening' : 'serving';
  }

  /**
   * How the shortcuts write their answers: dropped once closed, as the SDK's are. Nothing
   * waits for them to drain, and a failure is the stream's error, which onOutputError reports.
   */
  private writeAnswer(id: unknown, line: string): void {
    if (this.isClosed) return;
    this.stdout.write(line);
    this.answered(id);
  }

  /** How a shortcut answers the request `json`. */
  private answerTo(json: unknown): (line: string) => void {
    return (line) => this.writeAnswer((json as { id?: unknown }).id, line);
  }

  /** To the SDK's error handler once it is connected; before, to the report. */
  private fail(error: unknown): void {
    const failure = error instanceof Error ? error : new Error(String(error));
    if (this.onerror) this.onerror(failure);
    else this.report(`stdio: ${failure.message}`);
  }

  private readonly onData = (chunk: Buffer) => this.reader.push(chunk);
  private readonly onInputError = (error: Error) => this.fail(error);
  private readonly onInputEnd = () => {
    if (this.inputEnded || this.isClosed) return;
    this.inputEnded = true;
    this.stopReading();
    if (this.waiting.length > 0) this.shortcuts.opening?.loadSdk();
    this.answersTimer = setTimeout(() => {
      this.report(
        `stdio: the input ended with ${this.unanswered.size} request(s) unanswered after ${ANSWERS_AFTER_END_MS} ms: closing`,
      );
      void this.close();
    }, ANSWERS_AFTER_END_MS);
    this.answersTimer.unref();
    this.closeWhenAnswered();
  };
  /** Stays attached after close, so a late write failure (the client went away) is not an uncaught error. */
  private readonly onOutputError = (error: Error) => {
    if (this.isClosed) return;
    this.fail(error);
    void this.close();
  };

  /** Starts reading before the SDK is connected, for the opening to answer. */
  listen(): void {
    if (this.reading || this.isClosed) return;
    this.reading = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onInputError);
    this.stdin.on('end', this.onInputEnd);
    this.stdin.on('close', this.onInputEnd);
    this.stdout.on('error', this.onOutputError);
  }

  /** Called by the SDK's serveStdio as it connects: reads from now on, the opening replayed first. */
  async start(): Promise<void> {
    if (this.quiet !== undefined) clearTimeout(this.quiet);
    if (this.isClosed) {
      // Closed while the SDK loaded: it learns so at once, and nothing is replayed.
      this.onclose?.();
      return;
    }
    this.listen();
    if (this.phase !== 'opening') return;
    const [handshake, ...rest] = this.shortcuts.opening?.answerer.taken ?? [];
    if (handshake?.answer === undefined) {
      this.serve();
      return;
    }
    // The rest of what the opening took (notifications/initialized) waits behind the handshake.
    this.waiting.unshift(...rest.map((taken) => taken.json));
    this.phase = 'replaying';
    this.replayed = { id: (handshake.json as { id: unknown }).id, answer: handshake.answer };
    // Once the SDK's connect, which awaits this, has finished connecting.
    queueMicrotask(() => this.replay(handshake.json));
  }

  /**
   * The SDK could not be loaded, or the store could not be opened (cli/stdio.ts): each waiting request
   * is answered with `reason` as an internal error (what a failing handler's request gets),
   * and the connection closes.
   */
  abandon(reason: string): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const json of waiting) {
      const { id, method } = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
      if (typeof method !== 'string' || !(typeof id === 'string' || typeof id === 'number')) continue;
      const error = { code: JSON_RPC_ERROR.InternalError, message: `Internal error: ${reason}` };
      this.writeAnswer(id, `${JSON.stringify({ jsonrpc: '2.0', id, error })}\n`);
    }
    void this.close();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.isClosed) return Promise.reject(new Error('the stdio connection is closed'));
    this.shortcuts.fastPath?.sent(message);
    const json = JSON.stringify(message);
    const replayed = this.replayed;
    if (replayed !== undefined && !('method' in message) && 'id' in message && message.id === replayed.id) {
      this.replayed = undefined;
      if (json === replayed.answer) this.serve();
      else this.disagreed(replayed.answer, json);
      return Promise.resolve();
    }
    const written = this.writeLine(`${json}\n`);
    if (!('method' in message) && 'id' in message) this.answered(message.id);
    return written;
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    if (this.quiet !== undefined) clearTimeout(this.quiet);
    if (this.answersTimer !== undefined) clearTimeout(this.answersTimer);
    this.stopReading();
    this.onclose?.();
    this.markClosed();
  }

  private stopReading(): void {
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onInputError);
    this.stdin.off('end', this.onInputEnd);
    this.stdin.off('close', this.onInputEnd);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
  }

  /** A request's answer went out, or it will get none: the input may have been waiting for the last. */
  private answered(id: unknown): void {
    const key = idKey(id);
    const count = key === undefined ? undefined : this.unanswered.get(key);
    if (key === undefined || count === undefined) return;
    if (count > 1) this.unanswered.set(key, count - 1);
    else this.unanswered.delete(key);
    if (this.inputEnded) this.closeWhenAnswered();
  }

  /**
   * After the input ended: closes once the SDK has been handed everything and every request
   * is answered. In a later turn, once the SDK has entered the handlers of what it was just
   * given, and written any answer it gives at once.
   */
  private closeWhenAnswered(): void {
    if (this.phase === 'replaying' || this.waiting.length > 0 || this.unanswered.size > 0) return;
    setImmediate(() => {
      if (this.unanswered.size === 0) void this.close();
    });
  }

  /** Hands the SDK the opening's handshake; one it cannot take ends the connection. */
  private replay(handshake: unknown): void {
    try {
      const decoded = this.parse(handshake, 'line');
      if ('code' in decoded) {
        this.giveUp(`the SDK refused the replayed initialize (${decoded.message})`);
        return;
      }
      this.shortcuts.fastPath?.given(decoded.message);
      this.onmessage?.(decoded.message);
    } catch (error) {
      this.giveUp(`the SDK failed on the replayed initialize (${error instanceof Error ? error.message : error})`);
    }
  }

  /**
   * The SDK answered the replayed `initialize` otherwise than the opening did: reported;
   * served on when it agrees on the protocol version, else the connection is closed.
   */
  private disagreed(sent: string, sdks: string): void {
    this.report(`mcp: the SDK answers initialize otherwise than the opening did: it sent ${sent}, the SDK ${sdks}`);
    const versionOf = (answer: string) =>
      (JSON.parse(answer) as { result?: { protocolVersion?: unknown } }).result?.protocolVersion;
    const version = versionOf(sdks);
    if (version !== undefined && version === versionOf(sent)) this.serve();
    else this.giveUp('the SDK’s session is not the one the client was told of');
  }

  /** The SDK's session cannot be the one the opening began: reported, and the connection closed. */
  private giveUp(why: string): void {
    this.replayed = undefined;
    this.waiting = [];
    this.report(`mcp: ${why}: closing the connection`);
    void this.close();
  }

  /** The SDK has the opening: hands over what waited, in order, then serves as it comes. */
  private serve(): void {
    this.phase = 'serving';
    const waiting = this.waiting;
    this.waiting = [];
    for (const json of waiting) this.route(json);
    if (this.inputEnded) this.closeWhenAnswered();
  }

  private receive(line: Buffer): void {
    const text = line.toString('utf8', 0, line.at(-1) === CARRIAGE_RETURN ? line.length - 1 : line.length);
    if (text.trim() === '') return;
    const parsed = parseText(text, 'line');
    if ('code' in parsed) {
      this.refuse(parsed);
      return;
    }
    const key = requestKey(parsed.json);
    if (key !== undefined) this.unanswered.set(key, (this.unanswered.get(key) ?? 0) + 1);
    else this.answered(cancelledId(parsed.json));
    this.route(parsed.json);
  }

  private route(json: unknown): void {
    if (this.phase !== 'serving') {
      this.beforeServing(json);
      return;
    }
    try {
      if (this.shortcuts.fastPath?.take(json, this.answerTo(json))) return;
    } catch (error) {
      this.fail(error);
      this.answered(requestId(json));
      return;
    }
    this.handOver(json);
  }

  /** Before the SDK serves: the opening answers, or the message waits and the SDK is loaded. */
  private beforeServing(json: unknown): void {
    const opening = this.shortcuts.opening;
    if (this.phase === 'opening' && this.waiting.length === 0 && opening?.answerer.take(json, this.answerTo(json))) {
      if (this.quiet !== undefined) clearTimeout(this.quiet);
      this.quiet = setTimeout(opening.loadSdk, QUIET_BEFORE_SDK_MS);
      this.quiet.unref();
      return;
    }
    this.waiting.push(json);
    opening?.loadSdk();
  }

  /** Hands a message to the SDK, parsed by it, or answers why it cannot be. */
  private handOver(json: unknown): void {
    try {
      const decoded = this.parse(json, 'line');
      if ('code' in decoded) {
        this.refuse(decoded);
        this.answered(requestId(json));
        return;
      }
      this.shortcuts.fastPath?.given(decoded.message);
      this.onmessage?.(decoded.message);
    } catch (error) {
      this.fail(error);
      this.answered(requestId(json));
    }
  }

  private refuse({ code, message }: Refusal): void {
    if (this.isClosed) return;
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

/** How an id is told apart in `unanswered`: 1 and "1" are different ids. */
function idKey(id: unknown): string | undefined {
  if (typeof id === 'number') return `n${id}`;
  if (typeof id === 'string') return `s${id}`;
  return undefined;
}

/** The id of a JSON-RPC request (a method and an id the answer must carry); undefined for anything else. */
function requestId(json: unknown): unknown {
  if (typeof json !== 'object' || json === null) return undefined;
  const { method, id } = json as Record<string, unknown>;
  return typeof method === 'string' ? id : undefined;
}

function requestKey(json: unknown): string | undefined {
  return idKey(requestId(json));
}

/** The request a client's `notifications/cancelled` names: it gets no answer (the SDK writes none). */
function cancelledId(json: unknown): unknown {
  if (typeof json !== 'object' || json === null) return undefined;
  const { method, params } = json as { method?: unknown; params?: { requestId?: unknown } };
  return method === 'notifications/cancelled' && typeof params === 'object' ? params?.requestId : undefined;
}
