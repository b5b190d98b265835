/**
 * `/metrics` (engram serve --metrics): read by a Prometheus text-format parser, its counters
 * move with real MCP, REST, event-stream and WebSocket traffic; its routes are templates
 * whatever paths clients send; and it answers only whom it should: 404 while off, this
 * machine, and elsewhere only with the metrics token (never a memory token).
 */

import { renameSync } from 'node:fs';
import { request } from 'node:http';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { metricsAccess } from '../../src/http/metrics/access.js';
import { api } from './api-client.js';
import { postRpc, raw, rpc, startTestServer } from './fixtures.js';

interface Family {
  readonly name: string;
  readonly type: string;
  readonly metrics: {
    readonly labels?: Record<string, string>;
    readonly value?: string;
    readonly buckets?: Record<string, string>;
    readonly count?: string;
  }[];
}

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

async function scrape(port: number, headers: Record<string, string> = {}): Promise<Family[]> {
  const response = await raw(port, { path: '/metrics', headers });
  expect(response.status).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusTextFormat(response.body) as Family[];
}

function family(families: Family[], name: string): Family {
  const found = families.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no metric ${name}`);
  return found;
}

/** The value of the sample of `name` whose labels include `labels`; undefined when there is none. */
function sample(families: Family[], name: string, labels: Record<string, string> = {}): number | undefined {
  const match = family(families, name).metrics.find((metric) =>
    Object.entries(labels).every(([key, value]) => metric.labels?.[key] === value),
  );
  return match?.value === undefined ? undefined : Number(match.value);
}

const call = (name: string, args: Record<string, unknown>, id = 1) => rpc('tools/call', { name, arguments: args }, id);

describe('/metrics', () => {
  it('is a 404 while metrics are off', async () => {
    const server = await startTestServer();
    expect((await raw(server.port, { path: '/metrics' })).status).toBe(404);
  });

  it('counts requests by door, route and status, tool calls by outcome, store errors and group commits', async () => {
    const server = await startTestServer({ metrics: {} });
    await postRpc(server.port, call('memory_write', { name: 'topics/me', description: 'Who I am', new: 'Ada' }));
    await postRpc(server.port, call('memory_open', { names: ['topics/nobody'] }, 2));
    await api(server.port, 'GET', '/api/entries');
    await api(server.port, 'GET', '/api/entries/topics/me');
    for (const path of ['/a-raw-path-1', '/another/raw/path', '/api/not-a-route/xyz']) await raw(server.port, { path });
    renameSync(server.db, `${server.db}.away`);
    await postRpc(server.port, call('memory_write', { name: 'topics/me', new: 'lost' }, 3));
    renameSync(`${server.db}.away`, server.db);

    const families = await scrape(server.port);

    const requests = 'engram_http_requests_total';
    expect(sample(families, requests, { door: 'mcp', route: '/mcp', status: '200' })).toBe(3);
    expect(sample(families, requests, { door: 'api', route: '/api/entries', status: '200' })).toBe(1);
    expect(sample(families, requests, { door: 'api', route: '/api/entries/{group}/{slug}', status: '200' })).toBe(1);
    expect(sample(families, requests, { door: 'other', route: 'unmatched', status: '404' })).toBe(2);
    expect(sample(families, requests, { door: 'api', route: '/api/?', status: '404' })).toBe(1);
    // Never a raw path or an entry's name.
    const routes = family(families, requests).metrics.map((metric) => metric.labels?.route);
    expect(routes.filter((route) => /raw|topics|xyz/.test(route ?? ''))).toEqual([]);
    const tools = 'engram_tool_calls_total';
    expect(sample(families, tools, { tool: 'memory_write', outcome: 'ok' })).toBe(1);
    expect(sample(families, tools, { tool: 'memory_open', outcome: 'NOT_FOUND' })).toBe(1);
    expect(sample(families, tools, { tool: 'memory_write', outcome: 'STORE_REPLACED' })).toBe(1);
    expect(sample(families, 'engram_store_errors_total', { code: 'STORE_REPLACED' })).toBe(1);
    expect(family(families, 'engram_http_request_duration_seconds').type).toBe('HISTOGRAM');
    expect(family(families, 'engram_tool_call_duration_seconds').type).toBe('HISTOGRAM');
    const batches = family(families, 'engram_sqlite_group_commit_writes');
    expect(Number(batches.metrics[0]?.buckets?.['+Inf'])).toBeGreaterThanOrEqual(1);
    expect(family(families, 'engram_backup_last_success_timestamp_seconds').metrics).toEqual([]);
    // The process's own metrics come along.
    expect(families.some((candidate) => candidate.name === 'process_cpu_user_seconds_total')).toBe(true);
  });

  it('counts open event streams and WebSockets while they are open', async () => {
    const server = await startTestServer({ metrics: {} });
    const events = await new Promise<{ close(): void }>((resolve, reject) => {
      const outgoing = request({ host: '127.0.0.1', port: server.port, path: '/api/events' }, (res) =>
        resolve({ close: () => res.destroy() }),
      );
      outgoing.on('error', () => {});
      outgoing.on('error', reject);
      outgoing.end();
    });
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}/ws`, ['mcp']);
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });

    const open = await scrape(server.port);
    events.close();
    socket.close();

    expect(sample(open, 'engram_event_stream_connections')).toBe(1);
    expect(sample(open, 'engram_websocket_connections')).toBe(1);
    expect(sample(open, 'engram_http_requests_total', { door: 'ws', route: '/ws', status: '101' })).toBe(1);
    await vi.waitFor(
      async () => {
        const closed = await scrape(server.port);
        expect(sample(closed, 'engram_event_stream_connections')).toBe(0);
        expect(sample(closed, 'engram_websocket_connections')).toBe(0);
      },
      { timeout: 10_000, interval: 20 },
    );
  });

  it('tells when the last good backup was made, once there is one', async () => {
    const at = new Date('2026-12-06T10:00:00Z');
    let last: { at: Date } | undefined;
    const server = await startTestServer({ metrics: {}, backupStatus: { lastGood: () => last } });
    const before = await scrape(server.port);
    last = { at };
    const after = await scrape(server.port);

    expect(family(before, 'engram_backup_last_success_timestamp_seconds').metrics).toEqual([]);
    expect(sample(after, 'engram_backup_last_success_timestamp_seconds')).toBe(at.getTime() / 1000);
  });

  it('answers this machine, and a forwarded request only with the metrics token, never a memory token', async () => {
    const server = await startTestServer({ auth: 'token', metrics: { token: METRICS_TOKEN } });
    const { token: memoryToken } = await server.access.create({ user: 'ada' });
    const forwarded = { 'X-Forwarded-For': '203.0.113.7' };

    const local = await raw(server.port, { path: '/metrics' });
    const without = await raw(server.port, { path: '/metrics', headers: forwarded });
    const wrong = await raw(server.port, {
      path: '/metrics',
      headers: { ...forwarded, Authorization: `Bearer ${memoryToken}` },
    });
    const right = await raw(server.port, {
      path: '/metrics',
      headers: { ...forwarded, Authorization: `Bearer ${METRICS_TOKEN}` },
    });
    // The metrics token opens nothing else.
    const memory = await api(server.port, 'GET', '/api/entries', { token: METRICS_TOKEN });
    const post = await raw(server.port, { method: 'POST', path: '/metrics' });

    expect(local.status).toBe(200);
    expect(without.status).toBe(401);
    expect(without.headers['www-authenticate']).toBe('Bearer realm="engram-metrics"');
    expect(wrong.status).toBe(401);
    expect(right.status).toBe(200);
    expect(right.body).toContain('engram_http_requests_total');
    expect(memory.status).toBe(401);
    expect(post.status).toBe(405);
  });

  it('refuses a forwarded request with 403 when no metrics token is set', async () => {
    const server = await startTestServer({ metrics: {} });
    const refused = await raw(server.port, { path: '/metrics', headers: { 'X-Forwarded-For': '203.0.113.7' } });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error.message).toMatch(/ENGRAM_METRICS_TOKEN/);
  });

  it('takes a request from another address as from elsewhere', () => {
    const from = (remoteAddress: string, headers: Record<string, string> = {}) =>
      ({ socket: { remoteAddress }, headers }) as unknown as Parameters<typeof metricsAccess>[0];
    expect(metricsAccess(from('127.0.0.1'), undefined)).toBe('allowed');
    expect(metricsAccess(from('::1'), undefined)).toBe('allowed');
    expect(metricsAccess(from('::ffff:127.0.0.1'), undefined)).toBe('allowed');
    expect(metricsAccess(from('203.0.113.7'), undefined)).toBe('forbidden');
    expect(metricsAccess(from('203.0.113.7'), METRICS_TOKEN)).toBe('unauthorized');
    expect(metricsAccess(from('203.0.113.7', { authorization: `Bearer ${METRICS_TOKEN}` }), METRICS_TOKEN)).toBe(
      'allowed',
    );
    expect(metricsAccess(from('127.0.0.1', { forwarded: 'for=203.0.113.7' }), undefined)).toBe('forbidden');
    // Behind a declared proxy (--trust-proxy), a loopback socket may be anyone's: only the token opens.
    expect(metricsAccess(from('127.0.0.1'), undefined, true)).toBe('forbidden');
    expect(metricsAccess(from('127.0.0.1'), METRICS_TOKEN, true)).toBe('unauthorized');
    expect(metricsAccess(from('127.0.0.1', { authorization: `Bearer ${METRICS_TOKEN}` }), METRICS_TOKEN, true)).toBe(
      'allowed',
    );
  });
});
