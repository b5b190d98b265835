/**
 * `npm run bundle:mcpb`: Engram as a Claude Desktop bundle, `engram.mcpb`, double-clicked
 * to install. Claude Desktop runs a bundle's server with its own Node and cannot load a
 * third-party native addon (`.node` file), so the bundle holds none: its SQLite is Node's
 * built-in `node:sqlite` (Node 22.16 and newer, which `compatibility` names), and the build
 * fails if a `.node` file is inside.
 *
 * The bundle holds the built CLI (dist/cli: the bundled `engram` and its chunks), the
 * tools' words (spec/), package.json (its version), pg and what pg needs (for a memory on
 * PostgreSQL), the icon, and a manifest made here from package.json and spec/tools.json, so
 * that neither the version nor the tools can drift. It serves `engram stdio`; the memory file
 * defaults to the one `engram stdio` uses, so Claude Code and the bundle share one memory.
 * The manifest is checked with `mcpb validate` and the bundle made with `mcpb pack`
 * (@anthropic-ai/mcpb). Run after `npm run build`; writes dist-mcpb/engram.mcpb.
 */

import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'dist-mcpb');
const staging = join(out, 'engram');
const bundle = join(out, 'engram.mcpb');
const MCPB = join(root, 'node_modules', '@anthropic-ai', 'mcpb', 'dist', 'cli', 'cli.js');
/** The oldest Node with `node:sqlite` unflagged and the statement API Engram's driver uses. */
export const NODE_RANGE = '>=22.16.0';

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const tools = JSON.parse(readFileSync(join(root, 'spec', 'tools.json'), 'utf8'));

/** `${name}`: a variable Claude Desktop substitutes in the manifest's server command and defaults. */
const variable = (name) => `\${${name}}`;

/** The manifest (MCPB 0.3) of this build. */
export function manifest() {
  return {
    manifest_version: '0.3',
    name: 'engram',
    display_name: 'Engram',
    version: pkg.version,
    description: pkg.description,
    long_description:
      'Engram gives every assistant you use one shared, persistent memory: Claude Desktop, Claude Code, ' +
      'ChatGPT and Claude on the web, the llama.cpp WebUI, your own agents. Each entry keeps its history, ' +
      'so any change can be seen and undone. The memory is a SQLite file on your computer.',
    author: { name: 'The Engram authors' },
    ...(pkg.repository?.url ? { repository: { type: 'git', url: pkg.repository.url.replace(/^git\+/, '') } } : {}),
    ...(pkg.homepage ? { homepage: pkg.homepage } : {}),
    icon: 'icon.png',
    server: {
      type: 'node',
      entry_point: 'server/dist/cli/main.js',
      mcp_config: {
        command: 'node',
        args: [`${variable('__dirname')}/server/dist/cli/main.js`, 'stdio'],
        env: { ENGRAM_DB: variable('user_config.memory_file'), ENGRAM_SQLITE_DRIVER: 'node' },
      },
    },
    tools: tools.map(({ function: tool }) => ({ name: tool.name, description: tool.description })),
    tools_generated: false,
    keywords: ['memory', 'mcp', 'sqlite', 'assistant'],
    license: pkg.license,
    compatibility: { platforms: ['darwin', 'win32', 'linux'], runtimes: { node: NODE_RANGE } },
    user_config: {
      memory_file: {
        type: 'string',
        title: 'Memory file',
        description:
          'Where the memory is kept (a SQLite file, created if missing). The default is the file `engram stdio` ' +
          'uses, so Claude Code and this bundle share one memory.',
        default: `${variable('HOME')}/.local/share/engram/memory.db`,
        required: true,
      },
    },
  };
}

/** A package's folder in node_modules, found as Node would from `from`. */
function packageFolder(name, from) {
  const require = createRequire(join(from, 'package.json'));
  let folder = dirname(require.resolve(name));
  while (
    !existsSync(join(folder, 'package.json')) ||
    JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')).name !== name
  ) {
    folder = dirname(folder);
  }
  return folder;
}

/** Copies `name` and every package it depends on (not its optional ones) into `modules`. */
function copyWithDependencies(name, from, modules, copied = new Set()) {
  if (copied.has(name)) return;
  copied.add(name);
  const folder = packageFolder(name, from);
  cpSync(folder, join(modules, name), { recursive: true, filter: (path) => !path.includes(`${folder}/node_modules`) });
  const { dependencies = {} } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
  for (const dependency of Object.keys(dependencies)) copyWithDependencies(dependency, folder, modules, copied);
}

/**
 * The files of earlier builds that dist/ still holds (scripts/swap-dist.mjs lists them in
 * dist/superseded-files.json, paths relative to dist/), which this build does not load.
 */
export function supersededChunks() {
  const list = join(root, 'dist', 'superseded-files.json');
  return new Set(existsSync(list) ? Object.keys(JSON.parse(readFileSync(list, 'utf8'))) : []);
}

/** Every file under `folder`, relative to it. */
function filesUnder(folder) {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(folder.length + 1));
}

function build() {
  if (!existsSync(join(root, 'dist', 'cli', 'main.js'))) {
    throw new Error('dist/cli/main.js is missing: run `npm run build` first (`npm run bundle:mcpb` does)');
  }
  rmSync(out, { recursive: true, force: true });
  const server = join(staging, 'server');
  mkdirSync(join(server, 'dist'), { recursive: true });
  // The CLI bundle and its chunks, without source maps: what `engram stdio` loads. Not the
  // chunks of earlier builds that the build keeps for servers still running (supersededChunks).
  const superseded = supersededChunks();
  cpSync(join(root, 'dist', 'cli'), join(server, 'dist', 'cli'), {
    recursive: true,
    filter: (path) =>
      !path.endsWith('.map') && !path.endsWith('.d.ts') && !superseded.has(relative(join(root, 'dist'), path)),
  });
  cpSync(join(root, 'spec'), join(server, 'spec'), { recursive: true });
  const { name, version, type, license } = pkg;
  writeFileSync(join(server, 'package.json'), `${JSON.stringify({ name, version, type, license }, null, 2)}\n`);
  copyWithDependencies('pg', root, join(server, 'node_modules'));
  cpSync(join(root, 'assets', 'icon.png'), join(staging, 'icon.png'));
  cpSync(join(root, 'LICENSE'), join(staging, 'LICENSE'));
  writeFileSync(join(staging, 'manifest.json'), `${JSON.stringify(manifest(), null, 2)}\n`);

  const native = filesUnder(staging).filter((file) => file.endsWith('.node'));
  if (native.length > 0) throw new Error(`a native addon would be inside the bundle: ${native.join(', ')}`);

  execFileSync(process.execPath, [MCPB, 'validate', join(staging, 'manifest.json')], { stdio: 'inherit' });
  execFileSync(process.execPath, [MCPB, 'pack', staging, bundle], { stdio: 'inherit' });
  process.stdout.write(`bundle:mcpb: wrote ${bundle}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    build();
  } catch (error) {
    process.stderr.write(`bundle:mcpb: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
