/**
 * What `engram serve --metrics` counts, in a registry of its own (not prom-client's global
 * one, so several servers in one process never share a series): requests by door, route
 * and status with their latency, tool calls by tool and outcome with theirs, store errors
 * by code, open WebSocket and event-stream connections, SQLite's group-commit batch sizes,
 * and when the last good backup was made. Every label takes its values from a bounded set
 * (labels.ts; the tools' names; error codes); docs/monitoring.md lists them. Loaded only
 * when metrics are on.
 */

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { isToolName } from '../../memory/tools/definitions.js';
import type { ToolHandler } from '../../memory/tools/handler.js';
import type { RouteLabel } from '../route-label.js';
import { isStoreError } from './store-errors.js';

/** The last good backup, as the scheduled backups tell it. */
export interface BackupStatus {
  lastGood(): { readonly at: Date } | undefined;
}

export interface Metrics {
  /** A request answered (or cut off: status 499), in seconds. */
  request(label: RouteLabel, status: number, seconds: number): void;
  /** A store error met while answering (STORE_BUSY, STORE_UNAVAILABLE…). */
  storeError(code: string): void;
  /** A WebSocket opened; the function returned counts it closed. */
  webSocketOpened(): () => void;
  /** An event stream (/api/events) opened; the function returned counts it closed. */
  eventStreamOpened(): () => void;
  /** SQLite's group commit committed a batch of this many writes. */
  commitBatch(writes: number): void;
  /** `handler`, its calls counted by tool and outcome and timed. */
  observeToolCalls(handler: ToolHandler): ToolHandler;
  /** The whole registry in Prometheus' text format. */
  render(): Promise<string>;
  readonly contentType: string;
}

/** An error code as a label: codes are a fixed set of upper-case words, anything else is `error`. */
function codeLabel(code: string | undefined): string {
  return code !== undefined && /^[A-Z_]{1,40}$/.test(code) ? code : 'error';
}

export function createMetrics(options: { readonly backupStatus?: BackupStatus | undefined } = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const requests = new Counter({
    name: 'engram_http_requests_total',
    help: 'HTTP requests answered, by door, route (a template, never a raw path) and status (499: the client went away).',
    labelNames: ['door', 'route', 'status'] as const,
    registers,
  });
  const requestSeconds = new Histogram({
    name: 'engram_http_request_duration_seconds',
    help: 'How long HTTP requests took to answer, by door and route.',
    labelNames: ['door', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const toolCalls = new Counter({
    name: 'engram_tool_calls_total',
    help: 'MCP tool calls (over HTTP and WebSocket), by tool and outcome: ok, or the error code.',
    labelNames: ['tool', 'outcome'] as const,
    registers,
  });
  const toolSeconds = new Histogram({
    name: 'engram_tool_call_duration_seconds',
    help: 'How long MCP tool calls took, by tool.',
    labelNames: ['tool'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  });
  const storeErrors = new Counter({
    name: 'engram_store_errors_total',
    help: 'Store errors met while answering requests and tool calls, by code (STORE_BUSY, STORE_UNAVAILABLE, …).',
    labelNames: ['code'] as const,
    registers,
  });
  const webSockets = new Gauge({
    name: 'engram_websocket_connections',
    help: 'WebSocket connections open at /ws.',
    registers,
  });
  const eventStreams = new Gauge({
    name: 'engram_event_stream_connections',
    help: 'Event streams (server-sent events of /api/events) open.',
    registers,
  });
  const batches = new Histogram({
    name: 'engram_sqlite_group_commit_writes',
    help: "Writes per commit of SQLite's group commit (one commit and fsync for all of them).",
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers,
  });
  const { backupStatus } = options;
  new Gauge({
    name: 'engram_backup_last_success_timestamp_seconds',
    help: 'When the last good scheduled backup was made (Unix time, seconds); no sample before the first.',
    registers,
    collect() {
      const last = backupStatus?.lastGood();
      if (last === undefined) this.remove();
      else this.set(last.at.getTime() / 1000);
    },
  });

  const opened = (gauge: Gauge) => () => {
    gauge.inc();
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      gauge.dec();
    };
  };

  return {
    request(label, status, seconds) {
      requests.inc({ door: label.door, route: label.route, status: String(status) });
      requestSeconds.observe({ door: label.door, route: label.route }, seconds);
    },
    storeError(code) {
      storeErrors.inc({ code: codeLabel(code) });
    },
    webSocketOpened: opened(webSockets),
    eventStreamOpened: opened(eventStreams),
    commitBatch(writes) {
      batches.observe(writes);
    },
    observeToolCalls(handler) {
      return async (caller, tool, args) => {
        const started = performance.now();
        const result = await handler(caller, tool, args);
        const name = isToolName(tool) ? tool : 'unknown';
        toolCalls.inc({ tool: name, outcome: result.isError ? codeLabel(result.code) : 'ok' });
        toolSeconds.observe({ tool: name }, (performance.now() - started) / 1000);
        if (isStoreError(result.code)) storeErrors.inc({ code: codeLabel(result.code) });
        return result;
      };
    },
    render: () => registry.metrics(),
    contentType: registry.contentType,
  };
}
