/**
 * The wire of MCP over WebSocket (`/ws`, subprotocol `mcp`): each WebSocket message is one
 * JSON-RPC message, as the MCP SDK's WebSocketClientTransport and the llama.cpp WebUI
 * speak it. The SDK ships no server side of it, so this is one, for its connection entry
 * (serveStdio with a transport of our own, as for stdio). Like the stdio wire it answers
 * every message it cannot serve with a JSON-RPC error and keeps the connection; it also
 * lets each message through `admit` first, in arrival order (the HTTP layer checks the
 * token again there), and refuses requests beyond `maxInFlight` unanswered ones (an
 * answer counts until the socket has sent it).
 *
 * Nothing a client sends or leaves unread grows the server: while more than `maxWaiting`
 * messages wait to be served (each waits for its admission, a database round trip on
 * PostgreSQL), the socket is not read, so the kernel's buffers hold the client back; while
 * the server's `budget` of bytes waiting over all sockets is full, no socket is read; and
 * a socket whose client leaves more than `maxUnreadBytes` unread is closed (1008) instead
 * of being written more. The size of a message is capped by the socket itself (ws
 * `maxPayload`, close 1009).
 */

import type { JSONRPCMessage, JSONRPCRequest, RequestId, Transport } from '@modelcontextprotocol/server';
import type { RawData, WebSocket } from 'ws';
import { isEngramError } from '../memory/model/errors.js';
import { decodeMessage } from './json-rpc-decode.js';
import { type Refusal, refusalAnswer } from './json-rpc-text.js';
import type { WaitingBudget } from './waiting-budget.js';

export interface WebSocketTransportOptions {
  /** Requests served at once on this socket; one more is answered with a JSON-RPC error. */
  readonly maxInFlight: number;
  /** Messages received and not yet served past which the socket is not read until they are. */
  readonly maxWaiting: number;
  /** The bytes waiting to be served over every socket of the server: while it is full, no socket is read. */
  readonly budget: WaitingBudget;
  /** Bytes written and not yet read by the client past which the socket is closed (1008) rather than written to. */
  readonly maxUnreadBytes: number;
  /**
   * Called before each message is served, in arrival order: false drops the message (the
   * caller has closed the socket); `refused` answers a request with that message and drops
   * a notification (past a rate limit), the socket kept. A throw answers the request with
   * the error's message when it is an EngramError (a store that cannot be reached), else a
   * generic one.
   */
  readonly admit: () => Promise<boolean | { readonly refused: string }>;
  /** Receives one line for each message refused. */
  readonly report: (line: string) => void;
}

/** JSON-RPC's "server error" code, for refusals that are not about the message itself. */
const REFUSED = -32000;
const INTERNAL_ERROR = -32603;
/** At most 123 bytes, as a close reason must be. */
const UNREAD_REASON = 'Too many answers unread: read the answers before sending more.';

function sizeOf(data: RawData): number {
  return Array.isArray(data) ? data.reduce((sum, part) => sum + part.byteLength, 0) : data.byteLength;
}

