/** Types of swap-dist.mjs, for the tests that import it. */

/** Every file under `root`, as paths relative to it (folders are not listed). */
export function filesUnder(root: string): string[];

/** The old build's chunks kept for a running server, listed one a line; the next build removes them. */
export const SUPERSEDED: string;

/**
 * Moves the build in `built` into `target` file by file, awaiting `afterStep` after each
 * step; removes `built`. The old build's chunks stay unless `keepChunks` is false.
 */
export function swapIn(
  built: string,
  target: string,
  options?: { readonly keepChunks?: boolean; readonly afterStep?: () => Promise<void> },
): Promise<void>;
