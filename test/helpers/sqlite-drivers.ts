/**
 * Which SQLite drivers a test can run here, and why not the others: under Node 20 there is
 * no node:sqlite, and under Node 22 or 24 the better-sqlite3 built for Node 20 does not load
 * (`npm run test:node-sqlite` runs the node driver's tests there). ENGRAM_SQLITE_DRIVER
 * names the one driver a run is about: then the other is left out, and the one named must load.
 */

// @ts-expect-error: a plain .mjs script, without declarations
import { NODE_VERSIONS, nodeBinary } from '../../scripts/node-binaries.mjs';
import { SQLITE_DRIVER_NAMES, type SqliteDriverName, sqliteDriver } from '../../src/storage/sqlite/drivers.js';

/** Why `name` cannot run in this process, or undefined when it can. */
export function driverMissing(name: SqliteDriverName): string | undefined {
  try {
    sqliteDriver(name);
    return undefined;
  } catch (error) {
    const hint =
      name === 'node'
        ? ' (npm run test:node-sqlite runs these tests under Node 22 and 24)'
        : ' (the node driver is tested instead)';
    return `${(error as Error).message}${hint}`;
  }
}

/** The drivers a run is about: ENGRAM_SQLITE_DRIVER's alone when set, else both, each with why it is skipped if it is. */
export function driversUnderTest(): { readonly name: SqliteDriverName; readonly missing: string | undefined }[] {
  const forced = process.env.ENGRAM_SQLITE_DRIVER as SqliteDriverName | undefined;
  if (forced !== undefined) {
    if (!SQLITE_DRIVER_NAMES.includes(forced)) throw new Error(`ENGRAM_SQLITE_DRIVER=${forced} names no driver`);
    // Forced, a driver that does not load fails the run rather than skip it.
    return [{ name: forced, missing: undefined }];
  }
  return SQLITE_DRIVER_NAMES.map((name) => ({ name, missing: driverMissing(name) }));
}

/**
 * A Node that runs the built `engram` with the driver this process lacks, for a file
 * written by one driver and read by the other: a Node 22 from the cache of
 * scripts/node-binaries.mjs for node:sqlite; for better-sqlite3, the Node of
 * ENGRAM_TEST_BETTER_SQLITE3_NODE (test:node-sqlite sets it to the Node 20 it runs on).
 */
export function otherNode(name: SqliteDriverName): { readonly path?: string; readonly missing?: string } {
  if (name === 'better-sqlite3') {
    const path = process.env.ENGRAM_TEST_BETTER_SQLITE3_NODE;
    return path
      ? { path }
      : { missing: 'no Node with better-sqlite3 is named (ENGRAM_TEST_BETTER_SQLITE3_NODE, set by test:node-sqlite)' };
  }
  // The oldest Node the driver supports, installed from the npm registry the first time.
  return { path: nodeBinary(NODE_VERSIONS[0]) };
}
