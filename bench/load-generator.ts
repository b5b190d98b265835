/**
 * The HTTP load generator, run as a process of its own so that it never shares an event
 * loop with the benchmark or the server it drives: autocannon, with its connections in a
 * worker thread. Reads one job (JSON) from stdin, warms up, measures, and prints one line
 * of JSON: completed requests per second, latency quantiles, and every failure it saw
 * (connection errors, non-2xx answers, answers without the expected text).
 */

import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  /** Bearer tokens, connection k sending token k; absent, no Authorization header. */
  readonly tokens?: readonly string[];
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
  /** Of the failures, requests never answered (connection errors, no answer within autocannon's timeout). */
  readonly unanswered: number;
  /** The first answer without the expected text, cut short, when there was one. */
  readonly sample?: string;
}

/** Where the body check keeps the first answer it refused. */
const REFUSED = join(tmpdir(), `engram-bench-refused-${process.pid}.txt`);

/** A worker thread loads its body check from a file; this writes one for the job's expected text. */
function verifier(expect: string): string {
  const file = join(tmpdir(), `engram-bench-verify-${process.pid}.cjs`);
  writeFileSync(
    file,
    `const { existsSync, writeFileSync } = require('node:fs');\n` +
      `module.exports = (body) => {\n` +
      `  const ok = body.includes(${JSON.stringify(expect)});\n` +
      `  if (!ok && !existsSync(${JSON.stringify(REFUSED)})) writeFileSync(${JSON.stringify(REFUSED)}, body.slice(0, 500));\n` +
      `  return ok;\n` +
      `};\n`,
  );
  return file;
}

/**
 * Each connection starts at its own place in the list of requests (connection k at k/N of
 * it), so that N connections never send the same request at the same moment: writes go to
 * different entries, as many clients' would; with tokens, connection k sends token k. A
 * worker thread loads this from a file too.
 */
function spreader(bodies: readonly string[], connections: number, tokens: readonly string[] | undefined): string {
  const list = join(tmpdir(), `engram-bench-bodies-${process.pid}.json`);
  writeFileSync(list, JSON.stringify({ bodies, tokens: tokens ?? null }));
  const file = join(tmpdir(), `engram-bench-spread-${process.pid}.cjs`);
  writeFileSync(
    file,
    `const { bodies, tokens } = require(${JSON.stringify(list)});\n` +
      `let next = 0;\n` +
      `module.exports = (client) => {\n` +
      `  const k = next++ % ${connections};\n` +
      `  const start = Math.floor((k * bodies.length) / ${connections});\n` +
      `  const headers = tokens ? { authorization: 'Bearer ' + tokens[k % tokens.length] } : undefined;\n` +
      `  client.setRequests([...bodies.slice(start), ...bodies.slice(0, start)].map((body) => ({ body, headers })));\n` +
      `};\n`,
  );
  return file;
}

function run(job: GeneratorJob, files: { verifyBody: string; setupClient: string }, durationMs: number) {
  return autocannon({
    url: `http://127.0.0.1:${job.port}${job.path}`,
    method: 'POST',
    headers: { ...job.headers },
    requests: job.bodies.map((body) => ({ body })),
    connections: job.connections,
    workers: job.workers,
    duration: durationMs / 1000,
    ...files,
  });
}

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const job = JSON.parse(Buffer.concat(chunks).toString('utf8')) as GeneratorJob;
  const files = { verifyBody: verifier(job.expect), setupClient: spreader(job.bodies, job.connections, job.tokens) };
  const result = await (job.warmupMs > 0 ? run(job, files, job.warmupMs) : Promise.resolve())
    .then(() => run(job, files, job.durationMs))
    .finally(() => {
      for (const file of Object.values(files)) rmSync(file, { force: true });
      rmSync(join(tmpdir(), `engram-bench-bodies-${process.pid}.json`), { force: true });
    });
  const sample = existsSync(REFUSED) ? readFileSync(REFUSED, 'utf8') : undefined;
  rmSync(REFUSED, { force: true });
  const answer: GeneratorResult = {
    perSecond: result.requests.total / result.duration,
    median: result.latency.p50,
    p99: result.latency.p99,
    failures: result.errors + result.timeouts + result.non2xx + result.mismatches,
    unanswered: result.errors + result.timeouts,
    ...(sample === undefined ? {} : { sample }),
  };
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`load generator: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
