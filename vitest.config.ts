import { availableParallelism } from 'node:os';
import { defaultExclude, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: defaultExclude,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Measured on the 2-core machine (test/http, core and tools): 107 s as vitest's default
    // (one worker there, a fresh module graph per file), 58 s sharing the module graph
    // between the files of a worker, 41 s with two workers. Files wait on child processes
    // and PostgreSQL much of the time, so two workers pay off even on two cores. Each test
    // file cleans up after itself (temporary folders, stubbed env, timers), which sharing needs.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    isolate: false,
  },
});
