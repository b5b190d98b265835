/**
 * `npm run bench`: runs every benchmark in turn, prints each section as it completes,
 * and writes docs/benchmarks.md. Pass benchmark names (inprocess, opened: the last-opened bookkeeping on and off,
 * sqlite-drivers, stdio, startup, idle-memory, http, accelerators: the MCP door's,
 * storage-accelerators: each storage accelerator on and off) to run
 * only those; the document is written only by a full run. `--quick` runs every row
 * briefly at small sizes, for developing the benchmark (`npm run bench -- --quick`); it
 * never writes the document. `--rows PATTERN` (a regular expression) measures only the HTTP
 * rows whose workload it matches, beside the ceiling, e.g. the SDK peer's and Engram's on SQLite:
 * `npm run bench -- http --quick --rows '^(SDK peer on )?SQLite (reads|durable)'`; it too
 * never writes the document.
 *
 * The benchmarks are compiled by tsconfig.bench.json into dist-bench/ and run with plain
 * node, so that no loader sits under the figures; `npm run bench` copies spec/ beside the
 * compiled sources, where the tool definitions look for it.
 */

import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { benchAccelerators, DEFAULT_ACCELERATORS, QUICK_ACCELERATORS } from './accelerators.js';
import { benchHttp, DEFAULT_HTTP, QUICK_HTTP } from './http.js';
import { benchIdleMemory, DEFAULT_IDLE_MEMORY, QUICK_IDLE_MEMORY } from './idle-memory.js';
import { benchInProcess, DEFAULT_IN_PROCESS, QUICK_IN_PROCESS } from './inprocess.js';
import { benchOpened, DEFAULT_OPENED, QUICK_OPENED } from './opened.js';
import { busyShare, SETTLE_MS } from './other-work.js';
import { renderDocument, renderSection, type Section } from './report.js';
import { benchSqliteDrivers, DEFAULT_SQLITE_DRIVERS, QUICK_SQLITE_DRIVERS } from './sqlite-drivers.js';
import { benchStartup, DEFAULT_STARTUP, QUICK_STARTUP } from './startup.js';
import { benchStdio, DEFAULT_STDIO, QUICK_STDIO } from './stdio.js';
import {
  benchStorageAccelerators,
  DEFAULT_STORAGE_ACCELERATORS,
  QUICK_STORAGE_ACCELERATORS,
} from './storage-accelerators.js';

const BENCHMARKS: Readonly<Record<string, (quick: boolean, rows: RegExp | undefined) => Promise<Section[]>>> = {
  inprocess: async (quick) => [await benchInProcess(quick ? QUICK_IN_PROCESS : DEFAULT_IN_PROCESS)],
  opened: async (quick) => [await benchOpened(quick ? QUICK_OPENED : DEFAULT_OPENED)],
  'sqlite-drivers': async (quick) => [await benchSqliteDrivers(quick ? QUICK_SQLITE_DRIVERS : DEFAULT_SQLITE_DRIVERS)],
  stdio: (quick) => benchStdio(quick ? QUICK_STDIO : DEFAULT_STDIO),
  startup: async (quick) => [await benchStartup(quick ? QUICK_STARTUP : DEFAULT_STARTUP)],
  'idle-memory': async (quick) => [await benchIdleMemory(quick ? QUICK_IDLE_MEMORY : DEFAULT_IDLE_MEMORY)],
  http: async (quick, rows) => [await benchHttp({ ...(quick ? QUICK_HTTP : DEFAULT_HTTP), rows })],
  accelerators: async (quick) => [await benchAccelerators(quick ? QUICK_ACCELERATORS : DEFAULT_ACCELERATORS)],
  'storage-accelerators': async (quick) => [
    await benchStorageAccelerators(quick ? QUICK_STORAGE_ACCELERATORS : DEFAULT_STORAGE_ACCELERATORS),
  ],
};

const QUICK = '--quick';
const ROWS = '--rows';

const DOCUMENT = new URL('../../docs/benchmarks.md', import.meta.url);
const COMMAND = 'npm run bench';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes(QUICK);
  const rowsAt = args.indexOf(ROWS);
  const pattern = rowsAt === -1 ? undefined : args[rowsAt + 1];
  if (rowsAt !== -1 && pattern === undefined) throw new Error(`${ROWS} takes a regular expression`);
  const rows = pattern === undefined ? undefined : new RegExp(pattern);
  const asked = args.filter((arg, at) => arg !== QUICK && (rowsAt === -1 || (at !== rowsAt && at !== rowsAt + 1)));
  const unknown = asked.filter((name) => !(name in BENCHMARKS));
  if (unknown.length > 0) {
    throw new Error(`unknown benchmark ${unknown.join(', ')}: choose from ${Object.keys(BENCHMARKS).join(', ')}`);
  }
  const chosen = asked.length > 0 ? asked : Object.keys(BENCHMARKS);
  const otherWorkAtStart = await busyShare(SETTLE_MS);
  const startedAt = new Date();
  const start = performance.now();
  const sections: Section[] = [];
  for (const name of chosen) {
    process.stderr.write(`bench: ${name}…\n`);
    for (const section of await BENCHMARKS[name]!(quick, rows)) {
      sections.push(section);
      process.stdout.write(`${renderSection(section)}\n\n`);
    }
  }
  if (asked.length === 0 && !quick && rows === undefined) {
    const seconds = (performance.now() - start) / 1000;
    const otherWork = [otherWorkAtStart, await busyShare()] as const;
    writeFileSync(DOCUMENT, renderDocument(sections, { command: COMMAND, startedAt, seconds, otherWork }));
    process.stderr.write(`bench: wrote ${DOCUMENT.pathname}\n`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
