/** Types of swap-dist.mjs, for the tests that import it. */

/** Every file under `root`, as paths relative to it (folders are not listed). */
export function filesUnder(root: string): string[];

/** How many builds an earlier build's hashed file stays for. */
export const KEEP_BUILDS: number;

/** The earlier builds' hashed files kept, each with the number of builds since its own. */
export const SUPERSEDED: string;

/**
 * Moves the build in `built` into `target` file by file, awaiting `afterStep` after each
 * step; removes `built`. Earlier builds' hashed files stay KEEP_BUILDS builds unless
 * `keepEarlier` is false.
 */
export function swapIn(
  built: string,
  target: string,
  options?: { readonly keepEarlier?: boolean; readonly afterStep?: () => Promise<void> },
): Promise<void>;