function textOf(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

/** Shapes of messages parseJSONRPCMessage has already checked (not validated again: they can be large). */
function isRequest(message: JSONRPCMessage): message is JSONRPCRequest {
  return 'method' in message && 'id' in message;
}

function isResponse(message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId } {
  return !('method' in message) && 'id' in message && message.id !== undefined && message.id !== null;
}

function errorOf(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

export class WebSocketTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private closed = false;
  /** Ids of the requests received and not yet answered. */
  private readonly inFlight = new Set<RequestId>();
  /** The messages admitted so far: each waits for the one before, so order is kept. */
  private admitted: Promise<void> = Promise.resolve();
  /** Messages received and not yet served (waiting in `admitted`). */
  private waiting = 0;

  constructor(
    private readonly socket: WebSocket,
    private readonly options: WebSocketTransportOptions,
  ) {}

  /** Stops watching the server's budget. */
  private unwatch: () => void = () => {};

  /** Reads the socket only while its own queue and the server's budget have room. */
  private readonly pace = () => {
    const read = this.waiting <= this.options.maxWaiting && !this.options.budget.full;
    if (read && this.socket.isPaused) this.socket.resume();
    else if (!read && !this.socket.isPaused) this.socket.pause();
  };
  private readonly onSocketMessage = (data: RawData) => {
    const bytes = sizeOf(data);
    this.waiting++;
    this.options.budget.take(bytes);
    this.pace();
    this.admitted = this.admitted.then(async () => {
      try {
        await this.receive(textOf(data));
      } finally {
        this.waiting--;
        this.options.budget.give(bytes);
        this.pace();
      }
    });
  };
  private readonly onSocketClose = () => {
    if (this.closed) return;
    this.closed = true;
    this.unwatch();
    this.socket.off('message', this.onSocketMessage);
    this.onclose?.();
  };

  async start(): Promise<void> {
    this.socket.on('message', this.onSocketMessage);
    this.socket.once('close', this.onSocketClose);
    this.unwatch = this.options.budget.watch(this.pace);
    this.pace();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    try {
      await this.write(JSON.stringify(message));
    } finally {
      if (isResponse(message)) this.inFlight.delete(message.id);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.socket.close(1000, 'The MCP session ended.');
    this.onSocketClose();
  }

  private async receive(text: string): Promise<void> {
    // A socket closing (its token refused, its server stopping) serves nothing more.
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return;
    let allowed: boolean | { readonly refused: string };
    try {
      allowed = await this.options.admit();
    } catch (error) {
      this.refuseAdmission(text, error);
      return;
    }
    if (!allowed || this.closed) return;
    const decoded = decodeMessage(text, 'message');
    if (allowed !== true) {
      this.options.report(`ws: refused a message: ${allowed.refused}`);
      if (!('code' in decoded) && isRequest(decoded.message)) this.answer(decoded.message.id, REFUSED, allowed.refused);
      return;
    }
    if ('code' in decoded) {
      this.refuse(decoded);
      return;
    }
    const { message } = decoded;
    if (isRequest(message)) {
      if (this.inFlight.size >= this.options.maxInFlight) {
        this.answer(message.id, REFUSED, this.tooManyMessage());
        return;
      }
      this.inFlight.add(message.id);
    } else if ('method' in message && message.method === 'notifications/cancelled') {
      // A cancelled request is never answered (MCP), so it is no longer in flight.
      const cancelled = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (cancelled !== undefined) this.inFlight.delete(cancelled);
    }
    try {
      this.onmessage?.(message);
    } catch (error) {
      this.onerror?.(errorOf(error));
    }
  }

  private tooManyMessage(): string {
    return (
      `Too many requests at once: this connection serves at most ${this.options.maxInFlight} at a time. ` +
      'Wait for an answer before sending more.'
    );
  }

  /** The token could not be checked: a request is answered (its id is read if it can be), a notification dropped. */
  private refuseAdmission(text: string, error: unknown): void {
    this.options.report(`ws: could not check the token of a message: ${errorOf(error).message}`);
    const decoded = decodeMessage(text, 'message');
    if ('code' in decoded || !isRequest(decoded.message)) return;
    const message = isEngramError(error)
      ? error.message
      : 'Internal error: the server could not check your token. Try again; if it fails again, tell its owner.';
    this.answer(decoded.message.id, INTERNAL_ERROR, message);
  }

  private refuse(refusal: Refusal): void {
    this.options.report(`ws: refused a message (${refusal.code}): ${refusal.message}`);
    this.write(refusalAnswer(refusal)).catch((error: unknown) => this.onerror?.(errorOf(error)));
  }

  private answer(id: RequestId, code: number, message: string): void {
    this.write(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })).catch((error: unknown) =>
      this.onerror?.(errorOf(error)),
    );
  }

  private write(text: string): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the WebSocket connection is closed'));
    if (this.socket.bufferedAmount > this.options.maxUnreadBytes) {
      this.options.report('ws: closed a socket whose client does not read what it is sent');
      this.socket.close(1008, UNREAD_REASON);
      this.onSocketClose();
      return Promise.reject(new Error('the WebSocket connection was closed: its client does not read'));
    }
    return new Promise((resolve, reject) => {
      this.socket.send(text, (error) => (error ? reject(error) : resolve()));
    });
  }
}
