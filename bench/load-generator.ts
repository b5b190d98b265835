/**
 * The HTTP load generator, run as a process of its own so that it never shares an event
 * loop with the benchmark or the server it drives: autocannon, with its connections in a
 * worker thread. Reads one job (JSON) from stdin, warms up, measures, and prints one line
 * of JSON: completed requests per second, latency quantiles, and every failure it saw
 * (connection errors, non-2xx answers, answers without the expected text).
 */

import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

export interface GeneratorJob {
  readonly port: number;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Request bodies, sent in turn by every connection. */
  readonly bodies: readonly string[];
  /** Text every answer must contain. */
  readonly expect: string;
  readonly connections: number;
  readonly workers: number;
  readonly warmupMs: number;
  readonly durationMs: number;
}

export interface GeneratorResult {
  readonly perSecond: number;
  /** Milliseconds. */
  readonly median: number;
  readonly p99: number;
  readonly failures: number;
}

/** A worker thread loads its body check from a file; this writes one for the job's expected text. */
function verifier(expect: string): string {
  const file = join(tmpdir(), `engram-bench-verify-${process.pid}.cjs`);
  writeFileSync(file, `module.exports = (body) => body.includes(${JSON.stringify(expect)});\n`);
  return file;
}

function run(job: GeneratorJob, verifyBody: string, durationMs: number) {
  return autocannon({
    url: `http://127.0.0.1:${job.port}${job.path}`,
    method: 'POST',
    headers: { ...job.headers },
    requests: job.bodies.map((body) => ({ body })),
    connections: job.connections,
    workers: job.workers,
    duration: durationMs / 1000,
    verifyBody,
  });
}

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const job = JSON.parse(Buffer.concat(chunks).toString('utf8')) as GeneratorJob;
  const verifyBody = verifier(job.expect);
  const result = await run(job, verifyBody, job.warmupMs)
    .then(() => run(job, verifyBody, job.durationMs))
    .finally(() => rmSync(verifyBody, { force: true }));
  const answer: GeneratorResult = {
    perSecond: result.requests.total / result.duration,
    median: result.latency.p50,
    p99: result.latency.p99,
    failures: result.errors + result.timeouts + result.non2xx + result.mismatches,
  };
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`load generator: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
