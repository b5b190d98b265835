/**
 * The request log as JSON lines (`engram serve --log-format json`), through pino: one
 * object per request and per WebSocket that closes, with the same fields as the human line
 * (logging.ts), each bounded and shown only if it looks like a name, plus the request id,
 * the door and the route template. Like the human line it never holds an argument, a
 * body, a header's value or a query: tokens, passwords, cookies, codes and memory text
 * have no field to land in.
 */

import type { Logger } from 'pino';
import { HTTP_METHOD, PATH, type RequestLog, type RequestRecord, shown, WORDS, word } from './logging.js';

/** A number of milliseconds to a tenth, as a log reader compares them. */
function ms(value: number): number {
  return Math.round(value * 10) / 10;
}

export function requestFields(record: RequestRecord): Record<string, unknown> {
  return {
    requestId: record.requestId,
    door: record.label.door,
    route: record.label.route,
    method: shown(record.httpMethod, HTTP_METHOD),
    path: shown(record.path, PATH),
    status: record.status,
    durationMs: ms(record.durationMs),
    client: word(record.client),
    user: word(record.user),
    actor: word(record.actor),
    rpcMethod: record.rpcMethod === undefined ? undefined : shown(record.rpcMethod, WORDS),
    tool: record.tool === undefined ? undefined : shown(record.tool, WORDS),
  };
}

/** Each record one JSON line of `logger`, at info. */
export function jsonRequestLog(logger: Logger): RequestLog {
  return {
    request: (record) => logger.info(requestFields(record), 'request'),
    socketClose: (record) =>
      logger.info(
        {
          requestId: record.requestId,
          door: 'ws',
          route: shown(record.path, PATH),
          code: record.code,
          messages: record.messages,
          durationMs: ms(record.durationMs),
          client: word(record.client),
          user: word(record.user),
          actor: word(record.actor),
        },
        'websocket closed',
      ),
  };
}
