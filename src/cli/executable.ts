#!/usr/bin/env node
/**
 * The `engram` executable. npm run build bundles it, from tsc's dist/cli/executable.js,
 * into dist/cli/main.js (scripts/bundle-cli.mjs): that bundle is what `engram` runs.
 */

import { main } from './program.js';

// `engram --help | head` closes the pipe early: that is the reader's choice, not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

process.exitCode = await main(process.argv.slice(2));
