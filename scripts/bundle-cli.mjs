/**
 * Bundles the `engram` executable, tsc's dist/cli/executable.js, into dist/cli/main.js and
 * a few chunks beside it: node spent most of a start loading some 330 separate ES modules
 * (zod alone is 96 of them, the MCP SDK brings it), each looked up, read, parsed and linked.
 * The bundle takes `engram serve` and `engram stdio` to their first answer in some 0.55x
 * the CPU, and the tests spawn them hundreds of times.
 *
 * It works in the build's folder, given by build.mjs (a fresh one, moved to dist/ once
 * the whole build is done), dist/ by default.
 *
 * The files stay in dist/cli/, where tsc put the modules, so every path a module takes
 * relative to import.meta.url (package.json, spec/, dist/web) still resolves: it does for
 * a module one folder below dist/ alone, and the build fails for any other that takes
 * one (a module in dist/storage/sqlite/, or a dependency, would look in the wrong place). What is
 * loaded on demand (the HTTP stack, the SDK, PostgreSQL, OAuth) stays a chunk of its own
 * behind its import(); so do the two command lines executable.ts chooses between, `engram
 * stdio` alone (stdio-program.ts) and every command (program.ts), what they share in chunks
 * of its own, so that a client starting `engram stdio` loads none of the other commands' code.
 * better-sqlite3 (native) and pg stay in node_modules. The library's
 * entry points (dist/index.js, ...) are tsc's files, not bundled.
 */

import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

/** The build's folder: build.mjs's fresh one (the first argument), else dist/. */
const distDir = resolve(process.argv[2] ?? fileURLToPath(new URL('../dist/', import.meta.url)));
const cliDir = join(distDir, 'cli');

/**
 * Fails the build for a module whose import.meta.url would not resolve as before from
 * dist/cli/. Rolldown's own runtime (a virtual module, id \0...) takes it for createRequire.
 */
const importMetaAtCliDepth = {
  name: 'import-meta-at-cli-depth',
  transform: {
    filter: { code: 'import.meta' },
    handler(_code, id) {
      if (id.startsWith('\0')) return;
      const folder = relative(distDir, dirname(id));
      if (folder === '' || folder.startsWith('..') || folder.includes(sep)) {
        this.error(`${id} uses import.meta, which bundled into dist/cli/ would resolve from there instead`);
      }
    },
  },
};

const bundle = await rolldown({
  input: join(cliDir, 'executable.js'),
  platform: 'node',
  external: [/^node:/, /^better-sqlite3(\/|$)/, /^pg(\/|$)/],
  plugins: [importMetaAtCliDepth],
  checks: { bundlerTimings: false },
});
await bundle.write({
  dir: cliDir,
  format: 'esm',
  entryFileNames: 'main.js',
  chunkFileNames: '[name]-[hash].chunk.js',
  sourcemap: true,
});
await bundle.close();
