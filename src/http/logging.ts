/**
 * One line per request on stderr, enough to see who did what and how it went: time,
 * client address, user, HTTP method and path, JSON-RPC method, tool, status, duration (and one when a
 * WebSocket closes: its user, close code, messages and lifetime). Never arguments
 * or bodies: memory is private, and a log is copied to places memory is not. Each field
 * is bounded and shown only if it looks like a name (else `?`), so a line stays one line
 * of at most about 1 KB whatever a client sends: a batch names its first few methods and
 * counts the rest.
 */

import type { RouteLabel } from './route-label.js';

export interface RequestRecord {
  readonly time: Date;
  /** The request's id (request-id.ts), also sent back in X-Request-Id; none for a WebSocket upgrade refused before it was read. */
  readonly requestId?: string | undefined;
  /** Its door and route template (route-label.ts), for the metrics and the JSON log. */
  readonly label: RouteLabel;
  /** Who acted, as history records it (a token's label, an app's name, `web`, `api`), once known. */
  readonly actor?: string | undefined;
  /** The client's address (clientAddress: the socket's peer, or the trusted proxy's X-Forwarded-For). */
  readonly client?: string | undefined;
  readonly user: string | undefined;
  readonly httpMethod: string;
  readonly path: string;
  readonly rpcMethod: string | undefined;
  readonly tool: string | undefined;
  readonly status: number;
  readonly durationMs: number;
}

/** A WebSocket that closed: who held it, its close code, how many messages it sent, how long it lived. */
export interface SocketCloseRecord {
  readonly time: Date;
  /** The id of its upgrade request. */
  readonly requestId?: string | undefined;
  readonly actor?: string | undefined;
  /** The client's address, as its upgrade request's line shows it. */
  readonly client?: string | undefined;
  readonly user: string | undefined;
  readonly path: string;
  readonly code: number;
  readonly messages: number;
  readonly durationMs: number;
}

/** Where the lines of requests and sockets go: formatted for people (the default) or as JSON (json-log.ts). */
export interface RequestLog {
  request(record: RequestRecord): void;
  socketClose(record: SocketCloseRecord): void;
}

/** The human format: each record one line of `log`. */
export function humanRequestLog(log: (line: string) => void): RequestLog {
  return {
    request: (record) => log(formatRequestLine(record)),
    socketClose: (record) => log(formatSocketClose(record)),
  };
}

export interface RpcSummary {
  readonly rpcMethod: string | undefined;
  readonly tool: string | undefined;
}

/** Client-chosen words are shown only if they look like names, so a log line stays one line. */
export function word(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return /^[\w./:@-]{1,64}$/.test(value) ? value : '?';
}

/** Methods or tools of a batch named in the log; the rest are counted (`,+N`). */
const MAX_LISTED = 5;

/** `value` if it matches `shape`, else `?`. */
export function shown(value: string, shape: RegExp): string {
  return shape.test(value) ? value : '?';
}

export const HTTP_METHOD = /^[A-Z-]{1,20}$/;
export const PATH = /^[\x21-\x7e]{1,100}$/;
/** A word, or a batch's list of words (see summarizeRpc). */
export const WORDS = new RegExp(`^[\\w./:@,+-]{1,${MAX_LISTED * 65 + 10}}$`);

function summarizeOne(message: unknown): RpcSummary {
  if (typeof message !== 'object' || message === null) return { rpcMethod: undefined, tool: undefined };
  const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
  return { rpcMethod: word(method), tool: method === 'tools/call' ? word(params?.name) : undefined };
}

/** The JSON-RPC method(s) and tool name(s) of a parsed request body. */
export function summarizeRpc(body: unknown): RpcSummary {
  if (!Array.isArray(body)) return summarizeOne(body);
  const parts = body.map(summarizeOne);
  const join = (values: (string | undefined)[]) => {
    if (!values.some(Boolean)) return undefined;
    const listed = values.slice(0, MAX_LISTED).map((v) => v ?? '-');
    return values.length > MAX_LISTED ? [...listed, `+${values.length - MAX_LISTED}`].join(',') : listed.join(',');
  };
  return { rpcMethod: join(parts.map((p) => p.rpcMethod)), tool: join(parts.map((p) => p.tool)) };
}

/** The millisecond isoTime last formatted, and its text. */
let lastMs = Number.NaN;
let lastIso = '';

/**
 * `time` as ISO 8601, the text of the last millisecond kept: a busy server logs many lines
 * within one, and Date's toISOString cost about half the line.
 */
function isoTime(time: Date): string {
  const ms = time.getTime();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = time.toISOString();
  }
  return lastIso;
}

/** One template, not an array joined: a line is written for every request. */
export function formatRequestLine(record: Omit<RequestRecord, 'label'>): string {
  const client = record.client === undefined ? '' : ` client=${word(record.client)}`;
  const rpcMethod = record.rpcMethod === undefined ? '-' : shown(record.rpcMethod, WORDS);
  const tool = record.tool === undefined ? '-' : shown(record.tool, WORDS);
  return `${isoTime(record.time)}${client} user=${word(record.user) ?? '-'} ${shown(record.httpMethod, HTTP_METHOD)} ${shown(record.path, PATH)} method=${rpcMethod} tool=${tool} status=${record.status} ${Math.round(record.durationMs)}ms`;
}

/** The line of a WebSocket that closed (its opening is logged as its upgrade request, status 101). */
export function formatSocketClose(record: SocketCloseRecord): string {
  return [
    isoTime(record.time),
    ...(record.client === undefined ? [] : [`client=${word(record.client)}`]),
    `user=${word(record.user) ?? '-'}`,
    `WS ${shown(record.path, PATH)} closed`,
    `code=${record.code}`,
    `messages=${record.messages}`,
    `${Math.round(record.durationMs)}ms`,
  ].join(' ');
}
