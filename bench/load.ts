/**
 * A closed-loop HTTP load generator: N connections (one keep-alive socket each), each
 * sending its next request as soon as the previous answer has fully arrived, for a
 * fixed time. Reports completed requests per second and latency quantiles.
 */

import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { type Summary, summarize } from './stats.js';

export interface LoadTarget {
  readonly port: number;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The body of request number `serial`. */
  body(serial: number): string;
  /** Throws if an answer is not the success it should be. */
  check(status: number, text: string): void;
}

export interface LoadResult {
  readonly perSecond: number;
  readonly latency: Summary;
}

function send(agent: Agent | undefined, target: LoadTarget, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: target.port,
        path: target.path,
        method: 'POST',
        agent,
        headers: { ...target.headers, 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** One request on its own connection: its status and the text of its answer. */
export function postOnce(target: LoadTarget, body: string): Promise<{ status: number; text: string }> {
  return send(undefined, target, body);
}

/** Runs `connections` closed loops for `warmupMs` (not counted) then `durationMs`. */
export async function runLoad(
  target: LoadTarget,
  connections: number,
  durationMs: number,
  warmupMs: number,
): Promise<LoadResult> {
  let serial = 0;
  const latencies: number[] = [];
  const start = performance.now();
  const measureFrom = start + warmupMs;
  const end = measureFrom + durationMs;
  const loop = async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      while (performance.now() < end) {
        const sent = performance.now();
        const { status, text } = await send(agent, target, target.body(serial++));
        const answered = performance.now();
        target.check(status, text);
        if (answered >= measureFrom && answered <= end) latencies.push(answered - sent);
      }
    } finally {
      agent.destroy();
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  return { perSecond: latencies.length / (durationMs / 1000), latency: summarize(latencies) };
}
