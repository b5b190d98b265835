/**
 * Start-up (DESIGN §7: `engram stdio` answers `tools/list` within 2x a bare Node
 * process's start): a client starts the server, sends `initialize`, waits for its answer,
 * then sends `notifications/initialized` and `tools/list`, as Claude Desktop and Claude
 * Code do, and the time is taken from the spawn to the `tools/list` answer. Beside it,
 * interleaved start by start (each side first in turn, so none always follows another),
 * the same build with the SDK loaded first (ENGRAM_ACCEL_STDIO_FAST_PATH=0: the before of
 * stdio-opening.ts) and a bare Node process (bare-stdio-server.ts) answering the same two
 * requests with the same tool definitions read from spec/tools.json: what any MCP server
 * on Node pays to start. Engram opens a SQLite memory of `entries` entries, with a config
 * file, as a user's would be (after the opening: src/cli/stdio.ts).
 */

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { subjects } from './content.js';
import { ENGRAM_CLI, engramFiles, engramFlags, seedEngram } from './engram.js';
import { ratioAtMost, type Section } from './report.js';
import { formatMs, formatRatio, summarize } from './stats.js';

export interface StartupOptions {
  readonly entries: number;
  readonly rounds: number;
}

export const DEFAULT_STARTUP: StartupOptions = { entries: 1_000, rounds: 30 };
export const QUICK_STARTUP: StartupOptions = { entries: 50, rounds: 4 };

const BARE_SERVER = fileURLToPath(new URL('./bare-stdio-server.js', import.meta.url));
const TARGET_RATIO = 2;
/** Starts of each, not kept, before the measured ones: the disk cache and the CPU's state as in a machine in use. */
const WARMUP_ROUNDS = 2;

const line = (message: unknown) => `${JSON.stringify(message)}\n`;

const INITIALIZE = line({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench-start', version: '1' } },
});
const LIST =
  line({ jsonrpc: '2.0', method: 'notifications/initialized' }) + line({ jsonrpc: '2.0', id: 2, method: 'tools/list' });

/**
 * Spawns `args` and plays the client's opening: the milliseconds from the spawn to the
 * `tools/list` answer (with the three tools), resolved once the process has exited, so that
 * its shutdown never overlaps the next start measured.
 */
function startAndList(args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const spawned = performance.now();
  return new Promise((resolve, reject) => {
    const child: ChildProcessWithoutNullStreams = spawn(process.execPath, args, { env, stdio: 'pipe' });
    let buffered = '';
    let stderr = '';
    const fail = (why: string) => {
      child.kill();
      reject(new Error(`${args.join(' ')}: ${why}${stderr === '' ? '' : `\n${stderr}`}`));
    };
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('exit', (code) => fail(`exited (${code}) before answering tools/list`));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const answer = JSON.parse(buffered.slice(0, end)) as { id?: number; result?: { tools?: unknown[] } };
        buffered = buffered.slice(end + 1);
        if (answer.id === 1) child.stdin.write(LIST);
        if (answer.id === 2) {
          const took = performance.now() - spawned;
          child.removeAllListeners('exit');
          child.once('exit', () => {
            if (answer.result?.tools?.length === 3) resolve(took);
            else reject(new Error(`${args.join(' ')}: tools/list answered ${JSON.stringify(answer)}`));
          });
          child.kill();
        }
      }
    });
    child.stdin.write(INITIALIZE);
  });
}

export async function benchStartup(options: StartupOptions = DEFAULT_STARTUP): Promise<Section> {
  const folder = mkdtempSync(join(tmpdir(), 'engram-bench-startup-'));
  try {
    const files = engramFiles(folder);
    seedEngram(files, subjects(0, options.entries));
    const engramArgs = [ENGRAM_CLI, 'stdio', ...engramFlags(files)];
    const starts = {
      engram: () => startAndList(engramArgs, files.env),
      // The before: ENGRAM_ACCEL_STDIO_FAST_PATH=0 loads the MCP SDK at start and lets it answer the opening.
      sdkFirst: () => startAndList(engramArgs, { ...files.env, ENGRAM_ACCEL_STDIO_FAST_PATH: '0' }),
      bare: () => startAndList([BARE_SERVER, '0'], files.env),
    };
    const sides = Object.keys(starts) as (keyof typeof starts)[];
    const samples: Record<keyof typeof starts, number[]> = { engram: [], sdkFirst: [], bare: [] };
    for (let round = -WARMUP_ROUNDS; round < options.rounds; round++) {
      // Each side first in turn, so that none always follows the same one.
      const offset = ((round % sides.length) + sides.length) % sides.length;
      for (const side of [...sides.slice(offset), ...sides.slice(0, offset)]) {
        const took = await starts[side]();
        if (round >= 0) samples[side].push(took);
      }
    }
    const figures = {
      engram: summarize(samples.engram),
      sdkFirst: summarize(samples.sdkFirst),
      bare: summarize(samples.bare),
    };
    const ratio = figures.engram.median / figures.bare.median;
    const row = (name: string, side: keyof typeof figures) => [
      name,
      formatMs(figures[side].median),
      formatMs(figures[side].p99),
      formatRatio(figures[side].median / figures.bare.median),
    ];
    return {
      title: 'Start-up: engram stdio to its first tools/list',
      method:
        'A client spawns the server, sends `initialize`, waits for the answer, then sends `notifications/initialized` ' +
        'and `tools/list`, as Claude Desktop and Claude Code do; timed from the spawn to the `tools/list` answer. ' +
        'Engram answers that opening before loading the MCP SDK (src/mcp/stdio-opening.ts); beside it, the same ' +
        'build with `ENGRAM_ACCEL_STDIO_FAST_PATH=0`, which loads the SDK at start and lets it answer (the before), ' +
        'and a bare Node process answering the same requests with the same definitions ' +
        '(bench/bare-stdio-server.ts): what any MCP server on Node pays to start. ' +
        `Start by start, ${options.rounds} of each, each first in turn. Engram opens a SQLite memory of ` +
        `${options.entries.toLocaleString('en-US')} entries, with a config file, as a user's would be; it opens ` +
        'it after the opening, not before (src/cli/stdio.ts).',
      tables: [
        {
          title: 'Spawn to tools/list answered',
          header: ['server', 'median', 'p99', 'against bare Node'],
          rows: [
            row('`engram stdio`', 'engram'),
            row('`engram stdio`, the SDK loaded first (`ENGRAM_ACCEL_STDIO_FAST_PATH=0`)', 'sdkFirst'),
            row('bare Node', 'bare'),
          ],
        },
      ],
      targets: [
        ratioAtMost(
          '`engram stdio` start to `tools/list`, against a bare Node process',
          ratio,
          TARGET_RATIO,
          formatRatio,
        ),
      ],
      reading: [],
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
