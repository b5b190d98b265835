#!/usr/bin/env node
/**
 * The `engram` executable. npm run build bundles it, from tsc's dist/cli/executable.js,
 * into dist/cli/main.js and its chunks (scripts/bundle-cli.mjs): that bundle is what
 * `engram` runs. `engram stdio`, which a client starts and waits for, loads its own
 * command alone (stdio-program.ts); any other command line, every command (program.ts).
 */

// `engram --help | head` closes the pipe early: that is the reader's choice, not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const argv = process.argv.slice(2);
const { main } = argv[0] === 'stdio' ? await import('./stdio-program.js') : await import('./program.js');
process.exitCode = await main(argv);
