/**
 * The tests in four projects, by what a test needs rather than by folder, so the pure ones
 * run alone in seconds (`npm run test:unit`) and `npm test` still runs every one:
 *
 * - unit: in-process and pure. No child process, network server (loopback included),
 *   database file or PostgreSQL, no browser, no real-time sleeps, and no build (`dist/`).
 * - integration: everything else: servers on loopback, SQLite files, PostgreSQL, the
 *   built CLI and other child processes. A new test file lands here unless listed below.
 * - browser: the web UI and the OAuth consent page driven in Chromium.
 * - torture: crashes, concurrent processes, and inputs of millions of lines.
 *
 * Each file's project was chosen by reading it; when a test that needs more is added to a
 * unit file, it goes in a file of its own (as fast-path.test.ts and fast-path-declines).
 */

import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { acceleratorVariable } from './src/cli/environment.js';
import { ACCELERATOR_NAMES } from './src/storage/accelerators.js';

/** Folders whose files are all unit tests, but for NOT_UNIT. */
const UNIT_FOLDERS = ['test/memory/', 'test/access/', 'test/transfer/', 'test/json/', 'test/fuzz/', 'test/web-lib/'];

/** Unit tests in the other folders. */
const UNIT_FILES = [
  'test/cli/backend.test.ts',
  'test/cli/batched-log.test.ts',
  'test/cli/chat-stream.test.ts',
  'test/cli/config.test.ts',
  'test/cli/password-input.test.ts',
  'test/cli/readme-install.test.ts',
  'test/cli/repeat-command.test.ts',
  'test/cli/source-files.test.ts',
  'test/cli/trash-purge.test.ts',
  'test/http/api-access.test.ts',
  'test/http/api-activity.test.ts',
  'test/http/api-diff.test.ts',
  'test/http/api-edit.test.ts',
  'test/http/api-entries.test.ts',
  'test/http/api-errors.test.ts',
  'test/http/api-import-from.test.ts',
  'test/http/api-search.test.ts',
  'test/http/api-session.test.ts',
  'test/http/api-tidy.test.ts',
  'test/http/api-tokens.test.ts',
  'test/http/api-transfer.test.ts',
  'test/http/api-trash.test.ts',
  'test/http/api-wording.test.ts',
  'test/http/client-address.test.ts',
  'test/http/oauth-csrf.test.ts',
  'test/mcp/fast-path-declines.test.ts',
  'test/mcp/line-reader.test.ts',
  'test/mcp/resources.test.ts',
  'test/mcp/session-id.test.ts',
  'test/mcp/stdio-fast-path.test.ts',
  'test/mcp/stdio-input-end.test.ts',
  'test/mcp/stdio-opening.test.ts',
  'test/mcp/websocket-transport.test.ts',
  'test/package/bench-compare.test.ts',
  'test/package/bench-rounds.test.ts',
  'test/package/server-json.test.ts',
  'test/storage/change-feed-polling.test.ts',
  'test/storage/engine-drive.test.ts',
  'test/storage/memory-only.test.ts',
  'test/storage/memory.test.ts',
  'test/storage/write-gate.test.ts',
];

/** Files in UNIT_FOLDERS that are not unit tests. */
const NOT_UNIT = [
  'test/transfer/bridges/bounds.test.ts', // torture: sources of millions of lines, some 25 s
  'test/transfer/bridges/server-memory-written.test.ts', // the MCP memory server as a child process
  'test/fuzz/tools-sqlite.fuzz.test.ts', // SQLite files
  'test/memory/tools/store-failures.test.ts', // SQLite files, made to fail
  'test/memory/revert.test.ts', // reverts on SQLite files and PostgreSQL
  'test/memory/tidy.test.ts', // merges on SQLite files and PostgreSQL
  'test/transfer/backup/', // SQLite files, backed up
  'test/transfer/migration-batches.test.ts', // copies between SQLite files
];

const BROWSER = [
  'test/web/',
  'test/helpers/chromium.test.ts',
  'test/http/oauth-consent-browser.test.ts',
  'test/http/oauth-consent.e2e.test.ts',
  'test/http/oauth-flow.e2e.test.ts',
];

const TORTURE = ['test/torture/', 'test/transfer/bridges/bounds.test.ts'];

/**
 * The door suites run a second time with every accelerator switched off
 * (docs/accelerators.md), so the plain paths the accelerators stand in for stay proved too:
 * the MCP tests, and the HTTP tests that speak MCP over /mcp or /ws. The storage
 * accelerators' switches reach the `engram` these tests spawn (test/helpers/engram.ts
 * passes ENGRAM_ACCEL_* on); the store contract runs with them off by itself (test/storage).
 */
const ACCELERATORS_OFF = [
  'test/mcp/',
  'test/http/auth.test.ts',
  'test/http/context.test.ts',
  'test/http/drain.test.ts',
  'test/http/headers.test.ts',
  'test/http/limits.test.ts',
  'test/http/oauth-sdk.test.ts',
  'test/http/serve.e2e.test.ts',
  'test/http/server.test.ts',
  'test/http/session-client.test.ts',
  'test/http/shared-session.test.ts',
  'test/http/store-failures.test.ts',
  'test/http/websocket.test.ts',
];

type Project = 'unit' | 'integration' | 'browser' | 'torture';

const within = (file: string, places: readonly string[]) =>
  places.some((place) => (place.endsWith('/') ? file.startsWith(place) : file === place));

function projectOf(file: string): Project {
  if (within(file, BROWSER)) return 'browser';
  if (within(file, TORTURE)) return 'torture';
  if (within(file, UNIT_FILES) || (within(file, UNIT_FOLDERS) && !within(file, NOT_UNIT))) return 'unit';
  return 'integration';
}

const TEST_FILES = readdirSync(fileURLToPath(new URL('test', import.meta.url)), { recursive: true, encoding: 'utf8' })
  .filter((path) => path.endsWith('.test.ts'))
  .map((path) => `test/${path}`);

const project = (name: Project) => ({
  extends: true as const,
  test: { name, include: TEST_FILES.filter((file) => projectOf(file) === name) },
});

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Measured on the 2-core machine (test/http, core and tools): 107 s as vitest's default
    // (one worker there, a fresh module graph per file), 58 s sharing the module graph
    // between the files of a worker, 41 s with two workers. Files wait on child processes
    // and PostgreSQL much of the time, so two workers pay off even on two cores. Each test
    // file cleans up after itself (temporary folders, stubbed env, timers), which sharing needs.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    isolate: false,
    projects: [
      project('unit'),
      project('integration'),
      project('browser'),
      project('torture'),
      {
        extends: true,
        test: {
          name: 'accelerators-off',
          include: TEST_FILES.filter((file) => within(file, ACCELERATORS_OFF)),
          // Every switch by the names and rule the CLI reads, so a new accelerator is off here too.
          env: Object.fromEntries(
            [
              'ENGRAM_ACCEL_HTTP_FAST_PATH',
              'ENGRAM_ACCEL_STDIO_FAST_PATH',
              ...ACCELERATOR_NAMES.map(acceleratorVariable),
            ].map((variable) => [variable, '0']),
          ),
        },
      },
    ],
    // `npm run coverage`: what the tests run of src/ in the test processes (not in the
    // child processes of the built CLI, which run dist/).
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      reporter: ['text-summary', 'html'],
      reportsDirectory: 'coverage',
      reportOnFailure: true,
    },
  },
});
