/**
 * What `engram serve` logs on stderr, in the format chosen by --log-format (ENGRAM_LOG_FORMAT,
 * the config file's "logFormat"): `human`, one line per request as people read them
 * (http/logging.ts), or `json`, one JSON object per line through pino for a log shipper
 * (http/json-log.ts), the other lines of the server (its start and stop, refusals, failures)
 * as JSON objects too. Human is the default on a terminal and off it: a service's journal
 * is read by people too, and a log that changed shape with where stderr goes would break
 * the filters (fail2ban, grep) of those who upgrade; JSON is one variable away.
 */

import { jsonRequestLog } from '../http/json-log.js';
import { humanRequestLog, type RequestLog } from '../http/logging.js';
import type { LogFormat } from './log-formats.js';
import { type BatchedLog, createBatchedLog, createBatchedWrite, logInternalError } from './output.js';

export interface ServerLog {
  /** A line for the operator (a refusal, an event, a failure's words). */
  readonly log: BatchedLog;
  /** The record of each request and of each WebSocket that closes. */
  readonly requestLog: RequestLog;
  /** An unexpected failure: its stack (never arguments or bodies). */
  readonly internalError: (error: unknown) => void;
  /** The server listens (JSON: a line with where; human: the connection help on stdout says it). */
  started(fields: Readonly<Record<string, unknown>>): void;
  /** The server was asked to stop (by `signal`) and finishes the requests in flight. */
  stopping(signal: string): void;
  /** The server has stopped (JSON only: the human log ends with its stopping line). */
  stopped(): void;
}

/** The log in `format`; pino loads only for JSON, so that no other command pays for it at start. */
export async function createServerLog(format: LogFormat, write: (text: string) => void): Promise<ServerLog> {
  if (format === 'human') {
    const log = createBatchedLog(write);
    return {
      log,
      requestLog: humanRequestLog(log),
      internalError: logInternalError,
      started: () => {},
      stopping: (signal) => log(`${signal}: finishing requests in flight, then stopping`),
      stopped: () => {},
    };
  }
  const { pino } = await import('pino');
  const out = createBatchedWrite(write);
  const logger = pino(
    { base: undefined, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } },
    { write: (text: string) => out(text) },
  );
  const log = Object.assign((line: string) => logger.info(line), { close: () => out.close() });
  return {
    log,
    requestLog: jsonRequestLog(logger),
    internalError: (error) => logger.error({ error: errorFields(error) }, 'internal error'),
    started: (fields) => logger.info(fields, 'listening'),
    stopping: (signal) => logger.info({ signal }, 'stopping: finishing requests in flight'),
    stopped: () => logger.info('stopped'),
  };
}

/**
 * What the JSON log tells of an unexpected failure: its type, message and stack, as the
 * human log does, and nothing else. Not pino's own error serializer, which copies every
 * property and the whole cause chain: a PostgreSQL error's `detail` holds the row a
 * constraint refused, memory text included.
 */
function errorFields(error: unknown): { type: string; message: string; stack?: string | undefined } {
  if (!(error instanceof Error)) return { type: typeof error, message: String(error) };
  return { type: error.name, message: error.message, stack: error.stack };
}
