/**
 * The examples of README.md's "The command line" section run as written: each line of
 * its sh block, top to bottom, in a fresh folder with a fresh memory, as a newcomer would
 * paste them, exits 0. `engram serve` (it runs until stopped) and `engram migrate` (it
 * needs a PostgreSQL server) are the lines left out; their own tests cover them.
 */

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { childEnv, ENGRAM_CLI, tempDir } from '../helpers/engram.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const NOT_RUN = [/^engram serve\b/, /^engram migrate\b/];

/** The non-blank lines of the first sh block under `## The command line`. */
function commandLineExamples(readme: string): string[] {
  const section = readme.split(/^## The command line$/m)[1]?.split(/^## /m)[0] ?? '';
  const block = /^```sh\n([\s\S]*?)^```/m.exec(section)?.[1] ?? '';
  return block.split('\n').filter((line) => line.trim() !== '');
}

/** Runs one line in bash (pipefail), `engram` being the built CLI; resolves with its exit code and stderr. */
function runLine(
  line: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ line: string; code: number; stderr: string }> {
  const script = `engram() { "${process.execPath}" "${ENGRAM_CLI}" "$@"; }\n${line}`;
  return new Promise((resolve) => {
    const child = execFile('bash', ['-o', 'pipefail', '-c', script], { cwd, env }, (error, _stdout, stderr) => {
      resolve({ line, code: typeof error?.code === 'number' ? error.code : error ? -1 : 0, stderr });
    });
    child.stdin?.end();
  });
}

describe("README.md's command line examples", () => {
  it('run as written, top to bottom, on a fresh memory', async () => {
    const lines = commandLineExamples(readFileSync(`${REPO}/README.md`, 'utf8'));
    expect(lines.length).toBeGreaterThan(10);
    const dir = tempDir();
    // A fresh memory at the default path; `git log` reads this repository's history.
    const env = childEnv(dir.path, { XDG_DATA_HOME: dir.path, GIT_DIR: `${REPO}/.git` });
    const results = [];
    for (const line of lines.filter((line) => !NOT_RUN.some((pattern) => pattern.test(line)))) {
      results.push(await runLine(line, dir.path, env));
    }
    expect(results.filter((result) => result.code !== 0)).toEqual([]);
    // Some forty commands, each a process of its own: ~10 s alone, three times that on a machine busy with other tests.
  }, 120_000);
});
