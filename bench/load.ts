/**
 * HTTP load for the benchmarks: a closed loop of N keep-alive connections, each sending
 * its next request as soon as the previous answer has arrived, for a fixed time. The
 * requests are sent by load-generator.ts, a process of its own (autocannon, its
 * connections in a worker thread), the same way for every row, so that the generator is
 * never the benchmark process and never shares an event loop with what it measures.
 */

import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { GeneratorJob, GeneratorResult } from './load-generator.js';

export interface LoadTarget {
  /** What is measured, in error messages. */
  readonly label: string;
  readonly port: number;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The request bodies, sent in turn by every connection. */
  readonly bodies: readonly string[];
  /** Text every answer must contain; an answer without it fails the run. */
  readonly expect: string;
  /** Bearer tokens: connection k sends token k (of a user of its own); none, no Authorization header. */
  readonly tokens?: readonly string[];
}

export interface LoadResult {
  readonly perSecond: number;
  /** Milliseconds, closed-loop mean: connections / rate. */
  readonly mean: number;
  /** Milliseconds, at autocannon's whole-millisecond resolution. */
  readonly p99: number;
}

/** Worker threads of the generator: one, whatever N, so every row is driven the same way. */
export const GENERATOR_WORKERS = 1;

const GENERATOR = fileURLToPath(new URL('./load-generator.js', import.meta.url));

/** One request on its own connection: its status and the text of its answer. */
export function postOnce(target: LoadTarget, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: target.port,
        path: target.path,
        method: 'POST',
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

/**
 * autocannon stops at the first of its once-a-second ticks past the duration asked, so a
 * run of 300 ms lasts a second: a duration here is whole seconds, or it would not be what
 * the figures say was measured (what a benchmark's writes add to its entries included).
 */
function checkWholeSeconds(what: string, ms: number): void {
  if (!Number.isInteger(ms / 1000) || ms < 0) {
    throw new Error(`${what} of ${ms} ms: a load runs for whole seconds (autocannon stops on a one-second tick)`);
  }
}

/**
 * Runs `connections` closed loops for `warmupMs` (not counted; 0, none) then `durationMs`,
 * from the generator process. Any failure fails the run, but up to `tolerateUnanswered` requests
 * left unanswered (a connection error, autocannon's timeout): on a machine overloaded by
 * other work, up to one per connection was seen, in flight when a run stopped.
 */
export function runLoad(
  target: LoadTarget,
  connections: number,
  durationMs: number,
  warmupMs: number,
  tolerateUnanswered = 0,
): Promise<LoadResult> {
  checkWholeSeconds('a warm-up', warmupMs);
  checkWholeSeconds('a load', durationMs);
  if (durationMs === 0) throw new Error('a load of 0 ms measures nothing');
  const job: GeneratorJob = { ...target, connections, workers: GENERATOR_WORKERS, warmupMs, durationMs };
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [GENERATOR], { maxBuffer: 1 << 20 }, (error, stdout) => {
      if (error) {
        reject(error);
        return;
      }
      const result = JSON.parse(stdout) as GeneratorResult;
      const tolerated = result.failures === result.unanswered && result.unanswered <= tolerateUnanswered;
      if (result.failures > 0 && !tolerated) {
        reject(
          new Error(
            `${result.failures} requests to port ${target.port} (${target.label}) failed or answered without ` +
              `"${target.expect}"${result.sample === undefined ? '' : `, the first: ${result.sample}`}`,
          ),
        );
        return;
      }
      resolve({ perSecond: result.perSecond, mean: (connections / result.perSecond) * 1000, p99: result.p99 });
    });
    child.stdin!.end(JSON.stringify(job));
  });
}
