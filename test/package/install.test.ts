/**
 * The package as a user gets it (issue 27): `npm pack` of the build, installed with
 * `npm install -g` into an empty prefix, then `engram --version`, `engram stdio` driven by
 * the MCP SDK client, and `engram serve` answering /healthz, each with no other step. The
 * tarball holds only what runs and what a user reads: no sources, tests or source maps.
 *
 * Packed from the build `npm run build` made (--ignore-scripts: the build is done), its
 * dependencies installed from the npm cache where they are (--prefer-offline). One thing
 * is handed over: this machine cannot reach the GitHub release better-sqlite3's install
 * script downloads its prebuilt binary from, so that script would compile it (a minute and
 * more); it is given this checkout's binary instead, as the local prebuild the same script
 * looks for first (npm_config_better_sqlite3_local_prebuilds).
 */

import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { stopGroup } from '../helpers/process-group.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

interface Packed {
  readonly filename: string;
  readonly files: readonly { path: string }[];
}

/** This environment without npm's own variables (a run under `npm test` has them), with `extra`. */
function npmFree(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
  // `engram` starts with #!/usr/bin/env node: the node running these tests.
  return { ...env, PATH: `${dirname(process.execPath)}${delimiter}${env.PATH ?? ''}`, ...extra };
}

/** This checkout's better-sqlite3 binary, packed as the prebuild its install script looks for. */
async function localPrebuild(folder: string): Promise<string> {
  const driver = join(ROOT, 'node_modules', 'better-sqlite3');
  const { version: driverVersion } = JSON.parse(readFileSync(join(driver, 'package.json'), 'utf8')) as {
    version: string;
  };
  const name = `better-sqlite3-v${driverVersion}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  mkdirSync(folder);
  await run('tar', ['-czf', join(folder, name), '-C', driver, 'build/Release/better_sqlite3.node']);
  return folder;
}

let work: string;
let packed: Packed;
let engram: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'engram-install-'));
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], {
    cwd: ROOT,
    env: npmFree(),
  });
  const [pack] = JSON.parse(stdout) as Packed[];
  if (!pack) throw new Error(`npm pack printed no package: ${stdout}`);
  packed = pack;
  const prefix = join(work, 'prefix');
  await run(
    'npm',
    [
      'install',
      '--global',
      '--prefix',
      prefix,
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      join(work, packed.filename),
    ],
    {
      cwd: work,
      env: npmFree({ npm_config_better_sqlite3_local_prebuilds: await localPrebuild(join(work, 'prebuilds')) }),
    },
  );
  engram = join(prefix, 'bin', 'engram');
}, 300_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the packed engram', () => {
  it('holds what runs and what a user reads: no sources, tests or source maps', () => {
    const paths = packed.files.map((file) => file.path).sort();

    for (const path of paths) {
      expect(path).toMatch(
        /^(dist\/|docs\/[a-z-]+\.md$|spec\/tools\.json$|(README|CHANGELOG)\.md$|LICENSE$|package\.json$)/,
      );
      expect(path).not.toMatch(/\.map$/);
      // The CLI is its bundle alone: tsc's modules of src/cli are not loaded by it.
      if (path.startsWith('dist/cli/')) expect(path).toMatch(/^dist\/cli\/(main|[\w-]+\.chunk)\.js$/);
    }
    expect(paths).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'README.md',
        'CHANGELOG.md',
        'spec/tools.json',
        'dist/cli/main.js',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/web/index.html',
        'docs/http.md',
      ]),
    );
    expect(paths.some((path) => path.startsWith('dist/web/assets/'))).toBe(true);
  });

  it('installed into an empty prefix, tells its version', async () => {
    const { stdout } = await run(engram, ['--version'], { env: npmFree() });
    expect(stdout.trim()).toBe(version);
  });

  it('installed, serves MCP on stdio to the SDK client: a write, then the entry opened', async () => {
    const client = new Client({ name: 'install-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: engram,
        args: ['stdio'],
        env: npmFree({ ENGRAM_DB: join(work, 'stdio.db'), XDG_CONFIG_HOME: work }) as Record<string, string>,
        stderr: 'pipe',
      }),
    );
    onTestFinished(() => client.close());
    const text = (result: Awaited<ReturnType<typeof client.callTool>>) =>
      (result.content as { text: string }[]).map((block) => block.text).join('');

    const written = await client.callTool({
      name: 'memory_write',
      arguments: { name: 'topics/editor', description: 'Editor preferences', new: 'Uses Helix.' },
    });
    expect(written.isError).toBeFalsy();
    expect(text(written)).toContain('topics/editor');

    const opened = await client.callTool({ name: 'memory_open', arguments: { names: ['topics/editor'] } });
    expect(opened.isError).toBeFalsy();
    expect(text(opened)).toContain('Uses Helix.');
  });

  it('installed, serves over HTTP: /healthz answers, and the web UI is there', async () => {
    const child = spawn(engram, ['serve', '--json', '--host', '127.0.0.1', '--port', '0'], {
      env: npmFree({ ENGRAM_DB: join(work, 'serve.db'), XDG_CONFIG_HOME: work }),
      stdio: ['ignore', 'pipe', 'ignore'],
      detached: true,
    });
    onTestFinished(() => stopGroup(child, 'SIGKILL'));
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`engram serve exited with ${code}`)));
    });
    const { url } = JSON.parse(line) as { url: string };
    const base = url.replace(/\/mcp$/, '');

    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script');
  });
});
