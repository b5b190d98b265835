/**
 * A fresh temporary folder per test, removed when the test ends, with config files written
 * into it. Apart from engram.ts, which needs the built CLI: a test that only writes files
 * runs without a build (the unit project, vitest.config.ts).
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

export interface TempDir {
  readonly path: string;
  /** A path inside the folder. */
  file(name: string): string;
  /** Writes `config` as JSON into the folder and returns its path. */
  config(config: unknown, name?: string): string;
}

/** Registers what to undo when the folder's or database's owner is done: the current test by default. */
export type Cleanup = (undo: () => void | Promise<void>) => void;

/** A fresh folder for the current test (or for whoever `cleanup` serves), removed when it finishes. */
export function tempDir(cleanup: Cleanup = onTestFinished): TempDir {
  const path = mkdtempSync(join(tmpdir(), 'engram-test-'));
  cleanup(() => rmSync(path, { recursive: true, force: true }));
  const file = (name: string) => join(path, name);
  return {
    path,
    file,
    config(config, name = 'config.json') {
      writeFileSync(file(name), JSON.stringify(config));
      return file(name);
    },
  };
}
