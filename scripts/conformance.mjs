/**
 * `npm run conformance`: runs the official MCP conformance suite
 * (@modelcontextprotocol/conformance) against the built `engram serve`, for the server
 * scenarios that apply to a Streamable HTTP server of three tools, two resources and two
 * prompts, none of them the suite's fixtures (docs/conformance.md says
 * which, and why the others do not). The suite needs Node 22, so it runs under the
 * `node@22` npm package through npx; Engram itself runs on the Node running this script.
 * Exits non-zero if any of those scenarios records a failure.
 */

import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CONFORMANCE_PACKAGE = '@modelcontextprotocol/conformance@0.1.16';
const NODE_22_PACKAGE = 'node@22.23.3';

/** The server scenarios that apply to Engram: lifecycle, listings, completion, utilities, HTTP transport. */
const SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'resources-list',
  'prompts-list',
  'completion-complete',
  'dns-rebinding-protection',
  'server-sse-multiple-streams',
  'server-sse-polling',
];

/** A guard against a hung child, not a measurement: generous on purpose. */
const HANG_GUARD_MS = 180_000;

const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));

/** Runs a command to completion, collecting its output; rejects only if it cannot start or hangs. */
function run(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not finish within ${HANG_GUARD_MS / 1000} s`));
    }, HANG_GUARD_MS);
    child.on('error', (error) => {
      clearTimeout(guard);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, output });
    });
  });
}

/** Starts `engram serve` on a free loopback port with its own database; resolves once it prints its URL. */
function startEngram(database) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'serve', '--port', '0', '--db', database], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const url = /serving MCP at (\S+)/.exec(stdout)?.[1];
      if (url) resolve({ url, stop: () => stopEngram(child) });
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`engram serve exited (code ${code}) before serving:\n${stderr}`)));
  });
}

function stopEngram(child) {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Runs one scenario; its checks come from the checks.json the suite writes under `outputDir`. */
async function runScenario(url, scenario, outputDir) {
  const { code, output } = await run('npx', [
    '--yes',
    '--loglevel=error',
    '--package',
    NODE_22_PACKAGE,
    '--package',
    CONFORMANCE_PACKAGE,
    '--',
    'conformance',
    'server',
    '--url',
    url,
    '--scenario',
    scenario,
    '--output-dir',
    outputDir,
  ]);
  const folder = (await readdir(outputDir).catch(() => [])).find((name) => name.startsWith(`server-${scenario}-`));
  const checks = folder ? JSON.parse(await readFile(join(outputDir, folder, 'checks.json'), 'utf8')) : [];
  const count = (status) => checks.filter((check) => check.status === status).length;
  const passed = code === 0 && checks.length > 0 && count('FAILURE') === 0;
  return { scenario, passed, code, output, checks, successes: count('SUCCESS'), failures: count('FAILURE') };
}

function printResult(result) {
  const warnings = result.checks.filter((check) => check.status === 'WARNING').length;
  const verdict = !result.passed ? 'FAIL' : result.successes > 0 ? 'PASS' : 'OK  ';
  console.log(
    `${verdict}  ${result.scenario.padEnd(30)} ${result.successes} passed, ${result.failures} failed, ${warnings} warnings`,
  );
  for (const check of result.checks) {
    if (check.status === 'FAILURE' || check.status === 'WARNING') {
      const why = check.errorMessage ?? check.details?.message ?? '';
      console.log(`      ${check.status.toLowerCase()}: ${check.id}${why ? `: ${why}` : ''}`);
    }
  }
  if (!result.passed) console.log(result.output.replace(/^/gm, '      | '));
}

async function main() {
  const workspace = await mkdtemp(join(tmpdir(), 'engram-conformance-'));
  let engram;
  try {
    engram = await startEngram(join(workspace, 'engram.db'));
    console.log(`${CONFORMANCE_PACKAGE} (under ${NODE_22_PACKAGE}) against ${engram.url}\n`);
    const results = [];
    for (const scenario of SCENARIOS) {
      const result = await runScenario(engram.url, scenario, join(workspace, scenario));
      printResult(result);
      results.push(result);
    }
    const failed = results.filter((result) => !result.passed);
    console.log(
      `\n${results.length - failed.length} of ${results.length} applicable scenarios record no failure` +
        ' (PASS: checks passed; OK: warnings only, see docs/conformance.md).',
    );
    if (failed.length > 0) process.exitCode = 1;
  } finally {
    await engram?.stop();
    await rm(workspace, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(`conformance: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
