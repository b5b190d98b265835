/**
 * The Claude Desktop bundle (`npm run bundle:mcpb`) as Claude Desktop would use it: built,
 * unpacked with the official `mcpb unpack`, and its server started exactly as its
 * manifest's `mcp_config` says (the bundle's folder and the user's memory file put in
 * for its variables), under Node 22 — no native addon may be loaded, so its SQLite is
 * `node:sqlite` — then driven through the MCP SDK client. The file it writes is an
 * ordinary Engram database: this Node's better-sqlite3 reads the entry back. And its
 * memory file defaults to the one `engram stdio` uses, so Claude Code and the bundle share
 * one memory.
 */

import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script, without declarations
import { supersededChunks } from '../../scripts/bundle-mcpb.mjs';
// @ts-expect-error: a plain .mjs script, without declarations
import { nodeBinary } from '../../scripts/node-binaries.mjs';
import { readEnvironment } from '../../src/cli/environment.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { type TempDir, tempDir } from '../helpers/engram.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUNDLE = join(ROOT, 'dist-mcpb', 'engram.mcpb');
const MCPB = join(ROOT, 'node_modules', '@anthropic-ai', 'mcpb', 'dist', 'cli', 'cli.js');
/** The oldest Node the bundle's `compatibility` admits (22.16, the first whose node:sqlite has FTS5). */
const NODE_22 = '22.16.0';

interface Manifest {
  readonly version: string;
  readonly tools: readonly { name: string }[];
  readonly compatibility: { runtimes: { node: string } };
  readonly server: {
    readonly entry_point: string;
    readonly mcp_config: { command: string; args: string[]; env: Record<string, string> };
  };
  readonly user_config: Record<string, { default: string }>;
}

/** Claude Desktop's substitution of `${…}` variables in the manifest's server command and defaults. */
function substitute(text: string, variables: Record<string, string>): string {
  return text.replace(/\$\{([^}]+)\}/g, (whole, name: string) => variables[name] ?? whole);
}

const cleanups: (() => void | Promise<void>)[] = [];
let folder: TempDir;
let unpacked: string;
let manifest: Manifest;
let node22: string;

beforeAll(() => {
  // Installed from the npm registry the first time (scripts/node-binaries.mjs), which may take a while.
  node22 = nodeBinary(NODE_22);
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'bundle-mcpb.mjs')], { cwd: ROOT, stdio: 'pipe' });
  folder = tempDir((undo) => cleanups.push(undo));
  unpacked = join(folder.path, 'unpacked');
  execFileSync(process.execPath, [MCPB, 'unpack', BUNDLE, unpacked], { stdio: 'pipe' });
  manifest = JSON.parse(readFileSync(join(unpacked, 'manifest.json'), 'utf8')) as Manifest;
}, 300_000);

afterAll(async () => {
  for (const undo of cleanups) await undo();
});

describe('the Claude Desktop bundle', () => {
  it('holds no native addon, the three tools of spec/tools.json, and the package’s version', () => {
    const files = readdirSync(unpacked, { recursive: true, encoding: 'utf8' });
    expect(files.filter((file) => file.endsWith('.node'))).toEqual([]);
    expect(files.some((file) => file.includes('better-sqlite3'))).toBe(false);
    // Only this build's CLI: no chunk of an earlier build that dist/ keeps for running servers.
    const superseded = [...supersededChunks()].map((path) => join('server', 'dist', path));
    expect(files.filter((file) => superseded.includes(file))).toEqual([]);
    const spec = JSON.parse(readFileSync(join(ROOT, 'spec', 'tools.json'), 'utf8')) as { function: { name: string } }[];
    expect(manifest.tools.map((tool) => tool.name)).toEqual(spec.map((tool) => tool.function.name));
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(manifest.version).toBe(pkg.version);
    expect(manifest.compatibility.runtimes.node).toBe('>=22.16.0');
  });

  it('keeps its memory, by default, in the file engram stdio uses', () => {
    // Claude Desktop puts the user's home folder for ${HOME}; engram stdio reads it from the system.
    const bundleDefault = substitute(manifest.user_config.memory_file!.default, { HOME: homedir() });
    expect(bundleDefault).toBe(readEnvironment({}).defaultDatabasePath);
  });

  it('serves the tools under Node 22, started as its manifest says, into an ordinary Engram database', async () => {
    // A first run: a home folder with nothing in it, and the memory file left at its default.
    const home = join(folder.path, 'home');
    mkdirSync(home);
    const memoryFile = substitute(manifest.user_config.memory_file!.default, { HOME: home });
    const variables = { __dirname: unpacked, 'user_config.memory_file': memoryFile };
    const { command, args, env } = manifest.server.mcp_config;
    expect(command).toBe('node');
    const client = new Client({ name: 'Claude Desktop', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: node22,
        args: args.map((arg) => substitute(arg, variables)),
        env: {
          PATH: process.env.PATH ?? '',
          HOME: home,
          ...Object.fromEntries(Object.entries(env).map(([key, value]) => [key, substitute(value, variables)])),
        },
        stderr: 'pipe',
      }),
    );
    try {
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.name).sort()).toEqual(['memory_drop', 'memory_open', 'memory_write']);
      const written = await client.callTool({
        name: 'memory_write',
        arguments: { name: 'people/ada', description: 'Ada', new: 'Writes programs.\n' },
      });
      expect(written.isError).not.toBe(true);
      const opened = await client.callTool({ name: 'memory_open', arguments: { names: ['people/ada'] } });
      expect(JSON.stringify(opened.content)).toContain('Writes programs.');
    } finally {
      await client.close();
    }
    // Made as engram stdio makes its default memory: the folder 0700, the file 0600.
    expect(statSync(dirname(memoryFile)).mode & 0o777).toBe(0o700);
    expect(statSync(memoryFile).mode & 0o777).toBe(0o600);
    const store = await openSqliteStore({ path: memoryFile });
    try {
      expect((await store.index('local')).map((row) => row.name)).toEqual(['people/ada']);
    } finally {
      await store.close();
    }
  }, 120_000);
});
